package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Admin JSON bodies: each create endpoint's body, decoded and validated
// through the router. Invariants: a 2xx or a 4xx in the API's error shape,
// never a 5xx; after a 4xx nothing was written; what a 2xx created can be
// read back where its Location says, and used.

// adminFuzzHeaders are an admin request's: the API key and a JSON body.
var adminFuzzHeaders = http.Header{"Content-Type": {"application/json"}, "X-Admin-Api-Key": {testAPIKey}}

// fuzzAdminBody registers seeds and fuzzes the body of POST path. created,
// when not nil, checks what a 2xx made (and removes it, so that the
// database stays small and names stay free).
func fuzzAdminBody(f *testing.F, e *fuzzEnv, path string, seeds []string, created func(t *testing.T, s *testServer, r *testResponse)) {
	f.Helper()
	for _, seed := range seeds {
		f.Add(seed)
	}
	// Control: the observer sees the server's commits.
	before := e.dataVersion(f)
	mustStatus(f, e.admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "observed"}), http.StatusCreated)
	mustStatus(f, e.admin(http.MethodDelete, "/admin/realms/acme/roles/observed", nil), http.StatusNoContent)
	if e.dataVersion(f) == before {
		f.Fatal("the database's data_version did not change on a write")
	}
	f.Fuzz(func(t *testing.T, body string) {
		s := e.on(t)
		before := e.dataVersion(t)
		r := s.send(http.MethodPost, path, strings.NewReader(body), adminFuzzHeaders)
		e.fuzzNoServerError(t, "POST "+path, r)
		if r.Status >= 300 {
			fuzzMustAPIError(t, "POST "+path, r)
			if after := e.dataVersion(t); after != before {
				t.Fatalf("POST %s answered %d but wrote to the database: %s", path, r.Status, r.Body)
			}
			return
		}
		if created != nil {
			created(t, s, r)
		}
	})
}

// adminFuzzGet fetches path as the admin and fails unless it answers 200.
func adminFuzzGet(t *testing.T, e *fuzzEnv, s *testServer, path string) *testResponse {
	t.Helper()
	r := s.send(http.MethodGet, path, nil, adminFuzzHeaders)
	e.fuzzNoServerError(t, "GET "+path, r)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s answered %d: %s", path, r.Status, r.Body)
	}
	return r
}

// adminFuzzLocation reads back what a 2xx created at its Location, and
// deletes it there.
func adminFuzzLocation(e *fuzzEnv) func(t *testing.T, s *testServer, r *testResponse) {
	return func(t *testing.T, s *testServer, r *testResponse) {
		t.Helper()
		loc := r.Header.Get("Location")
		path, ok := strings.CutPrefix(loc, "http://localhost:3000")
		if !ok {
			t.Fatalf("created, with Location %q", loc)
		}
		got := adminFuzzGet(t, e, s, path)
		var want, stored map[string]any
		if json.Unmarshal(r.Body, &want) != nil || json.Unmarshal(got.Body, &stored) != nil || want["id"] != stored["id"] {
			t.Fatalf("created %s, but its Location %q shows %s", r.Body, loc, got.Body)
		}
		if d := s.send(http.MethodDelete, path, nil, adminFuzzHeaders); d.Status/100 != 2 {
			t.Fatalf("DELETE %s answered %d: %s", path, d.Status, d.Body)
		}
	}
}

// FuzzAdminCreateRealm fuzzes POST /admin/realms. A realm made is read
// back, exported, its discovery served, then deleted.
func FuzzAdminCreateRealm(f *testing.F) {
	e := newFuzzEnv(f)
	full, err := json.Marshal(allRealmFields("full"))
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		`{"name":"r1"}`,
		string(full),
		`{"name":"r2","displayName":"R\u202eTwo","enabled":true,"accessTokenLifespan":0}`,
		`{"name":"r3","smtpHost":"mail.example.test\u0000x","smtpPort":70000}`,
		`{"name":"r4","theme":{"primaryColor":"red;}","logoUrl":"javascript:alert(1)"}}`,
		`{"name":"r5","enabledEventTypes":["LOGIN","NOPE"],"emailProvider":"sendgrid","emailProviderConfig":{"apiKey":1}}`,
		`{"name":"R6"}`, `{"name":"acme"}`, `{"name":"admin"}`, `{"name":"a/b"}`, `{"Name":"r7"}`,
		`{"name":"r8","passwordMinLength":-1,"passwordHistoryCount":1e9}`,
		`{"name":"r9"} {}`, `[]`, `{"name":null}`, `{"name":"r10","loginTheme":"../../etc"}`,
	}
	fuzzAdminBody(f, e, "/admin/realms", seeds, func(t *testing.T, s *testServer, r *testResponse) {
		var realm map[string]any
		if err := json.Unmarshal(r.Body, &realm); err != nil {
			t.Fatalf("created realm: %s", r.Body)
		}
		name, _ := realm["name"].(string)
		path := "/admin/realms/" + url.PathEscape(name)
		adminFuzzGet(t, e, s, path)
		adminFuzzGet(t, e, s, path+"/export?includeUsers=true")
		if realm["enabled"] == true {
			r := s.send(http.MethodGet, "/realms/"+url.PathEscape(name)+"/.well-known/openid-configuration", nil, nil)
			e.fuzzNoServerError(t, "discovery", r)
			if r.Status != http.StatusOK {
				t.Fatalf("discovery of realm %q answered %d: %s", name, r.Status, r.Body)
			}
		}
		if d := s.send(http.MethodDelete, path, nil, adminFuzzHeaders); d.Status/100 != 2 {
			t.Fatalf("DELETE %s answered %d: %s", path, d.Status, d.Body)
		}
	})
}

