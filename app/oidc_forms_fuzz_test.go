package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// oidcFormFuzzPaths are the protocol endpoints besides the token endpoint
// that take a client's form: revocation, device authorization,
// introspection, and logout by refresh token.
var oidcFormFuzzPaths = []string{
	"/realms/acme/protocol/openid-connect/revoke",
	"/realms/acme/protocol/openid-connect/auth/device",
	"/realms/acme/protocol/openid-connect/token/introspect",
	"/realms/acme/protocol/openid-connect/logout",
}

// FuzzProtocolForm posts forms, with or without an Authorization header,
// to the protocol endpoints of oidcFormFuzzPaths. Invariants: never a 5xx;
// an error is RFC 6749's JSON, a 401 with its challenge.
func FuzzProtocolForm(f *testing.F) {
	e := newTokenFuzzEnv(f)
	basic := strings.TrimPrefix(codeflowBasic("app", e.secret), "Authorization: ")
	for i := range oidcFormFuzzPaths {
		w := uint8(i)
		f.Add(w, "token="+url.QueryEscape(e.access), basic)
		f.Add(w, "token="+url.QueryEscape(e.fresh)+"&token_type_hint=refresh_token", basic)
		f.Add(w, "refresh_token="+url.QueryEscape(e.fresh), basic)
		f.Add(w, "client_id=app&client_secret="+url.QueryEscape(e.secret)+"&scope=openid+profile", "")
		f.Add(w, "client_id=app&scope=openid", "Basic !!!")
		f.Add(w, "token=x&token=y&client_id=nobody", "")
		f.Add(w, "", "")
	}
	f.Fuzz(func(t *testing.T, which uint8, form, authorization string) {
		headers := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		if authorization != "" {
			if !httpguts.ValidHeaderFieldValue(authorization) {
				return
			}
			headers.Set("Authorization", authorization)
		}
		path := oidcFormFuzzPaths[int(which)%len(oidcFormFuzzPaths)]
		s := e.on(t)
		r := s.send(http.MethodPost, path, strings.NewReader(form), headers)
		e.fuzzNoServerError(t, path, r)
		if r.Status < 300 {
			return
		}
		if strings.HasSuffix(path, "/logout") && strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			return // a browser's logout form, answered with a page
		}
		fuzzMustOAuthError(t, path, r)
		if r.Status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%s 401 without WWW-Authenticate: %s", path, r.Body)
		}
	})
}
