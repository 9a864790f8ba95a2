package app

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/identity"
)

// RFC 6749's rules for the client endpoints (token, introspection,
// revocation, device authorization): their forms, their parameters, their
// caching.

// rfcEnv is the code flow's environment with a confidential client web
// allowed every grant but the device's, and the public client tv
// allowed that one.
type rfcEnv struct {
	*codeflowEnv
	secret string
}

func newRFCEnv(t *testing.T) *rfcEnv {
	t.Helper()
	e := newCodeflowEnv(t)
	secret := e.client("web", map[string]any{"grantTypes": []string{"authorization_code", "refresh_token", "password",
		"client_credentials"}})
	e.client("tv", map[string]any{"clientType": "PUBLIC", "grantTypes": []string{identity.GrantDeviceCode}})
	return &rfcEnv{codeflowEnv: e, secret: secret}
}

// post sends a form to a protocol endpoint of acme (path relative to
// protocol/openid-connect/), with headers.
func (e *rfcEnv) post(path, form string, headers ...string) *testResponse {
	e.t.Helper()
	return e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/"+path, form,
		append([]string{"Content-Type: application/x-www-form-urlencoded"}, headers...)...)
}

func (e *rfcEnv) basic() string { return codeflowBasic("web", e.secret) }

// mustOAuthErrorMentioning checks an RFC 6749 error: status, code, and a
// description that holds mention.
func mustOAuthErrorMentioning(t *testing.T, r *testResponse, status int, code, mention string) {
	t.Helper()
	var body oauthError
	r.decode(t, &body)
	if r.Status != status || body.Error != code || !strings.Contains(body.Description, mention) {
		t.Fatalf("status %d body %s, want %d %s mentioning %q", r.Status, r.Body, status, code, mention)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type %q", ct)
	}
}

// Every answer of the client endpoints, each grant's and the errors, is
// kept out of caches (RFC 6749 §5.1).
func TestClientEndpointsNotCached(t *testing.T) {
	e := newRFCEnv(t)
	password := e.post("token", "grant_type=password&username=alice&password="+url.QueryEscape(codeflowPassword), e.basic())
	mustStatus(t, password, http.StatusOK)
	refresh := password.object(t)["refresh_token"].(string)
	code := e.signIn(e.browser(), e.oauth2Config("web", e.secret, "openid").AuthCodeURL("s"), "alice").Get("code")
	device := e.post("auth/device", "client_id=tv")
	mustStatus(t, device, http.StatusOK)
	deviceCode := device.object(t)["device_code"].(string)
	pending := e.post("token", "client_id=tv&grant_type="+url.QueryEscape(identity.GrantDeviceCode)+"&device_code="+url.QueryEscape(deviceCode))
	userCode, _ := normalizeUserCode(device.object(t)["user_code"].(string))
	now := e.clock.now().UnixMilli()
	if err := e.store.ApproveDeviceAuthorization(t.Context(), e.realmID(), userCode, e.aliceID, now, now); err != nil {
		t.Fatal(err)
	}
	e.clock.advance(6e9) // past the polling interval

	for _, c := range []struct {
		name   string
		r      *testResponse
		status int
	}{
		{"client_credentials", e.post("token", "grant_type=client_credentials", e.basic()), http.StatusOK},
		{"password", password, http.StatusOK},
		{"authorization_code", e.post("token", "grant_type=authorization_code&code="+url.QueryEscape(code)+
			"&redirect_uri="+url.QueryEscape(codeflowRedirect), e.basic()), http.StatusOK},
		{"refresh_token", e.post("token", "grant_type=refresh_token&refresh_token="+url.QueryEscape(refresh), e.basic()), http.StatusOK},
		{"device authorization", device, http.StatusOK},
		{"device_code, pending", pending, http.StatusBadRequest},
		{"device_code", e.post("token", "client_id=tv&grant_type="+url.QueryEscape(identity.GrantDeviceCode)+
			"&device_code="+url.QueryEscape(deviceCode)), http.StatusOK},
		{"token error", e.post("token", "grant_type=refresh_token&refresh_token=nope", e.basic()), http.StatusBadRequest},
		{"client authentication error", e.post("token", "grant_type=client_credentials", codeflowBasic("web", "wrong")), http.StatusUnauthorized},
		{"introspection", e.post("token/introspect", "token=nope", e.basic()), http.StatusOK},
		{"revocation", e.post("revoke", "token=nope", e.basic()), http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustStatus(t, c.r, c.status)
			if cc, pragma := c.r.Header.Get("Cache-Control"), c.r.Header.Get("Pragma"); cc != "no-store" || pragma != "no-cache" {
				t.Fatalf("Cache-Control %q Pragma %q, want no-store and no-cache", cc, pragma)
			}
		})
	}
}