// FuzzAdminCreateUser fuzzes POST .../users.
func FuzzAdminCreateUser(f *testing.F) {
	e := newFuzzEnv(f)
	seeds := []string{
		`{"username":"bob"}`,
		`{"username":"carol","email":"carol@example.test","firstName":"Carol","lastName":"C","enabled":false,"emailVerified":true,"requirePasswordReset":true}`,
		`{"username":"dave","password":"correct horse battery"}`,
		`{"username":"erin","password":""}`,
		`{"username":" Frank ","email":"Frank <frank@example.test>"}`,
		`{"username":"g\u202eh"}`, `{"username":"x"}`, `{"username":"a b"}`, `{"username":"\u0000\u0001"}`,
		`{"username":"ivy","email":"ivy@example.test","attributes":{}}`,
		`{"username":"jo","email":"j@[127.0.0.1]"}`, `{"username":"kim","firstName":1}`,
		`{"username":"lee"`, `{"username":"MAX"}`, `{"username":"` + strings.Repeat("n", 300) + `"}`,
	}
	fuzzAdminBody(f, e, "/admin/realms/acme/users", seeds, adminFuzzLocation(e))
}

// FuzzAdminCreateClient fuzzes POST .../clients. A confidential client
// with the client-credentials grant is used once, for a token.
func FuzzAdminCreateClient(f *testing.F) {
	e := newFuzzEnv(f)
	full, err := json.Marshal(clientsTestFull())
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		`{"clientId":"c1"}`,
		string(full),
		`{"clientId":"c2","grantTypes":["client_credentials"],"webOrigins":["+"]}`,
		`{"clientId":"c3","clientType":"PUBLIC","grantTypes":["client_credentials"]}`,
		`{"clientId":"c4","redirectUris":["javascript:alert(1)","https://u:p@x.test/","https://x.test/#f","x:y","https://x.test;a/"]}`,
		`{"clientId":"c5","webOrigins":["*","https://x.test/path","HTTPS://X.TEST:0"]}`,
		`{"clientId":"c6","backchannelLogoutUri":"http://[::1]:70000/x"}`,
		`{"clientId":"c7","redirectUris":["https://x.test/cb","https://x.test/cb"],"grantTypes":["implicit"]}`,
		`{"clientId":"c 8"}`, `{"clientId":"c9","secret":"mine"}`, `{"clientId":"c10","redirectUris":"https://x.test"}`,
	}
	fuzzAdminBody(f, e, "/admin/realms/acme/clients", seeds, func(t *testing.T, s *testServer, r *testResponse) {
		var c map[string]any
		if err := json.Unmarshal(r.Body, &c); err != nil {
			t.Fatalf("created client: %s", r.Body)
		}
		if secret, _ := c["secret"].(string); secret != "" && strings.Contains(string(r.Body), `"client_credentials"`) {
			form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c["clientId"].(string)}, "client_secret": {secret}}
			g := s.send(http.MethodPost, "/realms/acme/protocol/openid-connect/token", strings.NewReader(form.Encode()),
				http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
			e.fuzzNoServerError(t, "client credentials", g)
			if g.Status != http.StatusOK && c["enabled"] != false {
				t.Fatalf("the client created cannot get a token: %d %s", g.Status, g.Body)
			}
		}
		adminFuzzLocation(e)(t, s, r)
	})
}

