package app

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// eventsTestActivity drives every path that records a login event here,
// over loopback HTTP, and returns alice's SSO session IDs: logged out by
// refresh token, by id_token_hint, and by a logout token received.
func eventsTestActivity(t *testing.T, s *oidcTestServer, fx *logoutTestRealm, secret string) (byToken, byHint, byBackchannel string) {
	t.Helper()
	ctx := context.Background()
	cfg := clientcredentials.Config{ClientID: "reports", ClientSecret: secret, TokenURL: s.issuer("acme") + "/protocol/openid-connect/token"}
	tok, err := cfg.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string, user, pass string) int {
		req, _ := http.NewRequest(http.MethodPost, s.issuer("acme")+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Refused: a scope the client does not have.
	if status := post("/protocol/openid-connect/token", "grant_type=client_credentials&scope=nope", "reports", secret); status != 400 {
		t.Fatalf("client credentials with an unknown scope: %d", status)
	}
	for _, token := range []string{tok.AccessToken, "garbage"} {
		post("/protocol/openid-connect/token/introspect", "token="+url.QueryEscape(token), "reports", secret)
	}
	post("/protocol/openid-connect/revoke", "token="+url.QueryEscape(tok.AccessToken), "reports", secret)

	_, refresh := fx.login("web")
	post("/protocol/openid-connect/revoke", "token="+url.QueryEscape(refresh["web"]), "web", fx.secrets["web"])
	byToken, refresh = fx.login("web")
	if status := post("/protocol/openid-connect/logout", "refresh_token="+url.QueryEscape(refresh["web"]), "web", fx.secrets["web"]); status != 204 {
		t.Fatalf("logout by refresh token: %d", status)
	}
	if status := post("/protocol/openid-connect/logout", "refresh_token=nope", "web", fx.secrets["web"]); status != 400 {
		t.Fatalf("logout by unknown refresh token: %d", status)
	}
	byHint, _ = fx.login("web")
	page := fx.get(logoutTestBrowser(t), url.Values{"id_token_hint": {fx.idToken("web", byHint, s.app.now().Add(time.Minute))},
		"post_logout_redirect_uri": {logoutTestBye}})
	if page.status != http.StatusFound {
		t.Fatalf("logout by hint: %d", page.status)
	}
	byBackchannel, _ = fx.login("web")
	now := s.app.now()
	lt := fx.sign("logout+jwt", map[string]any{"iss": s.issuer("acme"), "aud": "web", "sid": byBackchannel, "iat": now.Unix(),
		"jti": uuid.NewString(), "events": map[string]any{backchannelEvent: map[string]any{}}})
	if status := post("/protocol/openid-connect/logout/backchannel", "logout_token="+lt, "", ""); status != 200 {
		t.Fatalf("back-channel logout: %d", status)
	}
	return byToken, byHint, byBackchannel
}

func TestLoginEventsRecorded(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	// Introspection is recorded only when listed, as in Keycloak.
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true,
		"enabledEventTypes": []string{"CLIENT_LOGIN", "CLIENT_LOGIN_ERROR", "INTROSPECT_TOKEN", "INTROSPECT_TOKEN_ERROR",
			"REVOKE_GRANT", "LOGOUT", "LOGOUT_ERROR"}}), http.StatusOK)
	fx.realm.EventsEnabled = true
	secret := s.machineClient(t, "acme", "reports")
	sa := s.admin(http.MethodGet, "/admin/realms/acme/clients/reports/service-account-user", nil).object(t)["id"].(string)
	byToken, byHint, byBackchannel := eventsTestActivity(t, s, fx, secret)

	var events []loginEventRep
	s.admin(http.MethodGet, "/admin/realms/acme/events", nil).decode(t, &events)
	type key struct{ typ, client, user, session, err string }
	got := map[key]loginEventRep{}
	for _, e := range events {
		if e.IPAddress != "127.0.0.1" {
			t.Errorf("%s event from %q, want the loopback caller", e.Type, e.IPAddress)
		}
		got[key{e.Type, e.ClientID, e.UserID, e.SessionID, e.Error}] = e
	}
	for _, want := range []key{
		{"CLIENT_LOGIN", "reports", sa, "", ""},
		{"CLIENT_LOGIN_ERROR", "reports", sa, "", "invalid_scope"},
		{"INTROSPECT_TOKEN", "reports", sa, "", ""},
		{"INTROSPECT_TOKEN_ERROR", "reports", "", "", "invalid_token"},
		{"REVOKE_GRANT", "reports", sa, "", ""},
		{"LOGOUT", "web", fx.user, byToken, ""},
		{"LOGOUT_ERROR", "web", "", "", "invalid_grant"},
		{"LOGOUT", "web", fx.user, byHint, ""},
		{"LOGOUT", "web", fx.user, byBackchannel, ""},
	} {
		if _, ok := got[want]; !ok {
			t.Errorf("no event %+v among %+v", want, events)
		}
	}
	// The refresh token revoked belonged to an OAuth session under alice's SSO one.
	revokes := 0
	for k, e := range got {
		if k.typ == "REVOKE_GRANT" && k.client == "web" && k.user == fx.user && k.session != "" && e.Details["token_type"] == "refresh_token" {
			revokes++
		}
	}
	if revokes != 1 {
		t.Errorf("refresh token revocation not recorded: %+v", events)
	}
	if e := got[key{"LOGOUT", "web", fx.user, byHint, ""}]; e.Details["redirect_uri"] != logoutTestBye {
		t.Errorf("logout by hint details %v", e.Details)
	}
	if e := got[key{"LOGOUT", "web", fx.user, byBackchannel, ""}]; e.Details["source"] != "backchannel" {
		t.Errorf("back-channel logout details %v", e.Details)
	}
}

