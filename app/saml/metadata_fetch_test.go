package saml_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

// An SP is created from the address of its metadata, which the server
// fetches through its outbound guard: a loopback address is refused
// unless allowed, a failed fetch and a document that is no SP's are
// messages at metadataUrl or metadata, and the metadata with the
// document itself besides is refused.
func TestServiceProviderFromMetadataURL(t *testing.T) {
	signing := newTestKeyPair(t, "sp")
	var doc string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/saml/metadata":
			w.Header().Set("Content-Type", "application/samlmetadata+xml")
			_, _ = w.Write([]byte(doc))
		case "/idp":
			_, _ = w.Write([]byte(`<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(upstream.Close)
	doc = spMetadata(t, upstream.URL, signing)

	guarded := realapp.New(t)
	guarded.CreateRealm("acme")
	r := guarded.Admin(http.MethodPost, spsPath, map[string]any{"metadataUrl": upstream.URL + "/saml/metadata"})
	apptest.MustError(t, r, 400, "invalid_field", "metadataUrl")
	if !strings.Contains(string(r.Body), "non-public") && !strings.Contains(string(r.Body), "not allowed") {
		t.Errorf("the guard's refusal does not say why: %s", r.Body)
	}

	s := realapp.New(t, func(c *app.Config) { c.OutboundAllowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	s.CreateRealm("acme")
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"not found", map[string]any{"metadataUrl": upstream.URL + "/missing"}, "metadataUrl"},
		{"no URL", map[string]any{"metadataUrl": "sp.example/metadata"}, "metadataUrl"},
		{"no SP in it", map[string]any{"metadataUrl": upstream.URL + "/idp"}, "metadata"},
		{"both", map[string]any{"metadataUrl": upstream.URL + "/saml/metadata", "metadata": doc}, "metadataUrl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, spsPath, tc.body), 400, "invalid_field", tc.field)
		})
	}
	r = s.Admin(http.MethodPost, spsPath, map[string]any{"metadataUrl": upstream.URL + "/saml/metadata", "name": "Wiki"})
	apptest.MustStatus(t, r, http.StatusCreated)
	sp := r.Object(t)
	if sp["entityId"] != upstream.URL+"/saml/metadata" || sp["acsUrl"] != upstream.URL+"/saml/acs" || sp["certificate"] == "" {
		t.Fatalf("the SP made from the fetched metadata: %v", sp)
	}
}