// Client credentials go in the body or the Authorization header, never in
// the URL (RFC 6749 §2.3.1): there they are refused, not used.
func TestClientCredentialsInQueryRefused(t *testing.T) {
	e := newRFCEnv(t)
	secret := url.QueryEscape(e.secret)
	for _, c := range []struct {
		name, path, query, form, named string
	}{
		{"token, both", "token", "client_id=web&client_secret=" + secret, "grant_type=client_credentials", "client_id"},
		{"token, secret", "token", "client_secret=" + secret, "grant_type=client_credentials&client_id=web", "client_secret"},
		{"token, id beside Basic", "token", "client_id=web", "grant_type=client_credentials", "client_id"},
		{"token, assertion", "token", "client_assertion=x&client_assertion_type=y", "grant_type=client_credentials", "client_assertion"},
		{"introspection", "token/introspect", "client_id=web&client_secret=" + secret, "token=x", "client_id"},
		{"revocation", "revoke", "client_secret=" + secret, "token=x&client_id=web", "client_secret"},
		{"device authorization", "auth/device", "client_id=tv", "scope=openid", "client_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var headers []string
			if c.name == "token, id beside Basic" {
				headers = append(headers, e.basic())
			}
			r := e.post(c.path+"?"+c.query, c.form, headers...)
			mustOAuthErrorMentioning(t, r, http.StatusBadRequest, "invalid_request", c.named)
		})
	}
	// The same credentials in the body work.
	mustStatus(t, e.post("token", "grant_type=client_credentials&client_id=web&client_secret="+secret), http.StatusOK)
	mustStatus(t, e.post("auth/device", "client_id=tv"), http.StatusOK)
	// Other parameters in the URL are not read: the body is the request.
	r := e.post("token?grant_type=client_credentials", "", e.basic())
	mustOAuthErrorMentioning(t, r, http.StatusBadRequest, "invalid_request", "grant_type")
}

