package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/httpx"
)

// FuzzAdminLogin fuzzes POST /admin/auth/login, the one admin endpoint
// open to anyone; admin root's password hash is a cheap one
// (cheapArgon2Hash), unknown users still cost a real one. Invariants: never a 5xx; errors in the API's shape; a
// token only for the admin's username and exact password. Each input
// comes from its own address, so that the per-address limit does not end
// the run early.
func FuzzAdminLogin(f *testing.F) {
	const password = "admin-password-0123"
	e := newFuzzEnv(f)
	e.createAdmin(f, "root", cheapArgon2Hash(password))
	e.systemMFA(false)
	for _, s := range []string{
		`{"username":"root","password":"` + password + `"}`, `{"username":"root","password":"wrong"}`,
		`{"username":"nobody","password":"x"}`, `{"username":"","password":""}`, `{"username":"root"}`, `{"username":1,"password":2}`, `{"user":"root"}`, `[]`, ``,
	} {
		f.Add(s)
	}
	peer := 0
	f.Fuzz(func(t *testing.T, body string) {
		s := e.on(t)
		peer++
		remote := fmt.Sprintf("10.%d.%d.%d:1234", peer>>16&255, peer>>8&255, peer&255)
		r := s.sendFrom(remote, http.MethodPost, "/admin/auth/login", strings.NewReader(body),
			http.Header{"Content-Type": {"application/json"}})
		e.fuzzNoServerError(t, "admin login", r)
		if r.Status >= 300 {
			fuzzMustAPIError(t, "admin login", r)
			return
		}
		var creds struct {
			Username *string `json:"username"`
			Password *string `json:"password"`
		}
		if err := httpx.StrictUnmarshal([]byte(body), &creds); err != nil || creds.Username == nil || creds.Password == nil {
			t.Fatalf("admin login took a body it cannot read: %q: %s", body, r.Body)
		}
		if !strings.EqualFold(*creds.Username, "root") || *creds.Password != password {
			t.Fatalf("admin login gave a token for %q", body)
		}
	})
}
