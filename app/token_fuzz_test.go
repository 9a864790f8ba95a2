package app

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/net/http/httpguts"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/identity"
)

// Tokens from outside: access tokens at introspection and userinfo, ID
// tokens as logout hints, logout tokens received by back channel, admin
// tokens, the logout form's CSRF token. The invariant beyond "no 5xx": a
// token is accepted only if the server issued it.

// tokenFuzzEnv is a fuzzEnv with a confidential client "app" (every
// grant, one redirect URI), user alice, and the tokens issued to them.
type tokenFuzzEnv struct {
	*fuzzEnv
	secret string
	issued []string
	access string // alice's access token
	id     string // alice's ID token
	fresh  string // alice's refresh token
}

const tokenFuzzLogoutRedirect = "https://app.example.test/signed-out"

func newTokenFuzzEnv(f *testing.F) *tokenFuzzEnv {
	f.Helper()
	e := &tokenFuzzEnv{fuzzEnv: newFuzzEnv(f)}
	e.secret = e.client(f, map[string]any{"clientId": "app", "redirectUris": []string{tokenFuzzLogoutRedirect},
		"grantTypes": []string{"password", "client_credentials", "refresh_token", "authorization_code", identity.GrantDeviceCode}})
	e.user(f, map[string]any{"username": "alice", "email": "alice@example.test"}, codeflowPassword)
	r := e.tokenRequest(f, url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}, "scope": {"openid"}})
	e.access, e.id, e.fresh = r["access_token"].(string), r["id_token"].(string), r["refresh_token"].(string)
	r = e.tokenRequest(f, url.Values{"grant_type": {"client_credentials"}})
	e.issued = append(e.issued, e.access, e.id, e.fresh, r["access_token"].(string))
	return e
}

// tokenRequest is a successful token request of client app.
func (e *tokenFuzzEnv) tokenRequest(f *testing.F, form url.Values) map[string]any {
	f.Helper()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("app", e.secret))
	mustStatus(f, r, http.StatusOK)
	return r.object(f)
}

// sign signs claims with the realm's key: tokens the server would refuse
// for what they say, not for their signature.
func (e *tokenFuzzEnv) sign(f *testing.F, typ string, claims map[string]any) string {
	f.Helper()
	token, err := e.app.sign(f.Context(), e.realm, typ, claims)
	if err != nil {
		f.Fatal(err)
	}
	return token
}

// wasIssued says whether token is one the server issued: the same string,
// or a JWT whose header and payload decode to the same bytes (base64
// decoding ignores line breaks and unused bits, and the signature covers
// the decoded bytes, so such a copy carries the same signature).
func (e *tokenFuzzEnv) wasIssued(token string) bool {
	for _, t := range e.issued {
		if token == t || sameJWS(token, t) {
			return true
		}
	}
	return false
}

func sameJWS(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if len(pa) != 3 || len(pb) != 3 {
		return false
	}
	for i := range 2 {
		da, err := base64.RawURLEncoding.DecodeString(pa[i])
		if err != nil {
			return false
		}
		db, _ := base64.RawURLEncoding.DecodeString(pb[i])
		if !bytes.Equal(da, db) {
			return false
		}
	}
	return true
}

// tokenVariants are tampered forms of a JWT every token target starts
// from: no signature, alg none, another key ID, a flipped payload, HS256
// signed with the realm's public key, and the token's parts shuffled.
func tokenVariants(f *testing.F, e *tokenFuzzEnv, token string) []string {
	f.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		f.Fatalf("not a JWT: %q", token)
	}
	header, claims := jwtPartsF(f, token)
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for mk, mv := range m {
			out[mk] = mv
		}
		out[k] = v
		return out
	}
	keys, err := e.app.signingKeys.Public(f.Context(), e.realm)
	if err != nil {
		f.Fatal(err)
	}
	pub, err := json.Marshal(keys[0])
	if err != nil {
		f.Fatal(err)
	}
	hsHeader := enc(with(header, "alg", "HS256"))
	mac := hmac.New(sha256.New, pub)
	mac.Write([]byte(hsHeader + "." + parts[1]))
	return []string{
		token,
		parts[0] + "." + parts[1] + ".",
		enc(with(header, "alg", "none")) + "." + parts[1] + ".",
		enc(with(header, "kid", "other")) + "." + parts[1] + "." + parts[2],
		parts[0] + "." + enc(with(claims, "sub", "someone-else")) + "." + parts[2],
		hsHeader + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)),
		parts[1] + "." + parts[0] + "." + parts[2],
		token + "." + parts[2],
		`{"protected":"` + parts[0] + `","payload":"` + parts[1] + `","signature":"` + parts[2] + `"}`,
		strings.Repeat("a.", 3),
		"",
	}
}

