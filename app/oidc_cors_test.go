package app

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCORS(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	other := logoutTestSetup(t, s, "other")
	fx.client(map[string]any{"clientId": "spa-app", "clientType": "PUBLIC", "redirectUris": []string{"https://spa.example/cb"},
		"webOrigins": []string{"https://spa.example"}})
	fx.client(map[string]any{"clientId": "plus", "clientType": "PUBLIC",
		"redirectUris": []string{"https://plus.example:443/cb", "com.example.app:/cb"}, "webOrigins": []string{"+"}})
	fx.client(map[string]any{"clientId": "svc", "grantTypes": []string{"client_credentials"}, "webOrigins": []string{"https://svc.example"}})
	fx.client(map[string]any{"clientId": "off", "clientType": "PUBLIC", "enabled": false, "webOrigins": []string{"https://off.example"}})
	other.client(map[string]any{"clientId": "far", "clientType": "PUBLIC", "webOrigins": []string{"https://other.example"}})
	svc := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("svc:"+fx.secrets["svc"]))
	form := "Content-Type: application/x-www-form-urlencoded"
	const (
		token      = "/realms/acme/protocol/openid-connect/token"
		certs      = "/realms/acme/protocol/openid-connect/certs"
		discovery  = "/realms/acme/.well-known/openid-configuration"
		introspect = "/realms/acme/protocol/openid-connect/token/introspect"
		revoke     = "/realms/acme/protocol/openid-connect/revoke"
		logout     = "/realms/acme/protocol/openid-connect/logout"
	)

	for _, tc := range []struct {
		name         string
		method, path string
		body         string
		origin       string
		headers      []string
		status       int
		allowed      bool
	}{
		{"preflight from a client's origin", http.MethodOptions, token, "", "https://spa.example", nil, 204, true},
		{"preflight from a + origin", http.MethodOptions, token, "", "https://plus.example", nil, 204, true},
		{"preflight from elsewhere", http.MethodOptions, token, "", "https://evil.example", nil, 204, false},
		{"preflight from another realm's origin", http.MethodOptions, token, "", "https://other.example", nil, 204, false},
		{"preflight from a disabled client's origin", http.MethodOptions, token, "", "https://off.example", nil, 204, false},
		{"preflight from the opaque origin", http.MethodOptions, token, "", "null", nil, 204, false},
		{"preflight to a path without CORS", http.MethodOptions, logout, "", "https://spa.example", nil, 405, false},
		{"preflight in an unknown realm", http.MethodOptions, "/realms/nope/protocol/openid-connect/token", "", "https://spa.example", nil, 404, false},
		{"token for the client's origin", http.MethodPost, token, "grant_type=client_credentials", "https://svc.example",
			[]string{form, svc}, 200, true},
		{"token for another client's origin", http.MethodPost, token, "grant_type=client_credentials", "https://spa.example",
			[]string{form, svc}, 200, false},
		{"token error for the client's origin", http.MethodPost, token, "grant_type=client_credentials&client_id=spa-app",
			"https://spa.example", []string{form}, 400, true},
		{"token for a + origin, default port", http.MethodPost, token, "grant_type=client_credentials&client_id=plus",
			"https://plus.example:443", []string{form}, 400, true},
		{"token naming no client", http.MethodPost, token, "grant_type=client_credentials", "https://spa.example", []string{form}, 400, false},
		{"certs for any realm origin", http.MethodGet, certs, "", "https://plus.example", nil, 200, true},
		{"certs for elsewhere", http.MethodGet, certs, "", "https://evil.example", nil, 200, false},
		{"certs without origin", http.MethodGet, certs, "", "", nil, 200, false},
		{"discovery for any realm origin", http.MethodGet, discovery, "", "https://svc.example", nil, 200, true},
		{"discovery for another realm's origin", http.MethodGet, discovery, "", "https://other.example", nil, 200, false},
		{"introspection for the client's origin", http.MethodPost, introspect, "token=x", "https://svc.example", []string{form, svc}, 200, true},
		{"revocation for the client's origin", http.MethodPost, revoke, "token=x", "https://svc.example", []string{form, svc}, 200, true},
		{"revocation for another origin", http.MethodPost, revoke, "token=x", "https://plus.example", []string{form, svc}, 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := tc.headers
			if tc.origin != "" {
				headers = append([]string{"Origin: " + tc.origin}, headers...)
			}
			if tc.method == http.MethodOptions {
				headers = append(headers, "Access-Control-Request-Method: POST", "Access-Control-Request-Headers: authorization")
			}
			var body any
			if tc.body != "" {
				body = tc.body
			}
			r := s.request(tc.method, tc.path, body, headers...)
			mustStatus(t, r, tc.status)
			acao := r.Header.Get("Access-Control-Allow-Origin")
			if tc.allowed != (acao != "") || (tc.allowed && acao != tc.origin) {
				t.Fatalf("Access-Control-Allow-Origin %q for %q, allowed %t", acao, tc.origin, tc.allowed)
			}
			if !tc.allowed {
				for name := range r.Header {
					if strings.HasPrefix(name, "Access-Control-") {
						t.Fatalf("CORS header %s for a refused origin", name)
					}
				}
			}
			if r.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Fatal("credentials allowed")
			}
			if tc.status != 404 && tc.path != logout && !strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "Origin") {
				t.Fatalf("Vary %q lacks Origin", r.Header.Values("Vary"))
			}
			if tc.allowed && tc.method == http.MethodOptions {
				if m := r.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") {
					t.Fatalf("Access-Control-Allow-Methods %q", m)
				}
				if h := r.Header.Get("Access-Control-Allow-Headers"); !strings.Contains(h, "Authorization") {
					t.Fatalf("Access-Control-Allow-Headers %q", h)
				}
			}
		})
	}
}

// Userinfo answers the client the bearer token was issued to.
func TestCORSBearerClient(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	fx.client(map[string]any{"clientId": "spa-app", "clientType": "PUBLIC", "webOrigins": []string{"https://spa.example"}})
	tok := fx.sign("at+jwt", map[string]any{"iss": s.issuer("acme"), "sub": fx.user, "azp": "spa-app", "aud": "spa-app"})
	for _, tc := range []struct {
		name, auth, origin string
		want               bool
	}{
		{"the token's client's origin", "Bearer " + tok, "https://spa.example", true},
		{"another origin", "Bearer " + tok, "https://evil.example", false},
		{"no token", "", "https://spa.example", false},
		{"not a JWT", "Bearer garbage", "https://spa.example", false},
	} {
		req := httptest.NewRequest(http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		if got := s.app.corsAllowed(req, fx.realm, corsTokenClient, tc.origin); got != tc.want {
			t.Errorf("%s: allowed %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestNormalizeOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://App.Example":         "https://app.example",
		"https://app.example:443":     "https://app.example",
		"http://app.example:80":       "http://app.example",
		"http://localhost:8080":       "http://localhost:8080",
		"https://app.example:8443":    "https://app.example:8443",
		"null":                        "",
		"https://app.example/path":    "",
		"ftp://app.example":           "",
		"https://user@app.example":    "",
		"https://app.example?x=1":     "",
		"":                            "",
		"chrome-extension://abcdefgh": "",
	} {
		if got := normalizeOrigin(in); got != want {
			t.Errorf("normalizeOrigin(%q) = %q, want %q", in, got, want)
		}
	}
}
