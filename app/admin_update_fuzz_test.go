package app

import (
	"net/http"
	"strings"
	"testing"
)

// adminUpdateFuzzTargets are the updates fuzzed: method and path, realm
// acme and its user alice, client app, role reader and group staff.
var adminUpdateFuzzTargets = []struct{ method, path string }{
	{http.MethodPatch, "/admin/realms/acme"},
	{http.MethodPut, "/admin/realms/acme"},
	{http.MethodPatch, "/admin/realms/acme/users/USER"},
	{http.MethodPut, "/admin/realms/acme/users/USER"},
	{http.MethodPatch, "/admin/realms/acme/clients/app"},
	{http.MethodPut, "/admin/realms/acme/roles/reader"},
	{http.MethodPut, "/admin/realms/acme/groups/GROUP"},
	{http.MethodPut, "/admin/realms/acme/events/config"},
	{http.MethodPut, "/realms/acme/registration/admin/settings"},
	{http.MethodPut, "/admin/realms/acme/users/USER/reset-password"},
}

// FuzzAdminUpdate fuzzes the bodies of the admin API's updates (PUT and
// PATCH, the latter a JSON merge patch). Invariants: a 2xx or a 4xx in the
// API's error shape, never a 5xx; after a 4xx nothing was written; after a
// 2xx the resource still reads back, and the realm's discovery answers.
func FuzzAdminUpdate(f *testing.F) {
	e := newFuzzEnv(f)
	user := e.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test"})["id"].(string)
	group := e.groupsTestCreate("acme", "staff", "")["id"].(string)
	e.client(f, map[string]any{"clientId": "app", "redirectUris": []string{"https://app.example.test/cb"}})
	mustStatus(f, e.admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "reader"}), http.StatusCreated)
	seeds := map[int][]string{
		0: {`{"displayName":"Acme"}`, `{"theme":{"primaryColor":"#123456"}}`, `{"theme":null,"smtpHost":null}`,
			`{"smtpHost":"mail.example.test\r\nX: y","smtpPort":25}`, `{"enabled":false}`, `{"emailProviderConfig":{"apiKey":"**********"}}`,
			`{"name":"other"}`, `{"accessTokenLifespan":1.5}`},
		1: {`{"displayName":"Acme","enabled":true}`, `{}`, `{"loginTheme":"idenplane-dark","themeName":"high-contrast"}`},
		2: {`{"email":"ALICE@example.test"}`, `{"username":"alice2","firstName":null}`, `{"enabled":false,"requirePasswordReset":true}`,
			`{"password":"x"}`},
		3: {`{"username":"alice","email":"alice@example.test","enabled":true}`, `{"username":"al ice"}`},
		4: {`{"redirectUris":["https://app.example.test/cb2"],"webOrigins":["+"]}`, `{"clientId":"app2"}`, `{"grantTypes":[]}`,
			`{"clientType":"PUBLIC","grantTypes":["client_credentials"]}`},
		5: {`{"name":"reader","description":"Reads"}`, `{"name":"writer"}`, `{"name":"a/b"}`},
		6: {`{"name":"staff2","description":"x"}`, `{"name":"/"}`, `{"parentId":"GROUP"}`},
		7: {`{"eventsEnabled":true,"eventsExpiration":60,"enabledEventTypes":["LOGIN"],"adminEventsEnabled":true}`, `{"eventsExpiration":-1}`},
		8: {`{"moderation":true}`, `{"moderation":"yes"}`},
		9: {`{"value":"correct horse battery","temporary":true}`, `{"type":"password","value":""}`, `{"password":"correct horse battery"}`},
	}
	for i, list := range seeds {
		for _, s := range list {
			f.Add(uint8(i), s)
		}
	}
	replace := strings.NewReplacer("USER", user, "GROUP", group)
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		target := adminUpdateFuzzTargets[int(which)%len(adminUpdateFuzzTargets)]
		path := replace.Replace(target.path)
		body = replace.Replace(body)
		s := e.on(t)
		before := e.dataVersion(t)
		r := s.send(target.method, path, strings.NewReader(body), adminFuzzHeaders)
		what := target.method + " " + path
		e.fuzzNoServerError(t, what, r)
		if r.Status >= 300 {
			fuzzMustAPIError(t, what, r)
			if e.dataVersion(t) != before {
				t.Fatalf("%s answered %d but wrote to the database: %s", what, r.Status, r.Body)
			}
			return
		}
		if !strings.HasSuffix(path, "/reset-password") {
			read := path
			if strings.HasSuffix(path, "/roles/reader") {
				read = "/admin/realms/acme/roles" // a rename moves the role
			}
			adminFuzzGet(t, e, s, read)
		}
		d := s.send(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil, nil)
		e.fuzzNoServerError(t, "discovery after "+what, d)
	})
}
