package saml_test

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	crewsaml "github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

const spsPath = "/admin/realms/acme/saml-service-providers"

func TestServiceProviderCRUD(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"adminEventsEnabled": true}), http.StatusOK)

	created := s.Admin(http.MethodPost, spsPath, map[string]any{"entityId": "https://sp.test/metadata", "name": "Wiki",
		"acsUrl": "https://sp.test/acs"})
	apptest.MustStatus(t, created, http.StatusCreated)
	sp := created.Object(t)
	id, _ := sp["id"].(string)
	if loc := created.Header.Get("Location"); loc != spsPath+"/"+id {
		t.Fatalf("Location %q", loc)
	}
	want := map[string]any{"id": id, "entityId": "https://sp.test/metadata", "name": "Wiki", "enabled": true,
		"acsUrl": "https://sp.test/acs", "sloUrl": "", "sloBinding": "HTTP-POST", "certificate": "", "requestsSigned": false,
		"encryptionCertificate": "", "encryptAssertions": false, "nameIdFormat": "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
		"signAssertions": true, "signResponses": true, "attributeStatements": map[string]any{}, "idpInitiatedSso": false}
	if !reflect.DeepEqual(sp, want) {
		t.Fatalf("created %v\nwant %v", sp, want)
	}
	get := s.Admin(http.MethodGet, spsPath+"/"+id, nil)
	apptest.MustStatus(t, get, http.StatusOK)
	if !reflect.DeepEqual(get.Object(t), want) {
		t.Fatalf("read back %s", get.Body)
	}

	enc := newTestKeyPair(t, "sp enc")
	upd := s.Admin(http.MethodPut, spsPath+"/"+id, map[string]any{"name": "Team wiki", "nameIdFormat": "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", "encryptionCertificate": enc.pem, "encryptAssertions": true,
		"attributeStatements": map[string]any{"mail": "email", "memberOf": "groups", "team": "attribute:team",
			"appRoles": "clientRoles:web"}, "sloUrl": "http://localhost:8080/slo"})
	apptest.MustStatus(t, upd, http.StatusOK)
	got := upd.Object(t)
	if got["name"] != "Team wiki" || got["encryptAssertions"] != true || got["acsUrl"] != "https://sp.test/acs" ||
		len(got["attributeStatements"].(map[string]any)) != 4 || got["sloUrl"] != "http://localhost:8080/slo" {
		t.Fatalf("updated %s", upd.Body)
	}
	if got := s.Admin(http.MethodGet, spsPath+"/"+id, nil).Object(t); !reflect.DeepEqual(got, upd.Object(t)) {
		t.Fatalf("update not stored: %v", got)
	}

	list := s.Admin(http.MethodGet, spsPath, nil)
	apptest.MustStatus(t, list, http.StatusOK)
	var all []map[string]any
	list.Decode(t, &all)
	if len(all) != 1 || all[0]["id"] != id {
		t.Fatalf("list %s", list.Body)
	}

	apptest.MustStatus(t, s.Admin(http.MethodDelete, spsPath+"/"+id, nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodGet, spsPath+"/"+id, nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodDelete, spsPath+"/"+id, nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodGet, spsPath+"/not-a-uuid", nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/saml-service-providers", nil), http.StatusNotFound, "not_found", "")

	// Every write is an admin event of the SP.
	events := s.Admin(http.MethodGet, "/admin/realms/acme/admin-events", nil)
	apptest.MustStatus(t, events, http.StatusOK)
	var evs []map[string]any
	events.Decode(t, &evs)
	ops := map[string]bool{}
	for _, e := range evs {
		if e["resourceType"] == "SAML_SERVICE_PROVIDER" {
			ops[e["operationType"].(string)] = true
		}
	}
	if !ops["CREATE"] || !ops["UPDATE"] || !ops["DELETE"] {
		t.Fatalf("admin events of the SP: %v in %s", ops, events.Body)
	}
}

func TestServiceProviderValidation(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	cert := newTestKeyPair(t, "sp")
	apptest.MustStatus(t, s.Admin(http.MethodPost, spsPath, map[string]any{"entityId": "taken", "name": "Taken",
		"acsUrl": "https://taken.test/acs"}), http.StatusCreated)
	base := func(over map[string]any) map[string]any {
		b := map[string]any{"entityId": "https://sp.test", "name": "SP", "acsUrl": "https://sp.test/acs"}
		for k, v := range over {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
		field  string
	}{
		{"no entityId", base(map[string]any{"entityId": nil}), 400, "invalid_field", "entityId"},
		{"no name", base(map[string]any{"name": nil}), 400, "invalid_field", "name"},
		{"blank name", base(map[string]any{"name": "  "}), 400, "invalid_field", "name"},
		{"no acsUrl", base(map[string]any{"acsUrl": nil}), 400, "invalid_field", "acsUrl"},
		{"relative acsUrl", base(map[string]any{"acsUrl": "/acs"}), 400, "invalid_field", "acsUrl"},
		{"plain http acsUrl", base(map[string]any{"acsUrl": "http://sp.test/acs"}), 400, "invalid_field", "acsUrl"},
		{"http on a host named like loopback", base(map[string]any{"acsUrl": "http://localhost.evil.test/acs"}), 400, "invalid_field", "acsUrl"},
		{"javascript acsUrl", base(map[string]any{"acsUrl": "javascript:alert(1)"}), 400, "invalid_field", "acsUrl"},
		{"acsUrl with a fragment", base(map[string]any{"acsUrl": "https://sp.test/acs#x"}), 400, "invalid_field", "acsUrl"},
		{"ftp sloUrl", base(map[string]any{"sloUrl": "ftp://sp.test/slo"}), 400, "invalid_field", "sloUrl"},
		{"certificate not PEM", base(map[string]any{"certificate": "MIIB"}), 400, "invalid_field", "certificate"},
		{"certificate a key", base(map[string]any{"certificate": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"}), 400, "invalid_field", "certificate"},
		{"encryption without a certificate", base(map[string]any{"encryptAssertions": true}), 400, "invalid_field", "encryptAssertions"},
		{"unknown NameID format", base(map[string]any{"nameIdFormat": "urn:x"}), 400, "invalid_field", "nameIdFormat"},
		{"unknown attribute source", base(map[string]any{"attributeStatements": map[string]any{"mail": "password"}}), 400, "invalid_field", "attributeStatements.mail"},
		{"attribute name with markup", base(map[string]any{"attributeStatements": map[string]any{"<x>": "email"}}), 400, "invalid_field", "attributeStatements"},
		{"entityId taken", base(map[string]any{"entityId": "taken"}), 409, "conflict", "entityId"},
		{"unknown field", base(map[string]any{"colour": "red"}), 400, "unknown_field", "colour"},
		{"metadata with a DOCTYPE", base(map[string]any{"metadata": `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="&a;"/>`}), 400, "invalid_field", "metadata"},
		{"metadata not XML", base(map[string]any{"metadata": "<EntityDescriptor"}), 400, "invalid_field", "metadata"},
		{"metadata of an IdP", base(map[string]any{"metadata": `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></EntityDescriptor>`}), 400, "invalid_field", "metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, spsPath, tc.body), tc.status, tc.code, tc.field)
		})
	}
	for _, acs := range []string{"http://localhost:8080/acs", "http://127.0.0.1/acs", "http://[::1]:9/acs"} {
		r := s.Admin(http.MethodPost, spsPath, base(map[string]any{"entityId": acs, "acsUrl": acs, "certificate": cert.pem}))
		apptest.MustStatus(t, r, http.StatusCreated)
	}
	var all []map[string]any
	s.Admin(http.MethodGet, spsPath, nil).Decode(t, &all)
	if len(all) != 4 {
		t.Fatalf("%d SPs after the refusals, want 4", len(all))
	}
	// An update is checked as a creation is.
	id := all[0]["id"].(string)
	apptest.MustError(t, s.Admin(http.MethodPut, spsPath+"/"+id, map[string]any{"acsUrl": "http://sp.test/acs"}), 400, "invalid_field", "acsUrl")
	apptest.MustError(t, s.Admin(http.MethodPut, spsPath+"/"+id, map[string]any{"entityId": "taken"}), 409, "conflict", "entityId")
	apptest.MustError(t, s.Admin(http.MethodPut, spsPath+"/"+id, map[string]any{"entityId": nil}), 400, "invalid_field", "entityId")
}

// spMetadata is the metadata crewjam/saml's service provider publishes.
// It publishes its one certificate for signing and for encryption.
func spMetadata(t *testing.T, base string, signing *testKeyPair) string {
	t.Helper()
	root, _ := url.Parse(base)
	sp := crewsaml.ServiceProvider{EntityID: base + "/saml/metadata", Key: signing.key, Certificate: signing.cert,
		MetadataURL: *root.JoinPath("saml/metadata"), AcsURL: *root.JoinPath("saml/acs"), SloURL: *root.JoinPath("saml/slo"),
		AuthnNameIDFormat: crewsaml.PersistentNameIDFormat, SignatureMethod: dsig.RSASHA256SignatureMethod,
		LogoutBindings: []string{crewsaml.HTTPRedirectBinding}}
	b, err := xml.Marshal(sp.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServiceProviderFromMetadata(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	sign := newTestKeyPair(t, "sp")
	md := spMetadata(t, "https://sp.test", sign)
	r := s.Admin(http.MethodPost, spsPath, map[string]any{"metadata": md, "name": "From metadata"})
	apptest.MustStatus(t, r, http.StatusCreated)
	got := r.Object(t)
	if got["entityId"] != "https://sp.test/saml/metadata" || got["acsUrl"] != "https://sp.test/saml/acs" ||
		got["sloUrl"] != "https://sp.test/saml/slo" || got["name"] != "From metadata" ||
		got["nameIdFormat"] != string(crewsaml.PersistentNameIDFormat) {
		t.Fatalf("from metadata: %s", r.Body)
	}
	if strings.TrimSpace(got["certificate"].(string)) != strings.TrimSpace(sign.pem) {
		t.Fatalf("certificate %q, want the SP's", got["certificate"])
	}

	// An update from new metadata takes its keys; a field of the body wins.
	sign2 := newTestKeyPair(t, "sp 2")
	md2 := spMetadata(t, "https://sp.test", sign2)
	u := s.Admin(http.MethodPut, spsPath+"/"+got["id"].(string), map[string]any{"metadata": md2, "encryptAssertions": true,
		"acsUrl": "https://sp.test/other-acs"})
	apptest.MustStatus(t, u, http.StatusOK)
	upd := u.Object(t)
	if strings.TrimSpace(upd["certificate"].(string)) != strings.TrimSpace(sign2.pem) ||
		strings.TrimSpace(upd["encryptionCertificate"].(string)) != strings.TrimSpace(sign2.pem) || upd["encryptAssertions"] != true || upd["acsUrl"] != "https://sp.test/other-acs" {
		t.Fatalf("after the update from metadata: %s", u.Body)
	}
}

func TestServiceProvidersInRealmExport(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	cert := newTestKeyPair(t, "sp")
	apptest.MustStatus(t, s.Admin(http.MethodPost, spsPath, map[string]any{"entityId": "https://sp.test", "name": "SP",
		"acsUrl": "https://sp.test/acs", "certificate": cert.pem, "attributeStatements": map[string]any{"mail": "email"}}),
		http.StatusCreated)
	export := s.Admin(http.MethodGet, "/admin/realms/acme/export", nil)
	apptest.MustStatus(t, export, http.StatusOK)
	doc := export.Object(t)
	sps, _ := doc["samlServiceProviders"].([]any)
	if len(sps) != 1 || sps[0].(map[string]any)["entityId"] != "https://sp.test" || sps[0].(map[string]any)["createdTimestamp"] == nil {
		t.Fatalf("export's samlServiceProviders: %v", doc["samlServiceProviders"])
	}
	doc["name"] = "copy"
	imp := s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", doc)
	apptest.MustStatus(t, imp, http.StatusCreated)
	var copied []map[string]any
	s.Admin(http.MethodGet, "/admin/realms/copy/saml-service-providers", nil).Decode(t, &copied)
	orig := sps[0].(map[string]any)
	if len(copied) != 1 || copied[0]["id"] == orig["id"] || copied[0]["certificate"] != orig["certificate"] ||
		!reflect.DeepEqual(copied[0]["attributeStatements"], orig["attributeStatements"]) {
		t.Fatalf("imported %v, from %v", copied, orig)
	}

	// An import is checked as the admin API checks.
	bad := map[string]any{"formatVersion": 1, "name": "bad", "samlServiceProviders": []any{
		map[string]any{"entityId": "x", "name": "X", "acsUrl": "http://sp.test/acs"}}}
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/import", bad), 400, "invalid_field", "samlServiceProviders[0].acsUrl")
	twice := map[string]any{"formatVersion": 1, "name": "bad", "samlServiceProviders": []any{
		map[string]any{"entityId": "x", "name": "X", "acsUrl": "https://sp.test/acs"},
		map[string]any{"entityId": "x", "name": "Y", "acsUrl": "https://sp.test/acs"}}}
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/import", twice), 409, "conflict", "samlServiceProviders[1].entityId")
}

func TestSettings(t *testing.T) {
	e := newIdP(t)
	const path = "/admin/realms/acme/saml/settings"
	r := e.Admin(http.MethodGet, path, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if got := r.Object(t); !reflect.DeepEqual(got, map[string]any{"wantAuthnRequestsSigned": false}) {
		t.Fatalf("default settings %v", got)
	}
	unsigned := newSP(t, e, spOptions{})
	apptest.MustError(t, e.Admin(http.MethodPut, path, map[string]any{"wantAuthnRequestsSigned": "yes"}), 400, "invalid_field", "wantAuthnRequestsSigned")
	apptest.MustStatus(t, e.Admin(http.MethodPut, path, map[string]any{"wantAuthnRequestsSigned": true}), http.StatusOK)
	if got := e.Admin(http.MethodGet, path, nil).Object(t); got["wantAuthnRequestsSigned"] != true {
		t.Fatalf("settings after PUT %v", got)
	}
	md := e.Request(http.MethodGet, "/realms/acme/protocol/saml/descriptor", nil)
	if !strings.Contains(string(md.Body), `WantAuthnRequestsSigned="true"`) {
		t.Fatalf("metadata does not say it wants signed requests: %s", md.Body)
	}
	// An SP without a certificate can no longer sign anyone in.
	mustRefusedPage(t, e.Request(http.MethodGet, unsigned.redirect(t, unsigned.authnRequest(t), "", ""), nil), 400, "wants signed requests")

	// The settings travel with the realm.
	export := e.Admin(http.MethodGet, "/admin/realms/acme/export", nil).Object(t)
	if s, _ := export["samlSettings"].(map[string]any); s["wantAuthnRequestsSigned"] != true {
		t.Fatalf("export's samlSettings %v", export["samlSettings"])
	}
	export["name"] = "copy"
	apptest.MustStatus(t, e.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", export), http.StatusCreated)
	if got := e.Admin(http.MethodGet, "/admin/realms/copy/saml/settings", nil).Object(t); got["wantAuthnRequestsSigned"] != true {
		t.Fatalf("imported settings %v", got)
	}
}

// An SP certificate that cannot be read is refused with the reason.
func TestServiceProviderCertificateUnreadable(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	for _, field := range []string{"certificate", "encryptionCertificate"} {
		r := s.Admin(http.MethodPost, spsPath, map[string]any{"entityId": "https://sp.test/metadata", "name": "Wiki",
			"acsUrl": "https://sp.test/acs", field: apptest.NegativeSerialCertificate(t)})
		apptest.MustError(t, r, http.StatusBadRequest, "invalid_field", field)
		if desc, _ := r.Object(t)["error_description"].(string); !strings.Contains(desc, "x509: negative serial number") {
			t.Fatalf("%s refused with %q, want the parse error", field, desc)
		}
	}
}
