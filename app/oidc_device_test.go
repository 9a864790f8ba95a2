package app

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// deviceTestClock is a server clock the test controls: it runs at speed
// times real time (0 stops it), plus whatever the test adds. At speed 10 a
// device polling every real second polls every 10 s of server time, above
// the 5 s interval, so the whole flow runs in a second or two.
type deviceTestClock struct {
	mu     sync.Mutex
	start  time.Time
	speed  time.Duration
	offset time.Duration
}

func newDeviceTestClock(speed int) *deviceTestClock {
	return &deviceTestClock{start: time.Now(), speed: time.Duration(speed)}
}

func (c *deviceTestClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.start.Add(c.speed*time.Since(c.start) + c.offset)
}

func (c *deviceTestClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// newDeviceTestServer serves realm acme on clock, with the public client
// tv allowed the device grant, and user alice.
func newDeviceTestServer(t *testing.T, clock *deviceTestClock) *oidcTestServer {
	t.Helper()
	s := newOIDCTestServer(t, func(c *Config) { c.Now = clock.now })
	s.createRealm("acme")
	deviceTestClient(t, s, "acme", map[string]any{"clientId": "tv", "name": "Living room TV", "clientType": "PUBLIC",
		"grantTypes": []string{identity.GrantDeviceCode, "refresh_token"}})
	s.createUser("acme", map[string]any{"username": "alice", "email": "alice@acme.test", "emailVerified": true,
		"firstName": "Alice", "lastName": "Liddell", "password": deviceTestPassword})
	return s
}

const deviceTestPassword = "correct horse battery"

// deviceTestClient creates a client and returns its secret ("" if public).
func deviceTestClient(t *testing.T, s *oidcTestServer, realm string, fields map[string]any) string {
	t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms/"+realm+"/clients", fields)
	mustStatus(t, r, http.StatusCreated)
	secret, _ := r.object(t)["secret"].(string)
	return secret
}

func deviceTestConfig(t *testing.T, s *oidcTestServer, clientID string, scopes ...string) oauth2.Config {
	t.Helper()
	provider, err := oidc.NewProvider(t.Context(), s.issuer("acme"))
	if err != nil {
		t.Fatal(err)
	}
	if provider.Endpoint().DeviceAuthURL != s.issuer("acme")+"/protocol/openid-connect/auth/device" {
		t.Fatalf("discovered device endpoint %q", provider.Endpoint().DeviceAuthURL)
	}
	// A public client says who it is in the form. Left to detect the style,
	// x/oauth2 repeats every failed poll at once in the other style, and
	// the repeat, polled too fast, earns slow_down.
	endpoint := provider.Endpoint()
	endpoint.AuthStyle = oauth2.AuthStyleInParams
	return oauth2.Config{ClientID: clientID, Endpoint: endpoint, Scopes: scopes}
}

// deviceTestBrowser is a browser on the device page: a cookie jar and the
// last form it read.
type deviceTestBrowser struct {
	client *http.Client
	url    string
	form   url.Values
}

func newDeviceTestBrowser(t *testing.T) *deviceTestBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &deviceTestBrowser{client: &http.Client{Jar: jar}}
}

var (
	deviceTestInput = regexp.MustCompile(`<input\s[^>]*>`)
	deviceTestAttr  = regexp.MustCompile(`([a-z_-]+)="([^"]*)"`)
)

// open GETs the page and reads its form's inputs.
func (b *deviceTestBrowser) open(pageURL string) (int, string, error) {
	resp, err := b.client.Get(pageURL)
	if err != nil {
		return 0, "", err
	}
	return b.read(pageURL, resp)
}

// submit posts the form read last, with changes, to the page it came from
// (the form has no action), and reads the answer's form.
func (b *deviceTestBrowser) submit(changes map[string]string) (int, string, error) {
	form := url.Values{}
	for k, v := range b.form {
		form[k] = slices.Clone(v)
	}
	for k, v := range changes {
		form.Set(k, v)
	}
	resp, err := b.client.PostForm(b.url, form)
	if err != nil {
		return 0, "", err
	}
	return b.read(b.url, resp)
}