// FuzzAdminCreateRole fuzzes POST .../roles.
func FuzzAdminCreateRole(f *testing.F) {
	e := newFuzzEnv(f)
	seeds := []string{
		`{"name":"reader"}`, `{"name":"writer","description":"May write"}`, `{"name":"a/b"}`, `{"name":"a?b#c"}`,
		`{"name":"%2F"}`, `{"name":" "}`, `{"name":"x\u202ey"}`, `{"name":"offline_access"}`, `{"name":"R","composite":true}`,
		`{"name":".."}`, `{"description":"no name"}`,
	}
	fuzzAdminBody(f, e, "/admin/realms/acme/roles", seeds, adminFuzzLocation(e))
}

// FuzzAdminCreateGroup fuzzes POST .../groups.
func FuzzAdminCreateGroup(f *testing.F) {
	e := newFuzzEnv(f)
	seeds := []string{
		`{"name":"staff"}`, `{"name":"ops","description":"Operations"}`, `{"name":"a/b"}`, `{"name":"  "}`,
		`{"name":"x","parentId":"00000000-0000-0000-0000-000000000000"}`, `{"name":"y","id":"not-a-uuid"}`,
		`{"name":"z\u0007"}`, `{"name":"..","description":null}`,
	}
	fuzzAdminBody(f, e, "/admin/realms/acme/groups", seeds, adminFuzzLocation(e))
}

// FuzzAdminCreateScope fuzzes POST .../client-scopes, mappers included.
// A scope made is offered in discovery, which must still answer.
func FuzzAdminCreateScope(f *testing.F) {
	e := newFuzzEnv(f)
	seeds := []string{
		`{"name":"tier"}`,
		`{"name":"billing","description":"Billing","protocol":"openid-connect","protocolMappers":[{"name":"tier","mapperType":"oidc-hardcoded-claim-mapper","config":{"claim.name":"tier","claim.value":"gold","jsonType.label":"String","access.token.claim":"true"}}]}`,
		`{"name":"aud","protocolMappers":[{"name":"aud","mapperType":"oidc-audience-mapper","protocol":"openid-connect","config":{"included.custom.audience":"api"}}]}`,
		`{"name":"roles2","protocolMappers":[{"name":"r","mapperType":"oidc-usermodel-realm-role-mapper","config":{"claim.name":"realm_access.roles","multivalued":"true"}}]}`,
		`{"name":"attr","protocolMappers":[{"name":"a","mapperType":"oidc-usermodel-attribute-mapper","config":{"user.attribute":"x","claim.name":"a..b","jsonType.label":"long"}}]}`,
		`{"name":"<script>"}`, `{"name":"a b"}`, `{"name":"saml_x","protocol":"saml"}`, `{"name":"openid"}`,
		`{"name":"x","protocolMappers":[{"name":"n","mapperType":"oidc-script-mapper"}]}`,
		`{"name":"y","protocolMappers":{}}`,
	}
	fuzzAdminBody(f, e, "/admin/realms/acme/client-scopes", seeds, func(t *testing.T, s *testServer, r *testResponse) {
		d := s.send(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil, nil)
		e.fuzzNoServerError(t, "discovery", d)
		if d.Status != http.StatusOK {
			t.Fatalf("discovery answered %d after a scope was made: %s", d.Status, d.Body)
		}
		adminFuzzLocation(e)(t, s, r)
	})
}