// No parameter may be sent twice (RFC 6749 §3.1, §3.2): the answer names
// it.
func TestRepeatedParametersRefused(t *testing.T) {
	e := newRFCEnv(t)
	secret := url.QueryEscape(e.secret)
	for _, c := range []struct {
		name, path, form, named string
		basic                   bool
	}{
		{"grant_type", "token", "grant_type=client_credentials&grant_type=client_credentials", "grant_type", true},
		{"scope", "token", "grant_type=client_credentials&scope=phone&scope=email", "scope", true},
		{"client_id", "token", "grant_type=client_credentials&client_id=web&client_id=web&client_secret=" + secret, "client_id", false},
		{"password grant's username", "token", "grant_type=password&username=alice&username=bob&password=x", "username", true},
		{"refresh_token", "token", "grant_type=refresh_token&refresh_token=a&refresh_token=b", "refresh_token", true},
		{"introspected token", "token/introspect", "token=a&token=b", "token", true},
		{"revoked token", "revoke", "token=a&token=b", "token", true},
		{"device scope", "auth/device", "client_id=tv&scope=openid&scope=phone", "scope", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var headers []string
			if c.basic {
				headers = append(headers, e.basic())
			}
			mustOAuthErrorMentioning(t, e.post(c.path, c.form, headers...), http.StatusBadRequest, "invalid_request", "parameter "+c.named)
		})
	}

	// At the authorization endpoint, to the client's redirect URI once
	// the client and the redirect URI are beyond doubt; an error page, and
	// no redirect, when either of them is repeated.
	base := url.Values{"client_id": {"web"}, "redirect_uri": {codeflowRedirect}, "response_type": {"code"},
		"scope": {"openid"}, "state": {"s"}}
	for _, c := range []struct {
		name     string
		repeat   string
		value    string
		redirect bool
	}{
		{"state", "state", "t", true},
		{"response_type", "response_type", "code", true},
		{"client_id", "client_id", "web", false},
		{"redirect_uri", "redirect_uri", codeflowRedirect, false},
	} {
		t.Run("authorization "+c.name, func(t *testing.T) {
			q := url.Values{}
			for k, v := range base {
				q[k] = slices.Clone(v)
			}
			q.Add(c.repeat, c.value)
			r := e.request(http.MethodGet, "/realms/acme/protocol/openid-connect/auth?"+q.Encode(), nil)
			if !c.redirect {
				if r.Status != http.StatusBadRequest || r.Header.Get("Location") != "" {
					t.Fatalf("status %d Location %q, want an error page", r.Status, r.Header.Get("Location"))
				}
				return
			}
			mustStatus(t, r, http.StatusFound)
			back, err := url.Parse(r.Header.Get("Location"))
			if err != nil || !strings.HasPrefix(back.String(), codeflowRedirect+"?") {
				t.Fatalf("redirected to %q", r.Header.Get("Location"))
			}
			if got := back.Query(); got.Get("error") != "invalid_request" || !strings.Contains(got.Get("error_description"), c.repeat) {
				t.Fatalf("error response %v", got)
			}
		})
	}
	// A parameter in both the URL and the body of a POST is repeated too.
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/auth?state=other", base.Encode(),
		"Content-Type: application/x-www-form-urlencoded")
	mustStatus(t, r, http.StatusSeeOther)
	if back, _ := url.Parse(r.Header.Get("Location")); back.Query().Get("error") != "invalid_request" {
		t.Fatalf("redirected to %q", r.Header.Get("Location"))
	}
}

// A form over the size limit is 413 in RFC 6749's error format, at every
// form endpoint, also when the CORS check reads the body first.
func TestProtocolFormTooLarge(t *testing.T) {
	e := newRFCEnv(t)
	e.client("spa", map[string]any{"clientType": "PUBLIC", "webOrigins": []string{"https://app.example.test"}})
	big := "grant_type=client_credentials&client_id=spa&pad=" + strings.Repeat("a", 10<<20)
	for _, path := range []string{"token", "token/introspect", "revoke", "auth/device", "userinfo", "logout"} {
		for _, origin := range []string{"", "Origin: https://app.example.test"} {
			t.Run(path+" "+origin, func(t *testing.T) {
				headers := []string{e.basic()}
				if origin != "" {
					headers = append(headers, origin)
				}
				mustOAuthErrorMentioning(t, e.post(path, big, headers...), http.StatusRequestEntityTooLarge, "invalid_request",
					"exceeds")
			})
		}
	}
}

func TestRepeatedParam(t *testing.T) {
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{}, ""},
		{url.Values{"a": {"1"}, "b": {"2"}}, ""},
		{url.Values{"scope": {"x", "y"}}, "scope"},
		{url.Values{"z": {"1", "2"}, "b": {"1", "2"}, "m": {"1", "2"}}, "b"}, // the same whatever the map's order
		{url.Values{"empty": {"", ""}}, "empty"},
	} {
		for range 5 {
			if got := repeatedParam(c.form); got != c.want {
				t.Fatalf("repeatedParam(%v) = %q, want %q", c.form, got, c.want)
			}
		}
	}
}