func (b *deviceTestBrowser) read(pageURL string, resp *http.Response) (int, string, error) {
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err
	}
	body := string(raw)
	b.url, b.form = pageURL, url.Values{}
	for _, tag := range deviceTestInput.FindAllString(body, -1) {
		attrs := map[string]string{}
		for _, m := range deviceTestAttr.FindAllStringSubmatch(tag, -1) {
			attrs[m[1]] = html.UnescapeString(m[2])
		}
		if attrs["name"] != "" {
			b.form.Set(attrs["name"], attrs["value"])
		}
	}
	return resp.StatusCode, body, nil
}

// deviceTestApprove approves userCode through the page as alice.
func deviceTestApprove(b *deviceTestBrowser, pageURL string) error {
	status, body, err := b.open(pageURL)
	if err != nil {
		return err
	}
	if status != http.StatusOK || !strings.Contains(body, "Living room TV") {
		return fmt.Errorf("device page: %d %s", status, body)
	}
	status, body, err = b.submit(map[string]string{"action": "approve", "username": "alice", "password": deviceTestPassword})
	if err != nil {
		return err
	}
	if status != http.StatusOK || !strings.Contains(body, "Device connected") {
		return fmt.Errorf("approval: %d %s", status, body)
	}
	return nil
}

// deviceTestPolled waits until the device has polled at least once, so
// that the approval lands while it polls.
func deviceTestPolled(s *oidcTestServer, userCode string) error {
	code, _ := normalizeUserCode(userCode)
	realm, err := s.store.GetRealm(context.Background(), "acme")
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		d, err := s.store.DeviceAuthorizationByUserCode(context.Background(), realm.ID, code)
		if err != nil {
			return err
		}
		if d.LastPollAt != 0 {
			return nil
		}
	}
	return errors.New("the device never polled")
}

// deviceCSRFField is the form field of the pages' CSRF token.
const deviceCSRFField = "csrf"

