package attributes_test

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

func accessClaims(t *testing.T, s *apptest.Server, secret string) map[string]any {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"correct horse 1"}, "scope": {"openid"}}
	r := s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("web:"+secret)))
	apptest.MustStatus(t, r, http.StatusOK)
	parts := strings.Split(r.Object(t)["access_token"].(string), ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(b, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// The custom attributes mapper puts the attributes marked inTokens in the
// token, typed; others, and those removed from the schema, stay out.
func TestAttributeClaims(t *testing.T) {
	s := newServer(t)
	r := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web",
		"redirectUris": []string{"https://web.test/cb"}, "grantTypes": []string{"authorization_code", "password"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	secret := r.Object(t)["secret"].(string)
	id := s.CreateUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "password": "correct horse 1"})["id"].(string)
	age := create(s, map[string]any{"name": "age", "type": "number", "inTokens": true})
	create(s, map[string]any{"name": "staff", "type": "boolean", "inTokens": true})
	create(s, map[string]any{"name": "langs", "type": "string", "multivalued": true, "inTokens": true})
	create(s, map[string]any{"name": "secret", "type": "string"})
	create(s, map[string]any{"name": "sub", "type": "string", "inTokens": true})
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme/users/"+id+"/attributes", map[string]any{
		"age": 42, "staff": true, "langs": []string{"en", "fr"}, "secret": "s3", "sub": "forged"}), http.StatusOK)

	if c := accessClaims(t, s, secret); c["age"] != nil {
		t.Errorf("a claim without the mapper: %v", c["age"])
	}
	r = s.Admin(http.MethodGet, "/admin/realms/acme/client-scopes", nil)
	var scopes []struct{ ID, Name string }
	r.Decode(t, &scopes)
	var profile string
	for _, sc := range scopes {
		if sc.Name == "profile" {
			profile = sc.ID
		}
	}
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/client-scopes/"+profile+"/protocol-mappers",
		map[string]any{"name": "custom attributes", "mapperType": "idenplane-custom-attributes-mapper"}), http.StatusCreated)

	c := accessClaims(t, s, secret)
	got := map[string]any{"age": c["age"], "staff": c["staff"], "langs": c["langs"], "secret": c["secret"]}
	want := map[string]any{"age": 42.0, "staff": true, "langs": []any{"en", "fr"}, "secret": nil}
	if !reflect.DeepEqual(got, want) || c["sub"] != id {
		t.Errorf("claims %v (sub %v), want %v", got, c["sub"], want)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, attrsPath+"/"+age.ID, nil), http.StatusNoContent)
	if c := accessClaims(t, s, secret); c["age"] != nil || c["staff"] != true {
		t.Errorf("after removing age from the schema: age %v staff %v", c["age"], c["staff"])
	}
}
