package app

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/idenplane/idenplane/app/httpx"
)

// importCopySource makes realm acme with a password-grant client and a user
// with a password, and returns its full export and the client's secret.
func importCopySource(t *testing.T, s *testServer) (map[string]any, string) {
	t.Helper()
	s.createRealm("acme")
	r := s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli",
		"grantTypes": []string{"password"}})
	mustStatus(t, r, http.StatusCreated)
	secret := r.object(t)["secret"].(string)
	s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "password": "correct horse 1"})
	r = s.admin(http.MethodGet, "/admin/realms/acme/export?includeUsers=true&includeSecrets=true", nil)
	mustStatus(t, r, http.StatusOK)
	return r.object(t), secret
}

// importCopyToken signs alice in to realm by the password grant and returns
// the access token's claims.
func importCopyToken(t *testing.T, s *testServer, realm, secret string) map[string]any {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"correct horse 1"}, "scope": {"openid"}}
	r := s.request(http.MethodPost, "/realms/"+realm+"/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("cli:"+secret)))
	mustStatus(t, r, http.StatusOK)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	r.decode(t, &tok)
	_, claims := jwtParts(t, tok.AccessToken)
	return claims
}

// mustNoDriverText fails when an error body shows what only the server
// should see: SQL, driver or Go runtime text.
func mustNoDriverText(t *testing.T, r *testResponse) {
	t.Helper()
	body := strings.ToLower(string(r.Body))
	for _, leak := range []string{"sql:", "sqlite", "constraint", "unique", ".go:", "panic", "goroutine"} {
		if strings.Contains(body, leak) {
			t.Fatalf("body shows %q: %s", leak, r.Body)
		}
	}
}

// TestImportRenamedExportConflicts: an export whose realm name was changed
// keeps the realm's id, which realm acme holds: a 409 that names acme and
// says how to import a copy, never the driver's text.
func TestImportRenamedExportConflicts(t *testing.T) {
	s := newTestServer(t)
	doc, _ := importCopySource(t, s)
	acmeID := doc["id"].(string)
	doc["name"] = "acme-copy"
	for _, overwrite := range []string{"", "?overwrite=true"} {
		r := s.admin(http.MethodPost, "/admin/realms/import"+overwrite, doc)
		mustError(t, r, http.StatusConflict, "conflict", "id")
		mustNoDriverText(t, r)
		var body httpx.ErrorBody
		r.decode(t, &body)
		if !strings.Contains(body.Description, "realm acme already has id "+acmeID) || !strings.Contains(body.Description, "asCopy=true") {
			t.Fatalf("conflict says %q", body.Description)
		}
	}

	// With a realm id of its own, the resources' kept IDs still clash.
	doc["id"] = uuid.NewString()
	r := s.admin(http.MethodPost, "/admin/realms/import", doc)
	mustStatus(t, r, http.StatusConflict)
	mustNoDriverText(t, r)
	var body httpx.ErrorBody
	r.decode(t, &body)
	if !strings.HasSuffix(body.Field, ".id") || !strings.Contains(body.Description, "asCopy=true") {
		t.Fatalf("resource conflict %s", r.Body)
	}
	if names := s.realmNames(); strings.Join(names, ",") != "acme" {
		t.Fatalf("realms after refused imports: %v", names)
	}
}

// TestImportAsCopy: asCopy=true gives the renamed export's realm and every
// resource in it new IDs; both realms then work side by side.
func TestImportAsCopy(t *testing.T) {
	s := newTestServer(t)
	doc, secret := importCopySource(t, s)
	doc["name"] = "acme-copy"
	mustError(t, s.admin(http.MethodPost, "/admin/realms/import?asCopy=yes", doc), http.StatusBadRequest, "invalid_parameter", "asCopy")
	mustError(t, s.admin(http.MethodPost, "/admin/realms/import?asCopy=true&overwrite=true", doc),
		http.StatusBadRequest, "invalid_parameter", "asCopy")

	r := s.admin(http.MethodPost, "/admin/realms/import?asCopy=true", doc)
	mustStatus(t, r, http.StatusCreated)
	copyRealm := r.object(t)
	if copyRealm["name"] != "acme-copy" || copyRealm["id"] == doc["id"] {
		t.Fatalf("copy %v, from %v", copyRealm["id"], doc["id"])
	}
	// Again: a copy never clashes with the realm, nor with an earlier copy,
	// only with a realm of its name.
	mustError(t, s.admin(http.MethodPost, "/admin/realms/import?asCopy=true", doc), http.StatusConflict, "conflict", "")

	export := func(realm string) map[string]any {
		r := s.admin(http.MethodGet, "/admin/realms/"+realm+"/export?includeUsers=true", nil)
		mustStatus(t, r, http.StatusOK)
		return r.object(t)
	}
	orig, dup := export("acme"), export("acme-copy")
	ids := func(doc map[string]any, list string) []string {
		var out []string
		for _, e := range doc[list].([]any) {
			out = append(out, e.(map[string]any)["id"].(string))
		}
		return out
	}
	for _, list := range []string{"clients", "users", "clientScopes"} {
		a, b := ids(orig, list), ids(dup, list)
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%s: %v and %v", list, a, b)
		}
		for _, id := range b {
			if strings.Contains(strings.Join(a, ","), id) {
				t.Fatalf("%s: the copy kept id %s", list, id)
			}
		}
	}
	// Both realms sign alice in with the same client secret and password.
	for _, realm := range []string{"acme", "acme-copy"} {
		claims := importCopyToken(t, s, realm, secret)
		if !strings.HasSuffix(claims["iss"].(string), "/realms/"+realm) {
			t.Fatalf("%s: token %v", realm, claims)
		}
	}
	if a, b := importCopyToken(t, s, "acme", secret)["sub"], importCopyToken(t, s, "acme-copy", secret)["sub"]; a == b {
		t.Fatalf("alice has the same id %v in both realms", a)
	}
}