// jwtPartsF is jwtParts for a setup step of a fuzz target.
func jwtPartsF(f *testing.F, token string) (header, claims map[string]any) {
	f.Helper()
	parts := strings.Split(token, ".")
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			f.Fatal(err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			f.Fatal(err)
		}
	}
	return header, claims
}

// FuzzVerifyAccessToken drives the access-token check that introspection,
// userinfo, the account API and step-up share.
func FuzzVerifyAccessToken(f *testing.F) {
	e := newTokenFuzzEnv(f)
	_, claims := jwtPartsF(f, e.access)
	for _, tok := range tokenVariants(f, e, e.access) {
		f.Add(tok)
	}
	f.Add(e.sign(f, "at+jwt", map[string]any{"iss": "https://elsewhere.test/realms/acme", "sub": claims["sub"],
		"exp": time.Now().Add(time.Hour).Unix(), "jti": "j-1"}))
	f.Add(e.sign(f, "at+jwt", map[string]any{"iss": e.app.issuer(e.realm), "sub": claims["sub"], "exp": 1, "jti": "j-2"}))
	f.Add(e.sign(f, "JWT", claims))
	f.Add(e.id)
	f.Add(e.fresh)
	if _, err := e.app.verifyAccessToken(f.Context(), e.realm, e.access); err != nil {
		f.Fatalf("the access token issued is refused: %v", err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		e.on(t)
		got, err := e.app.verifyAccessToken(t.Context(), e.realm, token)
		if err == nil && !e.wasIssued(token) {
			t.Fatalf("accepted an access token the server never issued: %q, claims %v", token, got)
		}
	})
}

// FuzzIntrospect posts tokens to the introspection endpoint as client app.
func FuzzIntrospect(f *testing.F) {
	e := newTokenFuzzEnv(f)
	for _, tok := range tokenVariants(f, e, e.access) {
		f.Add(tok)
	}
	f.Add(e.id)
	f.Add(e.fresh)
	basic := codeflowBasic("app", e.secret)
	if e.introspect(e.access)["active"] != true {
		f.Fatal("the access token issued is not active")
	}
	f.Fuzz(func(t *testing.T, token string) {
		s := e.on(t)
		r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect", "token="+url.QueryEscape(token),
			"Content-Type: application/x-www-form-urlencoded", basic)
		e.fuzzNoServerError(t, "introspect", r)
		if r.Status != http.StatusOK {
			fuzzMustOAuthError(t, "introspect", r)
			return
		}
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("introspection answer is not JSON: %s", r.Body)
		}
		active, ok := body["active"].(bool)
		if !ok {
			t.Fatalf("introspection answer without active: %s", r.Body)
		}
		if active && !e.wasIssued(token) {
			t.Fatalf("introspection calls a token the server never issued active: %q: %s", token, r.Body)
		}
	})
}

// introspect asks, as client app, whether token is active.
func (e *tokenFuzzEnv) introspect(token string) map[string]any {
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect", "token="+url.QueryEscape(token),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("app", e.secret))
	mustStatus(e.t, r, http.StatusOK)
	return r.object(e.t)
}

// FuzzUserinfo sends tokens to userinfo as Bearer tokens, from a page of
// another origin.
func FuzzUserinfo(f *testing.F) {
	e := newTokenFuzzEnv(f)
	for _, tok := range tokenVariants(f, e, e.access) {
		f.Add(tok)
	}
	f.Add(e.id)
	mustStatus(f, e.request(http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil, "Authorization: Bearer "+e.access),
		http.StatusOK)
	f.Fuzz(func(t *testing.T, token string) {
		header := "Bearer " + token
		if !httpguts.ValidHeaderFieldValue(header) {
			return // no server would pass such a header on
		}
		s := e.on(t)
		// With an Origin, CORS reads the token's azp too, unverified.
		r := s.send(http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil,
			http.Header{"Authorization": {header}, "Origin": {"https://app.example.test"}})
		e.fuzzNoServerError(t, "userinfo", r)
		switch {
		case r.Status == http.StatusOK:
			if !e.wasIssued(strings.TrimSpace(token)) && !e.wasIssued(token) {
				t.Fatalf("userinfo answered a token the server never issued: %q: %s", token, r.Body)
			}
		case r.Status == http.StatusUnauthorized:
			if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer ") {
				t.Fatalf("userinfo 401 without a Bearer challenge: %q", r.Header.Get("WWW-Authenticate"))
			}
			fuzzMustOAuthError(t, "userinfo", r)
		default:
			fuzzMustOAuthError(t, "userinfo", r)
		}
	})
}