// FuzzAdminCreateMapper fuzzes POST .../protocol-mappers on a scope that
// client app gets by default, then asks for a token and userinfo: a mapper
// the API takes must not break the tokens it shapes.
func FuzzAdminCreateMapper(f *testing.F) {
	e := &tokenFuzzEnv{fuzzEnv: newFuzzEnv(f)}
	r := e.admin(http.MethodPost, "/admin/realms/acme/client-scopes", map[string]any{"name": "extra"})
	mustStatus(f, r, http.StatusCreated)
	scopeID := r.object(f)["id"].(string)
	e.secret = e.client(f, map[string]any{"clientId": "app", "grantTypes": []string{"client_credentials"}})
	mustStatus(f, e.admin(http.MethodPost, "/admin/realms/acme/clients/app/default-client-scopes",
		map[string]any{"clientScopeId": scopeID}), http.StatusCreated)
	seeds := []string{
		`{"name":"tier","mapperType":"oidc-hardcoded-claim-mapper","config":{"claim.name":"tier","claim.value":"gold","jsonType.label":"String","access.token.claim":"true","userinfo.token.claim":"true"}}`,
		`{"name":"n","mapperType":"oidc-hardcoded-claim-mapper","config":{"claim.name":"a.b.c","claim.value":"1","jsonType.label":"int"}}`,
		`{"name":"n","mapperType":"oidc-hardcoded-claim-mapper","config":{"claim.name":"sub","claim.value":"root"}}`,
		`{"name":"n","mapperType":"oidc-hardcoded-claim-mapper","config":{"claim.name":"x","claim.value":"{","jsonType.label":"JSON"}}`,
		`{"name":"u","mapperType":"oidc-usermodel-property-mapper","config":{"user.attribute":"email","claim.name":"mail"}}`,
		`{"name":"r","mapperType":"oidc-usermodel-client-role-mapper","config":{"usermodel.clientRoleMapping.clientId":"app","claim.name":"roles.${client_id}","multivalued":"true"}}`,
		`{"name":"g","mapperType":"oidc-group-membership-mapper","config":{"claim.name":"groups","full.path":"true"}}`,
		`{"name":"a","mapperType":"oidc-audience-mapper","config":{"included.client.audience":"app","included.custom.audience":"api"}}`,
		`{"name":"addr","mapperType":"oidc-address-mapper","config":{}}`,
		`{"name":"full","mapperType":"oidc-full-name-mapper","protocol":"saml"}`,
		`{"name":"x","mapperType":"oidc-allowed-origins-mapper","config":{"k":1}}`,
	}
	path := "/admin/realms/acme/client-scopes/" + scopeID + "/protocol-mappers"
	basic := strings.TrimPrefix(codeflowBasic("app", e.secret), "Authorization: ")
	fuzzAdminBody(f, e.fuzzEnv, path, seeds, func(t *testing.T, s *testServer, r *testResponse) {
		g := s.send(http.MethodPost, "/realms/acme/protocol/openid-connect/token", strings.NewReader("grant_type=client_credentials"),
			http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Authorization": {basic}})
		e.fuzzNoServerError(t, "token with the mapper", g)
		if g.Status != http.StatusOK {
			t.Fatalf("a token cannot be had with mapper %s: %d %s", r.Body, g.Status, g.Body)
		}
		var tok map[string]any
		if err := json.Unmarshal(g.Body, &tok); err != nil {
			t.Fatalf("token answer: %s", g.Body)
		}
		access, _ := tok["access_token"].(string)
		u := s.send(http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil, http.Header{"Authorization": {"Bearer " + access}})
		e.fuzzNoServerError(t, "userinfo with the mapper", u)
		adminFuzzGet(t, e.fuzzEnv, s, "/realms/acme/.well-known/openid-configuration")
		adminFuzzLocation(e.fuzzEnv)(t, s, r)
	})
}

// FuzzAdminCreateRegistrationField fuzzes the self-registration form's
// custom fields; a field made is served on the public form description.
func FuzzAdminCreateRegistrationField(f *testing.F) {
	e := newFuzzEnv(f)
	mustStatus(f, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"registrationAllowed": true}), http.StatusOK)
	seeds := []string{
		`{"key":"phone","label":"Phone","type":"tel","required":true,"pattern":"^\\+?[0-9 ]{6,20}$"}`,
		`{"key":"plan","label":"Plan","type":"select","options":["free","pro"]}`,
		`{"key":"bio","label":"Bio","type":"text","pattern":"(a+)+$","order":-5,"enabled":false}`,
		`{"key":"x1","label":"x","type":"text","pattern":"["}`,
		`{"key":"x2","label":"x","type":"text","pattern":"` + strings.Repeat("(a|", 50) + strings.Repeat(")", 50) + `"}`,
		`{"key":"x3","label":"x","type":"select","options":[]}`,
		`{"key":"username","label":"x","type":"text"}`, `{"key":"Phone2","label":"x","type":"text"}`,
		`{"key":"x4","label":"<b>x</b>","type":"color"}`,
	}
	fuzzAdminBody(f, e, "/realms/acme/registration/admin/fields", seeds, func(t *testing.T, s *testServer, r *testResponse) {
		adminFuzzGet(t, e, s, "/realms/acme/registration/fields")
		list := adminFuzzGet(t, e, s, "/realms/acme/registration/admin/fields")
		var field map[string]any
		if err := json.Unmarshal(r.Body, &field); err != nil {
			t.Fatalf("created field: %s", r.Body)
		}
		id, _ := field["id"].(string)
		if !strings.Contains(string(list.Body), `"`+id+`"`) {
			t.Fatalf("field %s made but not listed: %s", r.Body, list.Body)
		}
		path, _ := strings.CutPrefix(r.Header.Get("Location"), "http://localhost:3000")
		if d := s.send(http.MethodDelete, path, nil, adminFuzzHeaders); d.Status/100 != 2 {
			t.Fatalf("DELETE %s answered %d: %s", path, d.Status, d.Body)
		}
	})
}
