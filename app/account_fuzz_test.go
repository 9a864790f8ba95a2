package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// accountFuzzPaths are the account API's writes fuzzed, as alice with a
// Bearer token: her profile, her password, TOTP set-up and removal.
var accountFuzzPaths = []string{"/profile", "/password", "/totp-setup", "/totp-disable"}

// FuzzAccountAPI fuzzes the JSON bodies of the account API. Invariants: a
// 2xx or a 4xx in the API's error shape, never a 5xx; a refused profile
// change writes nothing.
func FuzzAccountAPI(f *testing.F) {
	e := newFuzzEnv(f)
	e.user(f, map[string]any{"username": "alice", "email": "alice@example.test"}, codeflowPassword)
	secret := e.client(f, map[string]any{"clientId": "cli", "grantTypes": []string{"password"}})
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}, "scope": {"openid"}}.Encode(),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("cli", secret))
	mustStatus(f, r, http.StatusOK)
	bearer := "Bearer " + r.object(f)["access_token"].(string)
	mustStatus(f, e.request(http.MethodGet, "/realms/acme/account/", nil, "Authorization: "+bearer, "Accept: application/json"),
		http.StatusOK)
	seeds := map[int][]string{
		0: {`{"firstName":"Alice","lastName":"L"}`, `{"email":"alice2@example.test"}`, `{"email":"Alice <a@b.c>"}`,
			`{"username":"alice"}`, `{"firstName":"` + strings.Repeat("A", 300) + `"}`, `{"lastName":"\u0000"}`, `{"email":null}`},
		1: {`{"currentPassword":"wrong","newPassword":"correct horse battery 2","confirmation":"correct horse battery 2"}`,
			`{"currentPassword":"` + codeflowPassword + `","newPassword":"short","confirmation":"short"}`,
			`{"currentPassword":"x","newPassword":"a","confirmation":"b"}`},
		2: {`{}`, `{"code":"123456"}`, `{"code":"abcdef","secret":"JBSWY3DPEHPK3PXP"}`},
		3: {`{}`, `{"code":"000000"}`, `{"password":"x"}`},
	}
	for i, list := range seeds {
		for _, s := range list {
			f.Add(uint8(i), s)
		}
	}
	headers := http.Header{"Content-Type": {"application/json"}, "Authorization": {bearer}, "Accept": {"application/json"}}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		path := "/realms/acme/account" + accountFuzzPaths[int(which)%len(accountFuzzPaths)]
		s := e.on(t)
		before := e.dataVersion(t)
		r := s.send(http.MethodPost, path, strings.NewReader(body), headers)
		e.fuzzNoServerError(t, path, r)
		if r.Status < 300 {
			return
		}
		fuzzMustAPIError(t, path, r)
		if strings.HasSuffix(path, "/profile") && e.dataVersion(t) != before {
			t.Fatalf("%s answered %d but wrote to the database: %s", path, r.Status, r.Body)
		}
	})
}
