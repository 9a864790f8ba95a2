package orgs_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// passwordTokens signs alice in with the password grant, asking for scope,
// and returns the payloads of the access and ID tokens.
func passwordTokens(t *testing.T, s *apptest.Server, secret, scope string) (access, id map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"correct horse 1"}, "scope": {scope}}
	basic := base64.StdEncoding.EncodeToString([]byte("web:" + secret))
	r := s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded", "Authorization: Basic "+basic)
	apptest.MustStatus(t, r, http.StatusOK)
	body := r.Object(t)
	return jwtPayload(t, body["access_token"].(string)), jwtPayload(t, body["id_token"].(string))
}

func jwtPayload(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// passwordClient makes the confidential client web with the password
// grant and the user alice, and returns the client's secret and alice's ID.
func passwordClient(t *testing.T, s *apptest.Server) (secret, alice string) {
	t.Helper()
	r := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web",
		"redirectUris": []string{"https://web.test/cb"}, "grantTypes": []string{"authorization_code", "password"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	secret = r.Object(t)["secret"].(string)
	alice = s.CreateUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "password": "correct horse 1"})["id"].(string)
	return secret, alice
}

func TestOrganizationClaim(t *testing.T) {
	s := newServer(t)
	secret, alice := passwordClient(t, s)
	acme := createOrg(s, map[string]any{"slug": "acme", "name": "Acme"})
	bank := createOrg(s, map[string]any{"slug": "bank", "name": "Bank"})
	createOrg(s, map[string]any{"slug": "off", "name": "Off", "enabled": false})
	addMember(s, "acme", alice, "owner")
	addMember(s, "bank", alice, "member")
	addMember(s, "off", alice, "admin")

	access, id := passwordTokens(t, s, secret, "openid")
	if _, ok := access["organization"]; ok {
		t.Errorf("claim without the scope: %v", access["organization"])
	}
	if _, ok := id["organization"]; ok {
		t.Errorf("ID token claim without the scope: %v", id["organization"])
	}
	want := map[string]any{
		"acme": map[string]any{"id": acme.ID, "role": "owner"},
		"bank": map[string]any{"id": bank.ID, "role": "member"},
	}
	access, id = passwordTokens(t, s, secret, "openid organization")
	if !reflect.DeepEqual(access["organization"], want) || !reflect.DeepEqual(id["organization"], want) {
		t.Errorf("claims %v / %v, want %v", access["organization"], id["organization"], want)
	}
	if !strings.Contains(" "+access["scope"].(string)+" ", " organization ") {
		t.Errorf("scope %q", access["scope"])
	}
	// Without memberships, no claim.
	apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/acme", nil), http.StatusNoContent)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/bank", nil), http.StatusNoContent)
	if access, _ = passwordTokens(t, s, secret, "openid organization"); access["organization"] != nil {
		t.Errorf("claim of a user in no enabled organization: %v", access["organization"])
	}
}