// FuzzLogoutIDTokenHint drives RP-initiated logout's id_token_hint: the
// hint check itself, then the logout endpoint with the hint and the
// client's post-logout redirect URI.
func FuzzLogoutIDTokenHint(f *testing.F) {
	e := newTokenFuzzEnv(f)
	_, claims := jwtPartsF(f, e.id)
	for _, tok := range tokenVariants(f, e, e.id) {
		f.Add(tok, tokenFuzzLogoutRedirect)
	}
	f.Add(e.access, tokenFuzzLogoutRedirect)
	f.Add(e.id, "https://evil.example.test/")
	f.Add(e.id, tokenFuzzLogoutRedirect+"/../x")
	f.Add(e.sign(f, "JWT", map[string]any{"iss": e.app.issuer(e.realm), "sub": claims["sub"], "aud": []string{"other", "app"},
		"azp": "other", "exp": 1}), "")
	f.Add(e.sign(f, "JWT", map[string]any{"iss": e.app.issuer(e.realm), "aud": "app", "exp": 1}), "")
	if _, err := e.app.verifyIDTokenHint(f.Context(), e.realm, e.id); err != nil {
		f.Fatalf("the ID token issued is refused as a hint: %v", err)
	}
	f.Fuzz(func(t *testing.T, hint, redirect string) {
		s := e.on(t)
		if h, err := e.app.verifyIDTokenHint(t.Context(), e.realm, hint); err == nil && !e.wasIssued(hint) {
			t.Fatalf("accepted an id_token_hint the server never issued: %q (subject %q)", hint, h.subject)
		}
		q := url.Values{"id_token_hint": {hint}, "post_logout_redirect_uri": {redirect}, "state": {"s1"}}
		r := s.request(http.MethodGet, "/realms/acme/protocol/openid-connect/logout?"+q.Encode(), nil)
		e.fuzzNoServerError(t, "logout", r)
		switch r.Status {
		case http.StatusOK, http.StatusBadRequest:
		case http.StatusFound:
			loc := r.Header.Get("Location")
			if !strings.HasPrefix(loc, tokenFuzzLogoutRedirect+"?") && loc != tokenFuzzLogoutRedirect {
				t.Fatalf("logout redirected to %q, not the registered URI", loc)
			}
		default:
			t.Fatalf("logout answered %d: %s", r.Status, r.Body)
		}
	})
}

// FuzzBackchannelLogoutToken drives a logout token received by back
// channel: the token check, then the endpoint.
func FuzzBackchannelLogoutToken(f *testing.F) {
	e := newTokenFuzzEnv(f)
	app, err := e.store.GetClientByClientID(f.Context(), e.realm.ID, "app")
	if err != nil {
		f.Fatal(err)
	}
	_, claims := jwtPartsF(f, e.id)
	sub, _ := claims["sub"].(string)
	sid, _ := claims["sid"].(string)
	valid, err := e.app.signLogoutToken(f.Context(), e.realm, app, sub, sid, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	e.issued = append(e.issued, valid)
	for _, tok := range tokenVariants(f, e, valid) {
		f.Add(tok)
	}
	f.Add(e.id)
	iss := e.app.issuer(e.realm)
	now := time.Now().Unix()
	event := map[string]any{backchannelEvent: map[string]any{}}
	f.Add(e.sign(f, "logout+jwt", map[string]any{"iss": iss, "aud": "app", "sub": sub, "iat": now, "jti": "j", "events": event, "nonce": "n"}))
	f.Add(e.sign(f, "logout+jwt", map[string]any{"iss": iss, "aud": "app", "iat": now, "jti": "j", "events": event}))
	f.Add(e.sign(f, "logout+jwt", map[string]any{"iss": iss, "aud": "app", "sid": sid, "iat": now, "jti": "j", "events": map[string]any{}}))
	f.Add(e.sign(f, "logout+jwt", map[string]any{"iss": iss, "aud": "app", "sid": sid, "iat": 1, "jti": "j", "events": event}))
	f.Add(e.sign(f, "logout+jwt", map[string]any{"iss": iss, "aud": "nobody", "sid": sid, "iat": now, "jti": "j", "events": event}))
	if _, err := e.app.verifyLogoutToken(f.Context(), e.realm, valid); err != nil {
		f.Fatalf("the logout token signed is refused: %v", err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		s := e.on(t)
		if lt, err := e.app.verifyLogoutToken(t.Context(), e.realm, token); err == nil && !e.wasIssued(token) {
			t.Fatalf("accepted a logout token the server never issued: %q (jti %q)", token, lt.ID)
		}
		r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/logout/backchannel",
			"logout_token="+url.QueryEscape(token), "Content-Type: application/x-www-form-urlencoded")
		e.fuzzNoServerError(t, "back-channel logout", r)
		switch r.Status {
		case http.StatusOK:
			if !e.wasIssued(token) {
				t.Fatalf("back-channel logout took a token the server never issued: %q", token)
			}
		case http.StatusBadRequest:
			fuzzMustOAuthError(t, "back-channel logout", r)
		default:
			t.Fatalf("back-channel logout answered %d: %s", r.Status, r.Body)
		}
	})
}

