package app

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/http/httpguts"

	"github.com/idenplane/idenplane/store"
)

// Protocol requests from outside: the token endpoint's form, the
// authorization endpoint's query with the browser's cookies, the PKCE
// verifier, and the device flow's user code.

const oidcFuzzRedirect = "https://app.example.test/callback"

// FuzzTokenEndpoint posts forms to the token endpoint, with or without an
// Authorization header. Invariant: never a 5xx; a 200 carries a token; an
// error is RFC 6749's JSON, a 401 with its challenge.
func FuzzTokenEndpoint(f *testing.F) {
	e := newTokenFuzzEnv(f)
	basic := strings.TrimPrefix(codeflowBasic("app", e.secret), "Authorization: ")
	f.Add("grant_type=client_credentials", basic)
	f.Add("grant_type=client_credentials&scope=openid+email", basic)
	f.Add("grant_type=client_credentials&client_id=app&client_secret="+url.QueryEscape(e.secret), "")
	f.Add("grant_type=client_credentials&client_id=app&client_id=app&client_secret="+url.QueryEscape(e.secret), "")
	f.Add("grant_type=client_credentials", "Basic !!!")
	f.Add("grant_type=client_credentials", "Basic "+base64.StdEncoding.EncodeToString([]byte("app%ZZ:x")))
	f.Add("grant_type=password&username=alice&password=wrong&scope=openid", basic)
	f.Add("grant_type=password&username=alice&password=", basic)
	f.Add("grant_type=refresh_token&refresh_token="+url.QueryEscape(e.fresh), basic)
	f.Add("grant_type=refresh_token&refresh_token=x&scope=openid+profile", basic)
	f.Add("grant_type=authorization_code&code=abc&redirect_uri="+url.QueryEscape(oidcFuzzRedirect)+
		"&code_verifier="+strings.Repeat("v", 43), basic)
	f.Add("grant_type=authorization_code&code=abc&client_id=app", "")
	f.Add("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=abc", basic)
	f.Add("grant_type=urn:ietf:params:oauth:grant-type:token-exchange&subject_token=x", basic)
	f.Add("grant_type=&x=%zz", basic)
	f.Add("", "")
	f.Fuzz(func(t *testing.T, form, authorization string) {
		headers := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		if authorization != "" {
			if !httpguts.ValidHeaderFieldValue(authorization) {
				return
			}
			headers.Set("Authorization", authorization)
		}
		s := e.on(t)
		r := s.send(http.MethodPost, "/realms/acme/protocol/openid-connect/token", strings.NewReader(form), headers)
		e.fuzzNoServerError(t, "token", r)
		switch {
		case r.Status == http.StatusOK:
			if body := r.object(t); body["access_token"] == nil || body["token_type"] == nil {
				t.Fatalf("token 200 without a token: %s", r.Body)
			}
		default:
			fuzzMustOAuthError(t, "token", r)
			if r.Status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("token 401 without WWW-Authenticate: %s", r.Body)
			}
		}
	})
}

// authorizeFuzzEnv is a fuzzEnv with clients "web" (confidential, no
// consent) and "spa" (public, consent required), and alice signed in on
// an SSO session whose cookie is ssoCookie.
type authorizeFuzzEnv struct {
	*fuzzEnv
	ssoCookie string
}

func newAuthorizeFuzzEnv(f *testing.F) *authorizeFuzzEnv {
	f.Helper()
	e := &authorizeFuzzEnv{fuzzEnv: newFuzzEnv(f)}
	e.client(f, map[string]any{"clientId": "web", "redirectUris": []string{oidcFuzzRedirect, "http://localhost:8080/cb?x=1"},
		"grantTypes": []string{"authorization_code"}})
	e.client(f, map[string]any{"clientId": "spa", "clientType": "PUBLIC", "redirectUris": []string{"com.example.app:/cb"},
		"grantTypes": []string{"authorization_code"}, "requireConsent": true})
	alice := e.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test"})
	user, err := e.store.GetUser(f.Context(), e.realm.ID, alice["id"].(string))
	if err != nil {
		f.Fatal(err)
	}
	// Fixed, as client secrets are (fuzzEnv.client): the cookie in the
	// seeds must open the session in every fuzzing process.
	secret := "fuzz-sso-cookie-of-alice-0123456789abcdef"
	sess := NewSSOSession(e.realm, user, ssoSessionID(secret), "192.0.2.1", time.Now().UnixMilli())
	if err := e.store.CreateSession(f.Context(), sess); err != nil {
		f.Fatal(err)
	}
	e.ssoCookie = ssoCookieName(e.realm) + "=" + secret
	return e
}