var deviceTestUserCode = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`)

func TestOIDCDeviceFlow(t *testing.T) {
	clock := newDeviceTestClock(10)
	s := newDeviceTestServer(t, clock)
	ctx := t.Context()
	cfg := deviceTestConfig(t, s, "tv", "openid", "email")

	da, err := cfg.DeviceAuth(ctx)
	if err != nil {
		t.Fatalf("device authorization: %v", err)
	}
	verify := s.issuer("acme") + "/device"
	if !deviceTestUserCode.MatchString(da.UserCode) || da.VerificationURI != verify ||
		da.VerificationURIComplete != verify+"?user_code="+da.UserCode || da.Interval != 5 || len(da.DeviceCode) < 43 {
		t.Fatalf("device authorization response %+v", da)
	}
	if left := time.Until(da.Expiry); left < 590*time.Second || left > 600*time.Second {
		t.Fatalf("expires in %v, want 600 s", left)
	}
	// The store keeps a hash of the device code, never the code.
	realm, err := s.store.GetRealm(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	code, _ := normalizeUserCode(da.UserCode)
	stored, err := s.store.DeviceAuthorizationByUserCode(ctx, realm.ID, code)
	if err != nil || string(stored.DeviceCodeHash) != string(store.HashToken(da.DeviceCode)) {
		t.Fatalf("stored authorization %+v, %v", stored, err)
	}

	approved := make(chan error, 1)
	browser := newDeviceTestBrowser(t)
	go func() {
		if err := deviceTestPolled(s, da.UserCode); err != nil {
			approved <- err
			return
		}
		approved <- deviceTestApprove(browser, da.VerificationURIComplete)
	}()
	da.Interval = 1 // a real second: ten on the server's clock
	tok, err := cfg.DeviceAccessToken(ctx, da)
	if err := <-approved; err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("device access token: %v", err)
	}
	if tok.TokenType != "Bearer" || tok.Expiry.IsZero() {
		t.Fatalf("token %+v", tok)
	}
	// The approval is a sign-in: a session, a refresh token for a client
	// with that grant, and an ID token for openid.
	if tok.RefreshToken == "" {
		t.Fatal("no refresh token for a client with the refresh_token grant")
	}
	rawID, _ := tok.Extra("id_token").(string)
	provider, err := oidc.NewProvider(ctx, s.issuer("acme"))
	if err != nil {
		t.Fatal(err)
	}
	idt, err := provider.VerifierContext(ctx, &oidc.Config{ClientID: "tv", Now: clock.now}).Verify(ctx, rawID)
	if err != nil {
		t.Fatalf("ID token: %v", err)
	}
	var idClaims struct {
		SID string `json:"sid"`
	}
	if err := idt.Claims(&idClaims); err != nil || idClaims.SID == "" {
		t.Fatalf("ID token sid %q: %v", idClaims.SID, err)
	}
	if _, err := oidc.NewRemoteKeySet(ctx, s.issuer("acme")+"/protocol/openid-connect/certs").VerifySignature(ctx, tok.AccessToken); err != nil {
		t.Fatalf("signature: %v", err)
	}
	header, claims := jwtParts(t, tok.AccessToken)
	alice, err := s.store.GetUserByUsername(ctx, realm.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if header["typ"] != "at+jwt" || claims["sub"] != alice.ID || claims["azp"] != "tv" || claims["auth_time"] == nil {
		t.Fatalf("header %v claims %v", header, claims)
	}
	if scope := strings.Fields(claims["scope"].(string)); !slices.Contains(scope, "openid") || !slices.Contains(scope, "email") {
		t.Fatalf("scope %v", scope)
	}

	// The token works at userinfo, read by go-oidc.
	info, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	if info.Subject != alice.ID || info.Email != "alice@acme.test" || !info.EmailVerified {
		t.Fatalf("userinfo %+v", info)
	}

	// A device code is redeemed once.
	r := deviceTestPoll(s, "client_id=tv&device_code="+url.QueryEscape(da.DeviceCode))
	deviceTestMustError(t, r, http.StatusBadRequest, "invalid_grant")
}

func TestOIDCDeviceDenied(t *testing.T) {
	clock := newDeviceTestClock(10)
	s := newDeviceTestServer(t, clock)
	cfg := deviceTestConfig(t, s, "tv")
	da, err := cfg.DeviceAuth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	denied := make(chan error, 1)
	b := newDeviceTestBrowser(t)
	go func() {
		if err := deviceTestPolled(s, da.UserCode); err != nil {
			denied <- err
			return
		}
		// Typed by hand: lower case, without the dash. Denying needs no login.
		if _, _, err := b.open(da.VerificationURI); err != nil {
			denied <- err
			return
		}
		status, body, err := b.submit(map[string]string{"action": "deny",
			"user_code": strings.ToLower(strings.ReplaceAll(da.UserCode, "-", ""))})
		if err == nil && (status != http.StatusOK || !strings.Contains(body, "Device denied")) {
			err = fmt.Errorf("denial: %d %s", status, body)
		}
		denied <- err
	}()
	da.Interval = 1
	_, err = cfg.DeviceAccessToken(t.Context(), da)
	if err := <-denied; err != nil {
		t.Fatal(err)
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "access_denied" || re.Response.StatusCode != http.StatusBadRequest {
		t.Fatalf("device access token after denial: %v, want access_denied", err)
	}
	// The denial stands for every later poll.
	deviceTestMustError(t, deviceTestPoll(s, "client_id=tv&device_code="+url.QueryEscape(da.DeviceCode)),
		http.StatusBadRequest, "access_denied")
}

func TestOIDCDeviceExpired(t *testing.T) {
	clock := newDeviceTestClock(0)
	s := newDeviceTestServer(t, clock)
	cfg := deviceTestConfig(t, s, "tv")
	da, err := cfg.DeviceAuth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(600 * time.Second)

	// Too late on the page too.
	b := newDeviceTestBrowser(t)
	status, body, err := b.open(da.VerificationURIComplete)
	if err != nil || status != http.StatusOK || !strings.Contains(body, enMsg(deviceMsgBadCode)) {
		t.Fatalf("page for an expired code: %d %v %s", status, err, body)
	}
	status, body, err = b.submit(map[string]string{"action": "approve", "username": "alice", "password": deviceTestPassword})
	if err != nil || status != http.StatusBadRequest || !strings.Contains(body, enMsg(deviceMsgBadCode)) {
		t.Fatalf("approval of an expired code: %d %v %s", status, err, body)
	}

	da.Interval = 1
	_, err = cfg.DeviceAccessToken(t.Context(), da)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "expired_token" || re.Response.StatusCode != http.StatusBadRequest {
		t.Fatalf("device access token after expiry: %v, want expired_token", err)
	}
	// It stays expired_token for the device that keeps polling.
	clock.advance(time.Minute)
	deviceTestMustError(t, deviceTestPoll(s, "client_id=tv&device_code="+url.QueryEscape(da.DeviceCode)),
		http.StatusBadRequest, "expired_token")
}

// deviceTestPoll posts a device_code grant to acme's token endpoint.
func deviceTestPoll(s *oidcTestServer, form string) *testResponse {
	return s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		"grant_type="+url.QueryEscape(identity.GrantDeviceCode)+"&"+form, "Content-Type: application/x-www-form-urlencoded")
}

func deviceTestMustError(t *testing.T, r *testResponse, status int, code string) {
	t.Helper()
	var e oauthError
	r.decode(t, &e)
	if r.Status != status || e.Error != code {
		t.Fatalf("status %d body %s, want %d %s", r.Status, r.Body, status, code)
	}
}

func TestOIDCDeviceSlowDown(t *testing.T) {
	clock := newDeviceTestClock(0)
	s := newDeviceTestServer(t, clock)
	r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/auth/device", "client_id=tv",
		"Content-Type: application/x-www-form-urlencoded")
	mustStatus(t, r, http.StatusOK)
	poll := "client_id=tv&device_code=" + url.QueryEscape(r.object(t)["device_code"].(string))
	for _, step := range []struct {
		wait time.Duration
		code string
	}{
		{0, "authorization_pending"},
		{5 * time.Second, "authorization_pending"}, // exactly the interval
		{4 * time.Second, "slow_down"},             // too soon: the interval becomes 10 s
		{9 * time.Second, "slow_down"},             // too soon for 10 s: now 15 s
		{15 * time.Second, "authorization_pending"},
		{14 * time.Second, "slow_down"}, // the interval stays grown
	} {
		clock.advance(step.wait)
		deviceTestMustError(t, deviceTestPoll(s, poll), http.StatusBadRequest, step.code)
	}
}

func TestOIDCDeviceRefused(t *testing.T) {
	s := newDeviceTestServer(t, newDeviceTestClock(0))
	s.createRealm("other")
	deviceTestClient(t, s, "other", map[string]any{"clientId": "tv", "clientType": "PUBLIC", "grantTypes": []string{identity.GrantDeviceCode}})
	deviceTestClient(t, s, "acme", map[string]any{"clientId": "web", "clientType": "PUBLIC"})
	deviceTestClient(t, s, "acme", map[string]any{"clientId": "radio", "clientType": "PUBLIC", "grantTypes": []string{identity.GrantDeviceCode}})
	secret := deviceTestClient(t, s, "acme", map[string]any{"clientId": "box", "grantTypes": []string{identity.GrantDeviceCode}})
	form := "Content-Type: application/x-www-form-urlencoded"
	authorize := func(realm, body string) *testResponse {
		return s.request(http.MethodPost, "/realms/"+realm+"/protocol/openid-connect/auth/device", body, form)
	}
	deviceCode := func(realm, body string) string {
		r := authorize(realm, body)
		mustStatus(t, r, http.StatusOK)
		return url.QueryEscape(r.object(t)["device_code"].(string))
	}
	tvCode := deviceCode("acme", "client_id=tv")
	otherRealmCode := deviceCode("other", "client_id=tv")
	// A confidential client authenticates at the device endpoint too.
	boxCode := deviceCode("acme", "client_id=box&client_secret="+url.QueryEscape(secret))

	for _, c := range []struct {
		name   string
		r      *testResponse
		status int
		code   string
	}{
		{"grant not allowed, device endpoint", authorize("acme", "client_id=web"), 400, "unauthorized_client"},
		{"unknown client", authorize("acme", "client_id=ghost"), 401, "invalid_client"},
		{"no client", authorize("acme", "scope=openid"), 400, "invalid_request"},
		{"confidential client without secret", authorize("acme", "client_id=box"), 401, "invalid_client"},
		{"confidential client, wrong secret", authorize("acme", "client_id=box&client_secret=wrong"), 401, "invalid_client"},
		{"scope not assigned", authorize("acme", "client_id=tv&scope=nope"), 400, "invalid_scope"},
		{"grant not allowed, token endpoint", deviceTestPoll(s, "client_id=web&device_code="+tvCode), 400, "unauthorized_client"},
		{"unknown device code", deviceTestPoll(s, "client_id=tv&device_code=nope"), 400, "invalid_grant"},
		{"user code as device code", deviceTestPoll(s, "client_id=tv&device_code=BCDF-GHJK"), 400, "invalid_grant"},
		{"no device code", deviceTestPoll(s, "client_id=tv"), 400, "invalid_request"},
		{"another client's device code", deviceTestPoll(s, "client_id=radio&device_code="+tvCode), 400, "invalid_grant"},
		{"another realm's device code", deviceTestPoll(s, "client_id=tv&device_code="+otherRealmCode), 400, "invalid_grant"},
		{"confidential client polling without secret", deviceTestPoll(s, "client_id=box&device_code="+boxCode), 401, "invalid_client"},
	} {
		t.Run(c.name, func(t *testing.T) {
			deviceTestMustError(t, c.r, c.status, c.code)
			if c.status == 401 && c.r.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("invalid_client without WWW-Authenticate")
			}
		})
	}
	// The refused polls did not touch the real ones.
	deviceTestMustError(t, deviceTestPoll(s, "client_id=tv&device_code="+tvCode), 400, "authorization_pending")
	deviceTestMustError(t, deviceTestPoll(s, "client_id=box&client_secret="+url.QueryEscape(secret)+"&device_code="+boxCode),
		400, "authorization_pending")

	// A disabled realm has no device endpoint or page.
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"enabled": false}), http.StatusOK)
	if r := authorize("acme", "client_id=tv"); r.Status != http.StatusNotFound {
		t.Errorf("device endpoint of a disabled realm: %d", r.Status)
	}
	if r := s.request(http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil, "Authorization: Bearer x"); r.Status != http.StatusNotFound {
		t.Errorf("userinfo of a disabled realm: %d", r.Status)
	}
	for _, path := range []string{"/realms/acme/device", "/realms/nope/device"} {
		if r := s.request(http.MethodGet, path, nil); r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), "<h1>Not found</h1>") {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
}

func TestOIDCDiscoveryAdvertisesDeviceAndUserinfo(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	r := s.request(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil)
	mustStatus(t, r, http.StatusOK)
	doc := r.object(t)
	iss := s.issuer("acme")
	if doc["device_authorization_endpoint"] != iss+"/protocol/openid-connect/auth/device" ||
		doc["userinfo_endpoint"] != iss+"/protocol/openid-connect/userinfo" {
		t.Fatalf("discovery %v", doc)
	}
	if grants := doc["grant_types_supported"].([]any); !slices.Contains(grants, any(identity.GrantDeviceCode)) {
		t.Fatalf("grant_types_supported %v", grants)
	}
}

// deviceTestStart starts a device flow for tv and returns its user code.
func deviceTestStart(t *testing.T, s *oidcTestServer) string {
	t.Helper()
	r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/auth/device", "client_id=tv&scope=phone",
		"Content-Type: application/x-www-form-urlencoded")
	mustStatus(t, r, http.StatusOK)
	return r.object(t)["user_code"].(string)
}

func TestOIDCDevicePage(t *testing.T) {
	s := newDeviceTestServer(t, newDeviceTestClock(0))
	s.createUser("acme", map[string]any{"username": "mallory", "password": deviceTestPassword, "enabled": false})
	page := s.url + "/realms/acme/device"
	userCode := deviceTestStart(t, s)

	t.Run("form", func(t *testing.T) {
		b := newDeviceTestBrowser(t)
		resp, err := b.client.Get(page + "?user_code=" + url.QueryEscape(userCode))
		if err != nil {
			t.Fatal(err)
		}
		status, body, err := b.read(page, resp)
		if err != nil || status != http.StatusOK {
			t.Fatalf("%d %v", status, err)
		}
		checkPageCSP(t, resp.Header, false)
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("headers %v", resp.Header)
		}
		if b.form.Get("user_code") != userCode || len(b.form.Get(deviceCSRFField)) != 43 {
			t.Fatalf("form %v", b.form)
		}
		if !strings.Contains(body, "Living room TV") || !strings.Contains(body, "<li>phone</li>") {
			t.Fatalf("the page does not say who asks for what: %s", body)
		}
		var csrf *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == signin.CSRFCookie {
				csrf = c
			}
		}
		// The form's token is bound to this cookie, which never shows in it.
		if csrf == nil || !csrf.HttpOnly || csrf.SameSite != http.SameSiteLaxMode || csrf.Secure || csrf.Path != "/realms/acme/" ||
			csrf.Value == "" || csrf.Value == b.form.Get(deviceCSRFField) {
			t.Fatalf("CSRF cookie %+v", csrf)
		}
		// The page escapes what it echoes.
		_, body, err = b.open(page + "?user_code=" + url.QueryEscape(`"><script>x()</script>`))
		if err != nil || strings.Contains(body, "<script>") {
			t.Fatalf("echoed markup: %v %s", err, body)
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		// An approval by the browser's session needs the page's token; one
		// that carries the credentials does not (TestDeviceDecisionsWithoutThePage).
		code := deviceTestStart(t, s)
		b := newDeviceTestBrowser(t)
		if _, _, err := b.open(page); err != nil {
			t.Fatal(err)
		}
		// A forged token, and a post from a browser without the cookie.
		status, body, err := b.submit(map[string]string{deviceCSRFField: strings.Repeat("A", 43), "user_code": code, "action": "approve"})
		if err != nil || status != http.StatusForbidden || !strings.Contains(body, enMsg(deviceMsgFormExpired)) {
			t.Fatalf("forged token: %d %v %s", status, err, body)
		}
		form := url.Values{deviceCSRFField: {b.form.Get(deviceCSRFField)}, "user_code": {code}, "action": {"approve"}}
		resp, err := http.PostForm(page, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("post without the cookie: %d", resp.StatusCode)
		}
		realm, err := s.store.GetRealm(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		normalized, _ := normalizeUserCode(code)
		if d, err := s.store.DeviceAuthorizationByUserCode(t.Context(), realm.ID, normalized); err != nil || d.Status != store.DevicePending {
			t.Fatalf("a refused post decided the device: %+v %v", d, err)
		}
	})

	t.Run("input errors", func(t *testing.T) {
		b := newDeviceTestBrowser(t)
		if _, _, err := b.open(page); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name    string
			changes map[string]string
			status  int
			message string
		}{
			{"no code", map[string]string{"action": "deny"}, 400, deviceMsgNoCode},
			{"malformed code", map[string]string{"user_code": "AEIO-U123", "action": "deny"}, 400, deviceMsgBadCode},
			{"unknown code", map[string]string{"user_code": "BBBB-BBBB", "action": "deny"}, 400, deviceMsgBadCode},
			{"no action", map[string]string{"user_code": userCode}, 400, deviceMsgBadAction},
			{"odd action", map[string]string{"user_code": userCode, "action": "maybe"}, 400, deviceMsgBadAction},
			{"approve without password", map[string]string{"user_code": userCode, "action": "approve", "username": "alice"}, 400, deviceMsgNoLogin},
			{"disabled user", map[string]string{"user_code": userCode, "action": "approve", "username": "mallory", "password": deviceTestPassword}, 403, deviceMsgDisabled},
		} {
			status, body, err := b.submit(c.changes)
			if err != nil || status != c.status || !strings.Contains(body, enMsg(c.message)) {
				t.Errorf("%s: %d %v, want %d %q; %s", c.name, status, err, c.status, c.message, body)
			}
		}
	})

	t.Run("wrong credentials and throttling", func(t *testing.T) {
		code := deviceTestStart(t, s)
		b := newDeviceTestBrowser(t)
		if _, _, err := b.open(page + "?user_code=" + url.QueryEscape(code)); err != nil {
			t.Fatal(err)
		}
		// An unknown user and a wrong password read the same.
		for i, login := range []map[string]string{
			{"username": "ghost", "password": deviceTestPassword},
			{"username": "alice", "password": "wrong"},
			{"username": "ALICE", "password": "wrong"},
			{"username": "alice", "password": "wrong again"},
			{"username": "nobody", "password": "x"},
		} {
			login["action"] = "approve"
			status, body, err := b.submit(login)
			if err != nil || status != http.StatusBadRequest || !strings.Contains(body, enMsg(deviceMsgBadLogin)) ||
				b.form.Get("username") != login["username"] || b.form.Get("password") != "" {
				t.Fatalf("attempt %d: %d %v %s", i, status, err, body)
			}
		}
		// Five failures on this code: even the right password waits now.
		status, body, err := b.submit(map[string]string{"action": "approve", "username": "alice", "password": deviceTestPassword})
		if err != nil || status != http.StatusTooManyRequests || !strings.Contains(body, enMsg(deviceMsgThrottled)) {
			t.Fatalf("after five failures: %d %v %s", status, err, body)
		}
		// Another code is not held up by this one's failures.
		if err := deviceTestApprove(newDeviceTestBrowser(t), page+"?user_code="+url.QueryEscape(deviceTestStart(t, s))); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("decided codes", func(t *testing.T) {
		code := deviceTestStart(t, s)
		b := newDeviceTestBrowser(t)
		if err := deviceTestApprove(b, page+"?user_code="+url.QueryEscape(code)); err != nil {
			t.Fatal(err)
		}
		// Approved once: neither approval nor denial again.
		if _, _, err := b.open(page); err != nil {
			t.Fatal(err)
		}
		for _, action := range []string{"approve", "deny"} {
			status, body, err := b.submit(map[string]string{"user_code": code, "action": action, "username": "alice", "password": deviceTestPassword})
			if err != nil || status != http.StatusBadRequest || !strings.Contains(body, enMsg(deviceMsgBadCode)) {
				t.Fatalf("%s of an approved code: %d %v %s", action, status, err, body)
			}
		}
	})
}

func TestOIDCDevicePageThrottlesGuessing(t *testing.T) {
	s := newDeviceTestServer(t, newDeviceTestClock(0))
	userCode := deviceTestStart(t, s)
	b := newDeviceTestBrowser(t)
	page := s.url + "/realms/acme/device"
	if _, _, err := b.open(page); err != nil {
		t.Fatal(err)
	}
	// Guessing user codes from one address: the address is held up after
	// deviceLimitPerIP misses, even for a real code.
	for i := range deviceLimitPerIP {
		guess := fmt.Sprintf("BCDF-%c%c%c%c", userCodeAlphabet[i%20], userCodeAlphabet[(i+1)%20], userCodeAlphabet[(i+2)%20], 'Z')
		if status, _, err := b.submit(map[string]string{"user_code": guess, "action": "deny"}); err != nil || status != http.StatusBadRequest {
			t.Fatalf("guess %d: %d %v", i, status, err)
		}
	}
	resp, err := b.client.PostForm(page, url.Values{deviceCSRFField: {b.form.Get(deviceCSRFField)}, "user_code": {userCode}, "action": {"deny"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("after %d misses: %d %v", deviceLimitPerIP, resp.StatusCode, resp.Header)
	}
	// Looking a code up is a guess too.
	_, body, err := b.open(page + "?user_code=" + url.QueryEscape(userCode))
	if err != nil || !strings.Contains(body, enMsg(deviceMsgThrottled)) || strings.Contains(body, "Living room TV") {
		t.Fatalf("lookup while held up: %v %s", err, body)
	}
}

func TestDeviceUserCodes(t *testing.T) {
	seen := map[string]bool{}
	counts := map[rune]int{}
	for range 2000 {
		code := newUserCode()
		if len(code) != userCodeLength || strings.Trim(code, userCodeAlphabet) != "" {
			t.Fatalf("user code %q", code)
		}
		seen[code] = true
		for _, r := range code {
			counts[r]++
		}
		if got, ok := normalizeUserCode(strings.ToLower(formatUserCode(code))); !ok || got != code {
			t.Fatalf("normalize(format(%q)) = %q %v", code, got, ok)
		}
	}
	if len(seen) < 1999 {
		t.Fatalf("%d distinct codes of 2000", len(seen))
	}
	// 16000 letters over 20: each near 800.
	for _, r := range userCodeAlphabet {
		if counts[r] < 650 || counts[r] > 950 {
			t.Fatalf("letter %c drawn %d times of 16000: not uniform", r, counts[r])
		}
	}
	for _, typed := range []string{"", "BCDF-GHJ", "BCDF-GHJKL", "ABCD-EFGH", "BCDF-GHJ1", "BCDF–GHJK", "ßCDF-GHJK"} {
		if _, ok := normalizeUserCode(typed); ok {
			t.Errorf("normalize accepted %q", typed)
		}
	}
	if got, ok := normalizeUserCode(" bcdf ghjk "); !ok || got != "BCDFGHJK" {
		t.Errorf("normalize with spaces: %q %v", got, ok)
	}
}