// FuzzAdminToken drives the admin API's Bearer tokens: the token check,
// then an admin request with it. Admin tokens are signed with a key derived
// from the master key, the same in every fuzzing process, so a token made
// by another process's setup is genuine too: what is checked is that an
// accepted token carries an HS256 signature by that key over its own
// header and payload, verified here without go-jose.
func FuzzAdminToken(f *testing.F) {
	e := &tokenFuzzEnv{fuzzEnv: newFuzzEnv(f)}
	root := e.createAdmin(f, "root", identity.Argon2idHash("unused"))
	token, err := e.app.signAdminToken(root, authz.Everything())
	if err != nil {
		f.Fatal(err)
	}
	for _, tok := range tokenVariants(f, e, token) {
		f.Add(tok)
	}
	if !hs256Signed(token, e.app.tokenKey) {
		f.Fatal("the oracle refuses the token the server signed")
	}
	_, claims := jwtPartsF(f, token)
	claims["sub"] = "someone-else"
	f.Add(authSignF(f, bytes.Repeat([]byte("k"), 32), claims))
	mustStatus(f, e.request(http.MethodGet, "/admin/auth/me", nil, "Authorization: Bearer "+token), http.StatusOK)
	f.Fuzz(func(t *testing.T, token string) {
		s := e.on(t)
		if c, _, err := e.app.parseAdminToken(token); err == nil && !hs256Signed(token, e.app.tokenKey) {
			t.Fatalf("accepted an admin token the server never signed: %q (sub %q)", token, c.Subject)
		}
		header := "Bearer " + token
		if !httpguts.ValidHeaderFieldValue(header) {
			return
		}
		r := s.send(http.MethodGet, "/admin/auth/me", nil, http.Header{"Authorization": {header}})
		e.fuzzNoServerError(t, "admin me", r)
		switch r.Status {
		case http.StatusOK:
			if !hs256Signed(strings.TrimSpace(token), e.app.tokenKey) && !hs256Signed(token, e.app.tokenKey) {
				t.Fatalf("admin API took a token the server never signed: %q", token)
			}
		case http.StatusUnauthorized:
			fuzzMustAPIError(t, "admin me", r)
		default:
			t.Fatalf("admin me answered %d: %s", r.Status, r.Body)
		}
	})
}

// hs256Signed says whether token is a compact JWS with alg HS256 whose
// signature is key's HMAC-SHA256 of its header and payload, as decoded and
// encoded again (go-jose signs and verifies the re-encoded parts).
func hs256Signed(token string, key []byte) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	var decoded [3][]byte
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			return false
		}
		decoded[i] = b
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(decoded[0], &header) != nil || header.Alg != "HS256" {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(base64.RawURLEncoding.EncodeToString(decoded[0]) + "." + base64.RawURLEncoding.EncodeToString(decoded[1])))
	return hmac.Equal(mac.Sum(nil), decoded[2])
}

// authSignF is authSign for a setup step of a fuzz target.
func authSignF(f *testing.F, key []byte, claims map[string]any) string {
	f.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		f.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		f.Fatal(err)
	}
	return tok
}

// FuzzLogoutCSRF fuzzes the CSRF token of the logout confirmation form,
// "expiry.mac". Invariant: a token passes only with the expiry and MAC of
// the one made for the realm and the session, and not once expired.
func FuzzLogoutCSRF(f *testing.F) {
	e := newFuzzEnv(f)
	exp := time.Now().Add(24 * time.Hour)
	valid := e.app.logoutCSRF(e.realm, "session-1", exp)
	for _, s := range []string{valid, e.app.logoutCSRF(e.realm, "session-1", time.Now().Add(-time.Minute)),
		e.app.logoutCSRF(e.realm, "session-2", exp), "+" + valid, valid + "=", strings.Replace(valid, ".", "..", 1),
		"99999999999999999999." + strings.SplitN(valid, ".", 2)[1], ".", ""} {
		f.Add(s)
	}
	if !e.app.checkLogoutCSRF(valid, e.realm, "session-1") {
		f.Fatal("the token made is refused")
	}
	wantMAC := e.app.logoutCSRFMAC(e.realm, "session-1", exp.Unix())
	f.Fuzz(func(t *testing.T, token string) {
		if !e.app.checkLogoutCSRF(token, e.realm, "session-1") {
			return
		}
		expText, macText, _ := strings.Cut(token, ".")
		got, err := base64.RawURLEncoding.DecodeString(macText)
		if n, _ := strconv.ParseInt(expText, 10, 64); n != exp.Unix() || err != nil || !bytes.Equal(got, wantMAC) {
			t.Fatalf("logout CSRF token %q passes, but is not the one made (%q)", token, valid)
		}
	})
}