// registered lists the redirect URIs of the clients, by client ID.
var authorizeFuzzRedirects = map[string][]string{
	"web": {oidcFuzzRedirect, "http://localhost:8080/cb?x=1"},
	"spa": {"com.example.app:/cb"},
}

// FuzzAuthorizeEndpoint sends authorization requests (a query, and the
// browser's cookies) through the router. Invariants: never a 5xx; a
// redirect goes to the realm's own pages or to a redirect URI registered
// for the client the query names, exactly; a form_post page posts to that
// URI, the state unchanged; a refusal is a page, not a redirect.
func FuzzAuthorizeEndpoint(f *testing.F) {
	e := newAuthorizeFuzzEnv(f)
	challenge := sha256.Sum256([]byte(strings.Repeat("v", 43)))
	pkce := "&code_challenge=" + base64.RawURLEncoding.EncodeToString(challenge[:]) + "&code_challenge_method=S256"
	web := "client_id=web&redirect_uri=" + url.QueryEscape(oidcFuzzRedirect) + "&response_type=code&scope=openid"
	spa := "client_id=spa&redirect_uri=com.example.app%3A%2Fcb&response_type=code&scope=openid" + pkce
	for _, cookie := range []string{"", e.ssoCookie} {
		f.Add(web+"&state=s1&nonce=n1", cookie)
		f.Add(web+"&state=%22%3E%3Cscript%3Ex%3C%2Fscript%3E&response_mode=form_post", cookie)
		f.Add(web+"&state=a%26b%3Dc&response_mode=fragment", cookie)
		f.Add(web+"&prompt=none&state=s2", cookie)
		f.Add(web+"&prompt=login+consent&max_age=0", cookie)
		f.Add(web+"&max_age=-1&ui_locales=de-CH+fr", cookie)
		f.Add(web+pkce+"&login_hint=alice", cookie)
		f.Add(spa+"&state=s3", cookie)
		f.Add("client_id=web&redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fcb%3Fx%3D1&response_type=code&state=s4", cookie)
	}
	f.Add(web+"&response_type=token", "")
	f.Add(web+"&response_mode=web_message", "")
	f.Add(web+"&request=eyJ9", "")
	f.Add(web+"&scope=openid&scope=email", "")
	f.Add(web+"&code_challenge=abc&code_challenge_method=plain", "")
	f.Add("client_id=web&redirect_uri="+url.QueryEscape(oidcFuzzRedirect+"/../evil")+"&response_type=code", "")
	f.Add("client_id=web&redirect_uri=https%3A%2F%2Fevil.example.test%2F&response_type=code", "")
	f.Add("client_id=nobody&redirect_uri="+url.QueryEscape(oidcFuzzRedirect)+"&response_type=code", "")
	f.Add("%zz", e.ssoCookie+"; idenplane_locale=de")
	f.Add(web, ssoCookieName(e.realm)+"=\"unterminated")
	f.Fuzz(func(t *testing.T, query, cookie string) {
		headers := http.Header{}
		if cookie != "" {
			if !httpguts.ValidHeaderFieldValue(cookie) {
				return
			}
			headers.Set("Cookie", cookie)
		}
		target := "/realms/acme/protocol/openid-connect/auth?" + query
		if _, err := url.ParseRequestURI(target); err != nil {
			return // not a request line a server would pass on
		}
		s := e.on(t)
		r := s.send(http.MethodGet, target, nil, headers)
		e.fuzzNoServerError(t, "authorize", r)
		q, _ := url.ParseQuery(query)
		loc := r.Header.Get("Location")
		switch {
		case r.Status == http.StatusFound:
			if strings.HasPrefix(loc, "http://localhost:3000/realms/acme/") {
				return // the realm's login or consent page
			}
			authorizeFuzzMustRedirectBack(t, q, loc)
		case loc != "":
			t.Fatalf("authorize answered %d with Location %q", r.Status, loc)
		case r.Status == http.StatusOK && q.Get("response_mode") == "form_post":
			authorizeFuzzMustFormPost(t, q, r)
		}
	})
}

