package loadtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// broker: a brokered sign-in. The load realm has an OpenID Connect
// identity provider that is another realm of the same server; each
// request is a new browser of a person signed in there (an SSO session
// upstream), so that what is measured is brokering, not a password hash:
// the application's authorization request with an idp hint, the redirect
// to the upstream, its code straight back, the callback's code exchange
// and ID token check upstream, the local sign-in, the code at the
// application's redirect URI, and the application's exchange of it.

const (
	upstreamRealm     = "loadtest-upstream"
	brokerAlias       = "upstream"
	brokerClient      = "broker" // the load realm's client at the upstream
	brokerApp         = "web"    // the application of the load realm
	brokerAppRedirect = "https://app.loadtest.example/callback"
)

func upstreamUsername(w int) string { return fmt.Sprintf("upstream%03d", w) }

// brokerSetup is what the broker's workers need of prepare.
type brokerSetup struct {
	appSecret string
}

// prepareBroker makes the upstream realm and its client for the load
// realm, the load realm's provider (read from the upstream's discovery
// document, as an administrator gives an issuer) and application, all
// through the admin API.
func prepareBroker(ctx context.Context, e *loadEnv) (func(context.Context) error, error) {
	if err := e.admin(ctx, http.MethodPost, "/admin/realms", map[string]any{"name": upstreamRealm, "eventsEnabled": !e.cfg.NoEvents},
		http.StatusCreated, nil); err != nil {
		return nil, err
	}
	issuer := func(realm string) string { return e.srv.base + "/realms/" + realm }
	var up struct{ Secret string }
	if err := e.admin(ctx, http.MethodPost, "/admin/realms/"+upstreamRealm+"/clients", map[string]any{"clientId": brokerClient,
		"redirectUris": []string{issuer(loadRealm) + "/broker/" + brokerAlias + "/callback"},
		"grantTypes":   []string{grantAuthorizationCode}}, http.StatusCreated, &up); err != nil {
		return nil, err
	}
	if err := e.admin(ctx, http.MethodPost, "/admin/realms/"+loadRealm+"/identity-providers", map[string]any{
		"alias": brokerAlias, "providerType": "oidc", "displayName": "Upstream", "issuer": issuer(upstreamRealm),
		"clientId": brokerClient, "clientSecret": up.Secret}, http.StatusCreated, nil); err != nil {
		return nil, err
	}
	var app struct{ Secret string }
	if err := e.admin(ctx, http.MethodPost, "/admin/realms/"+loadRealm+"/clients", map[string]any{"clientId": brokerApp,
		"redirectUris": []string{brokerAppRedirect}, "grantTypes": []string{grantAuthorizationCode}}, http.StatusCreated, &app); err != nil {
		return nil, err
	}
	e.broker = &brokerSetup{appSecret: app.Secret}
	return noRelease, nil
}

// brokerSignIn is one brokered sign-in, in browser b: from the
// application's authorization request to its tokens. A page that asks
// for a password upstream is filled in when password is set (the first
// sign-in, which makes the upstream session) and an error otherwise. shed
// is the application's exchange refused under overload.
func (e *loadEnv) brokerSignIn(ctx context.Context, c *loadClient, b *loadBrowser, username, password string) (shed bool, err error) {
	verifier := randomURLToken()
	challenge := sha256.Sum256([]byte(verifier))
	state := randomURLToken()
	q := url.Values{"client_id": {brokerApp}, "redirect_uri": {brokerAppRedirect}, "response_type": {"code"},
		"scope": {"openid"}, "state": {state}, "nonce": {randomURLToken()}, "kc_idp_hint": {brokerAlias},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(challenge[:])}, "code_challenge_method": {"S256"}}
	atApp := func(u *url.URL) bool { return strings.HasPrefix(u.String(), brokerAppRedirect) }
	p, err := b.open(ctx, c.base+"/realms/"+loadRealm+"/protocol/openid-connect/auth?"+q.Encode(), atApp)
	if err != nil {
		return false, err
	}
	if password != "" && p.status == http.StatusOK {
		if p, err = b.signIn(ctx, p, username, password, atApp); err != nil {
			return false, err
		}
	}
	back, err := p.url.Parse(p.header.Get("Location"))
	if err != nil || p.status != http.StatusFound && p.status != http.StatusSeeOther || !atApp(back) {
		return false, fmt.Errorf("the sign-in ended at %s: %d %.300s", p.url.Path, p.status, p.body)
	}
	if back.Query().Get("state") != state || back.Query().Get("code") == "" {
		return false, fmt.Errorf("the application got %s", back.RawQuery)
	}
	body, shed, err := c.do(ctx, http.MethodPost, tokenPath(loadRealm), url.Values{"grant_type": {grantAuthorizationCode},
		"code": {back.Query().Get("code")}, "redirect_uri": {brokerAppRedirect}, "code_verifier": {verifier}},
		basicAuth(brokerApp, e.broker.appSecret), http.StatusOK)
	if err != nil || shed {
		return shed, err
	}
	var tok loadTokens
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return false, fmt.Errorf("no access token in %.200s", body)
	}
	return false, nil
}

// randomURLToken is 256 random bits, base64url: 43 characters, the
// shortest PKCE verifier RFC 7636 allows.
func randomURLToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// brokerWorkers each have a person of the upstream realm, made through
// the admin API, sign in once with a password (the first brokered
// sign-in, which also makes the local user); each request is then a new
// browser holding that upstream session.
func brokerWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c := t.client(hc)
	upstream, err := url.Parse(c.base + "/realms/" + upstreamRealm + "/")
	if err != nil {
		return nil, err
	}
	sessions := make([][]*http.Cookie, n)
	err = eachWorker(n, func(w int) error {
		name := upstreamUsername(w)
		err := e.admin(ctx, http.MethodPost, "/admin/realms/"+upstreamRealm+"/users", map[string]any{"username": name,
			"email": name + "@upstream.loadtest.example", "emailVerified": true, "firstName": "Upstream", "lastName": name,
			"password": e.password}, http.StatusCreated, nil)
		if err != nil {
			return err
		}
		b := newLoadBrowser(hc)
		if _, err := e.brokerSignIn(ctx, c, b, name, e.password); err != nil {
			return err
		}
		for _, ck := range b.jar.Cookies(upstream) {
			sessions[w] = append(sessions[w], &http.Cookie{Name: ck.Name, Value: ck.Value, Path: upstream.Path})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	calls := make([]loadCall, n)
	for w := range n {
		calls[w] = func(ctx context.Context) (bool, error) {
			b := newLoadBrowser(hc)
			b.jar.SetCookies(upstream, sessions[w])
			return e.brokerSignIn(ctx, c, b, upstreamUsername(w), "")
		}
	}
	return calls, nil
}