// Without a list, a realm records Keycloak's default set: every type but
// refresh, introspection and userinfo. A list records its types alone.
func TestLoginEventsDefaultTypes(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	cfg := s.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}).object(t)
	if types, ok := cfg["enabledEventTypes"].([]any); !ok || len(types) != 0 {
		t.Fatalf("events config %v: want enabledEventTypes [] for the default set", cfg)
	}
	secret := s.machineClient(t, "acme", "reports")
	eventsTestActivity(t, s, fx, secret)
	count := func() map[string]int {
		var events []loginEventRep
		s.admin(http.MethodGet, "/admin/realms/acme/events?max=1000", nil).decode(t, &events)
		n := map[string]int{}
		for _, e := range events {
			n[e.Type]++
		}
		return n
	}
	n := count()
	for _, typ := range []string{"CLIENT_LOGIN", "CLIENT_LOGIN_ERROR", "REVOKE_GRANT", "LOGOUT", "LOGOUT_ERROR"} {
		if n[typ] == 0 {
			t.Errorf("no %s event by default: %v", typ, n)
		}
	}
	for _, typ := range []string{"INTROSPECT_TOKEN", "INTROSPECT_TOKEN_ERROR"} {
		if n[typ] != 0 {
			t.Errorf("%d %s events by default, want none: %v", n[typ], typ, n)
		}
	}

	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/events", nil), http.StatusNoContent)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/events/config",
		map[string]any{"enabledEventTypes": []string{"INTROSPECT_TOKEN"}}), http.StatusOK)
	eventsTestActivity(t, s, fx, secret)
	if n := count(); n["INTROSPECT_TOKEN"] != 1 || len(n) != 1 {
		t.Fatalf("events with only INTROSPECT_TOKEN enabled: %v", n)
	}
	for _, bad := range []any{[]string{"LOGIN", "NOPE"}, "LOGIN", []int{1}} {
		mustError(t, s.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"enabledEventTypes": bad}),
			http.StatusBadRequest, "invalid_field", "enabledEventTypes")
	}
}

func TestLoginEventsOff(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": false}), http.StatusOK)
	secret := s.machineClient(t, "acme", "reports")
	eventsTestActivity(t, s, fx, secret)
	var events []loginEventRep
	s.admin(http.MethodGet, "/admin/realms/acme/events", nil).decode(t, &events)
	if len(events) != 0 {
		t.Fatalf("%d events recorded with events off: %+v", len(events), events)
	}
}

// The user grants record their login events: a failed and a good sign-in
// on the login page, the code exchange, refreshes good and bad, and a
// client that fails to authenticate.
func TestLoginEventsOfUserGrants(t *testing.T) {
	e := newCodeflowEnv(t)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true,
		"enabledEventTypes": []string{"LOGIN", "LOGIN_ERROR", "CODE_TO_TOKEN", "REFRESH_TOKEN", "REFRESH_TOKEN_ERROR",
			"CLIENT_LOGIN_ERROR"}}), http.StatusOK)
	e.client("spa", map[string]any{"clientType": "PUBLIC"})
	cfg := e.oauth2Config("spa", "", "openid")
	b := e.browser()
	verifier := oauth2.GenerateVerifier()
	login := b.get(cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("login_hint", "alice")))
	page := b.get(login.location(t).String())
	if bad := b.submit(page, map[string]string{"password": "wrong-password"}); bad.status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", bad.status)
	}
	page = b.get(login.location(t).String())
	back := e.redirectedBack(b.submit(page, map[string]string{"password": codeflowPassword}))
	tok, err := cfg.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.TokenSource(t.Context(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}, "client_id": {"spa"}}); status != 400 {
		t.Fatalf("unknown refresh token: %d", status)
	}
	if status, _ := e.tokenRequest(url.Values{"grant_type": {"client_credentials"}}, codeflowBasic("ghost", "x")); status != 401 {
		t.Fatalf("unknown client: %d", status)
	}

	var events []map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/events?max=100", nil).decode(t, &events)
	var got []string
	for i := len(events) - 1; i >= 0; i-- { // oldest first
		ev := events[i]
		got = append(got, ev["type"].(string)+"/"+ev["error"].(string))
		if ev["type"] == "LOGIN" && (ev["userId"] != e.aliceID || ev["sessionId"] == "" || ev["clientId"] != "spa" || ev["ipAddress"] != "127.0.0.1") {
			t.Errorf("LOGIN event %v", ev)
		}
	}
	want := []string{"LOGIN_ERROR/invalid_user_credentials", "LOGIN/", "CODE_TO_TOKEN/", "REFRESH_TOKEN/",
		"REFRESH_TOKEN_ERROR/invalid_grant", "CLIENT_LOGIN_ERROR/invalid_client"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v\nwant %v", got, want)
	}
}