// authorizeFuzzMustRedirectBack checks a redirect to the client: to the
// redirect URI the request names, registered for its client.
func authorizeFuzzMustRedirectBack(t *testing.T, q url.Values, loc string) {
	t.Helper()
	redirect := q.Get("redirect_uri")
	registered := false
	for _, uri := range authorizeFuzzRedirects[q.Get("client_id")] {
		registered = registered || uri == redirect
	}
	if !registered {
		t.Fatalf("authorize redirected to %q for client %q, redirect_uri %q not registered", loc, q.Get("client_id"), redirect)
	}
	got, err := url.Parse(loc)
	if err != nil {
		t.Fatalf("authorize redirected to an unparsable %q", loc)
	}
	want, _ := url.Parse(redirect)
	if got.Scheme != want.Scheme || got.Host != want.Host || got.Path != want.Path {
		t.Fatalf("authorize redirected to %q, not to %q", loc, redirect)
	}
	params := got.Query()
	if q.Get("response_mode") == "fragment" {
		params, _ = url.ParseQuery(got.Fragment)
	}
	if params.Get("code") == "" && params.Get("error") == "" {
		t.Fatalf("authorize redirected back to %q with neither code nor error", loc)
	}
	if e := params.Get("error"); e != "" && !oauthErrorChars.MatchString(e) {
		t.Fatalf("authorize redirected back with error %q", e)
	}
	if params.Get("state") != q.Get("state") {
		t.Fatalf("authorize redirected back with state %q, the request's was %q", params.Get("state"), q.Get("state"))
	}
}

// authorizeFuzzMustFormPost checks a form_post page: one form, posting to
// the registered redirect URI, the state as sent.
func authorizeFuzzMustFormPost(t *testing.T, q url.Values, r *testResponse) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(string(r.Body)))
	if err != nil {
		t.Fatal(err)
	}
	var forms []*html.Node
	inputs := url.Values{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "form":
			forms = append(forms, n)
		case "input":
			inputs.Add(htmlAttr(n, "name"), htmlAttr(n, "value"))
		}
	}
	if len(forms) != 1 {
		return // the login page: no SSO session, or it needs more
	}
	action := htmlAttr(forms[0], "action")
	if strings.HasPrefix(action, "/realms/acme/") {
		return // the login page's own form
	}
	authorizeFuzzMustRedirectBack(t, q, action+"?"+inputs.Encode())
}

func htmlAttr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// FuzzPKCEVerifier checks code verifiers against a challenge. Invariant:
// only the verifier the challenge was made from passes.
func FuzzPKCEVerifier(f *testing.F) {
	verifier := "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk" // RFC 7636 appendix B
	sum := sha256.Sum256([]byte(verifier))
	ar := &store.AuthRequest{CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:]), CodeChallengeMethod: "S256"}
	f.Add(verifier)
	f.Add(verifier + "=")
	f.Add(strings.ToUpper(verifier))
	f.Add(ar.CodeChallenge)
	f.Add("")
	f.Add(strings.Repeat("a", 129))
	if checkPKCEVerifier(ar, verifier) != nil {
		f.Fatal("the RFC's verifier is refused")
	}
	f.Fuzz(func(t *testing.T, v string) {
		if err := checkPKCEVerifier(ar, v); err == nil && v != verifier {
			t.Fatalf("verifier %q passes for the challenge of %q", v, verifier)
		} else if err != nil && !oauthErrorChars.MatchString(string(err.ErrorType)) {
			t.Fatalf("verifier %q refused with error %q", v, err.ErrorType)
		}
	})
}

// FuzzDeviceUserCode drives the user code a person types: its
// normalisation, then the device page's lookup. Invariants: a code that
// normalises is in the stored form and normalises to itself however it is
// written; the page never answers 5xx.
func FuzzDeviceUserCode(f *testing.F) {
	e := newFuzzEnv(f)
	for _, code := range []string{"BCDF-GHJK", "bcdf ghjk", " BCDFGHJK ", "BCDF--GHJK", "BCDFGHJ", "AEIO-UAEI", "ſCDF-GHJK", "", "BCDF-GHJK\x00"} {
		f.Add(code)
	}
	f.Fuzz(func(t *testing.T, typed string) {
		if code, ok := normalizeUserCode(typed); ok {
			if len(code) != userCodeLength || strings.Trim(code, userCodeAlphabet) != "" {
				t.Fatalf("%q normalised to %q, not a stored code", typed, code)
			}
			for _, again := range []string{code, formatUserCode(code), strings.ToLower(formatUserCode(code))} {
				if c, ok := normalizeUserCode(again); !ok || c != code {
					t.Fatalf("%q normalised to %q, but %q to %q, %v", typed, code, again, c, ok)
				}
			}
		}
		s := e.on(t)
		r := s.request(http.MethodGet, "/realms/acme/device?user_code="+url.QueryEscape(typed), nil)
		e.fuzzNoServerError(t, "device page", r)
		if r.Status != http.StatusOK {
			t.Fatalf("device page answered %d: %s", r.Status, r.Body)
		}
	})
}
