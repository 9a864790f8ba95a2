package app

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/descope/virtualwebauthn"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// consoleSignIn signs an administrator in as the admin console does: the
// authorization code flow with PKCE at the system realm, as the console's
// client. enrol is called with the TOTP setup page when the realm asks for
// an enrolment, code with the TOTP page when it asks for a code; it answers
// the access token.
func (e *codeflowEnv) consoleSignIn(b *codeflowBrowser, username, password string, second func(page *codeflowPage) *codeflowPage) string {
	e.t.Helper()
	provider, err := oidc.NewProvider(e.t.Context(), e.issuer(SystemRealmName))
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: ConsoleClientID, Endpoint: provider.Endpoint(), RedirectURL: e.url + ConsolePath + "/callback",
		Scopes: []string{oidc.ScopeOpenID}}
	verifier := oauth2.GenerateVerifier()
	p := b.follow(e.url, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
	p = b.submit(p, map[string]string{"username": username, "password": password})
	if p.status == http.StatusSeeOther && strings.HasPrefix(p.location(e.t).Path, "/realms/"+SystemRealmName+"/") {
		p = second(b.follow(e.url, p.location(e.t).String()))
	}
	if p.status/100 != 3 {
		e.t.Fatalf("console sign-in: status %d, want a redirect back; body %s", p.status, p.body)
	}
	loc := p.location(e.t)
	if loc.Path != ConsolePath+"/callback" {
		e.t.Fatalf("console sign-in: redirected to %s", loc)
	}
	tok, err := cfg.Exchange(e.t.Context(), loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		e.t.Fatalf("console code exchange: %v", err)
	}
	return tok.AccessToken
}

var totpSetupSecret = regexp.MustCompile(`<dd><code>([A-Z2-7 ]+)</code></dd>`)

// TestAdminAccountEnrolment: an account made without a password gets a
// one-time link; the password chosen there signs in to the console only
// with a second factor (the system realm asks one by default), enrolled
// at the first sign-in; the console's token then acts with the account's
// permissions, and an admin token of the password login needs the code.
func TestAdminAccountEnrolment(t *testing.T) {
	e := newCodeflowEnv(t)
	e.totpAlign()
	r := e.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "ada", "email": "ada@example.test",
		"permissions": []string{"users:write", "realm:read", "users:read"}})
	mustStatus(t, r, http.StatusCreated)
	created := r.object(t)
	link, _ := created["enrolmentLink"].(string)
	if !strings.HasPrefix(link, e.url+"/realms/"+SystemRealmName+"/reset-password?token=") || created["passwordSet"] != false {
		t.Fatalf("created %v", created)
	}
	if perms := created["permissions"]; !slices.Equal(toStrings(perms), []string{"realm:read", "users:read", "users:write"}) {
		t.Fatalf("permissions %v", perms)
	}
	// The link is never shown again, nor kept in the admin event.
	if got := e.admin(http.MethodGet, "/admin/accounts/"+created["id"].(string), nil); strings.Contains(string(got.Body), "enrolmentLink") {
		t.Fatalf("the link shown again: %s", got.Body)
	}

	b := e.browser()
	page := b.get(link)
	if page.status != http.StatusOK {
		t.Fatalf("enrolment page: %d %s", page.status, page.body)
	}
	if done := b.submit(page, map[string]string{"password": codeflowPassword, "confirm": codeflowPassword}); done.status >= 400 {
		t.Fatalf("choosing the password: %d %s", done.status, done.body)
	}
	if again := b.get(link); again.status < 400 {
		t.Fatalf("the link worked twice: %d", again.status)
	}

	// No second factor yet: the password login refuses, and says where to
	// enrol one.
	login := func(body map[string]any) *testResponse {
		return e.request(http.MethodPost, "/admin/auth/login", body)
	}
	mustError(t, login(map[string]any{"username": "ada", "password": codeflowPassword}), http.StatusForbidden, "forbidden", "")

	var secret string
	token := e.consoleSignIn(b, "ada", codeflowPassword, func(setup *codeflowPage) *codeflowPage {
		m := totpSetupSecret.FindStringSubmatch(string(setup.body))
		if m == nil {
			t.Fatalf("the first console sign-in did not ask for an enrolment: %s", setup.body)
		}
		secret = strings.ReplaceAll(m[1], " ", "")
		codes := b.submit(setup, map[string]string{"code": totpTestCode(t, secret, e.clock.now())})
		return b.submit(codes, nil)
	})
	me := e.request(http.MethodGet, "/admin/auth/me", nil, authBearer(token))
	mustStatus(t, me, http.StatusOK)
	if got := me.object(t); got["username"] != "ada" || !slices.Equal(toStrings(got["permissions"]), []string{"realm:read", "users:read", "users:write"}) {
		t.Fatalf("me %v", got)
	}
	e.eventsOn()
	mustStatus(t, e.request(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "bob"}, authBearer(token)), http.StatusCreated)
	mustError(t, e.request(http.MethodPost, "/admin/realms", map[string]any{"name": "nope"}, authBearer(token)), http.StatusForbidden, "forbidden", "")
	// Admin events name the person who acted.
	var recorded []events.AdminEventRep
	ev := e.admin(http.MethodGet, "/admin/realms/acme/admin-events", nil)
	mustStatus(t, ev, http.StatusOK)
	ev.decode(t, &recorded)
	if len(recorded) == 0 || recorded[0].AuthDetails.UserID != created["id"] || recorded[0].AuthDetails.Username != "ada" {
		t.Fatalf("admin events %+v, want ada's user creation first", recorded)
	}

	// The password login needs the code now, and takes it.
	e.clock.advance(identity.TOTPPeriod * time.Second)
	mustError(t, login(map[string]any{"username": "ada", "password": codeflowPassword}), http.StatusBadRequest, "invalid_field", "totp")
	mustError(t, login(map[string]any{"username": "ada", "password": codeflowPassword, "totp": "000000"}),
		http.StatusUnauthorized, "invalid_credentials", "")
	r = login(map[string]any{"username": "ada", "password": codeflowPassword, "totp": totpTestCode(t, secret, e.clock.now())})
	mustStatus(t, r, http.StatusOK)
	adminToken, _ := r.object(t)["accessToken"].(string)
	mustStatus(t, e.request(http.MethodGet, "/admin/realms/acme/users", nil, authBearer(adminToken)), http.StatusOK)

	// Disabled, both tokens stop at once.
	mustStatus(t, e.admin(http.MethodPut, "/admin/accounts/"+created["id"].(string), map[string]any{"enabled": false}), http.StatusOK)
	mustError(t, e.request(http.MethodGet, "/admin/auth/me", nil, authBearer(token)), http.StatusUnauthorized, "unauthorized", "")
	mustError(t, e.request(http.MethodGet, "/admin/auth/me", nil, authBearer(adminToken)), http.StatusUnauthorized, "unauthorized", "")
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}

// TestAdminAccountPermissions: an account acts with its permissions only,
// in its one realm when confined to it; nobody grants what they lack; the
// system realm's routes need system:manage; nobody changes their own
// account; the changes are the system realm's admin events.
func TestAdminAccountPermissions(t *testing.T) {
	s := newTestServer(t)
	s.systemMFA(false)
	s.createRealm("acme")
	s.createRealm("other")
	const password = "a-long-enough-password"
	create := func(body map[string]any) map[string]any {
		t.Helper()
		body["password"] = password
		r := s.admin(http.MethodPost, "/admin/accounts", body)
		mustStatus(t, r, http.StatusCreated)
		return r.object(t)
	}
	token := func(username string) string { return authLogin(t, s, username, password) }

	create(map[string]any{"username": "acme-reader", "permissions": []string{"users:read"}, "realm": "acme"})
	reader := token("acme-reader")
	mustStatus(t, s.request(http.MethodGet, "/admin/realms/acme/users", nil, authBearer(reader)), http.StatusOK)
	mustError(t, s.request(http.MethodGet, "/admin/realms/other/users", nil, authBearer(reader)), http.StatusUnauthorized, "unauthorized", "")
	mustError(t, s.request(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "x"}, authBearer(reader)),
		http.StatusForbidden, "forbidden", "")
	// A confined account acts on its realm's routes alone, but may ask who
	// it is: the answer names its realm (the console needs it to sign in).
	me := s.request(http.MethodGet, "/admin/auth/me", nil, authBearer(reader))
	mustStatus(t, me, http.StatusOK)
	if got := me.object(t)["realm"]; got != "acme" {
		t.Fatalf("a confined account's me names the realm %v, want acme", got)
	}
	mustError(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(reader)), http.StatusUnauthorized, "unauthorized", "")

	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"confined with a system permission", map[string]any{"username": "a1", "realm": "acme", "permissions": []string{"system:read"}}, "permissions"},
		{"confined with every permission", map[string]any{"username": "a2", "realm": "acme"}, "permissions"},
		{"confined to the system realm", map[string]any{"username": "a3", "realm": SystemRealmName, "permissions": []string{"users:read"}}, "realm"},
		{"unknown permission", map[string]any{"username": "a4", "permissions": []string{"users:fly"}}, "permissions"},
		{"no permission", map[string]any{"username": "a5", "permissions": []string{}}, "permissions"},
		{"unknown realm", map[string]any{"username": "a6", "realm": "nope", "permissions": []string{"users:read"}}, "realm"},
		{"all beside others", map[string]any{"username": "a7", "permissions": []string{"all", "users:read"}}, "permissions"},
		{"no username", map[string]any{"permissions": []string{"users:read"}}, "username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, "/admin/accounts", tc.body), http.StatusBadRequest, "invalid_field", tc.field)
		})
	}

	// A manager of admins who lacks users:write grants it to nobody.
	create(map[string]any{"username": "manager", "permissions": []string{"system:manage", "system:read", "users:read"}})
	manager := token("manager")
	mustError(t, s.request(http.MethodPost, "/admin/accounts", map[string]any{"username": "b1", "permissions": []string{"users:write"}},
		authBearer(manager)), http.StatusForbidden, "forbidden", "")
	made := s.request(http.MethodPost, "/admin/accounts", map[string]any{"username": "b2", "permissions": []string{"users:read"}}, authBearer(manager))
	mustStatus(t, made, http.StatusCreated)
	b2 := made.object(t)["id"].(string)
	mustError(t, s.request(http.MethodPut, "/admin/accounts/"+b2, map[string]any{"permissions": []string{"all"}}, authBearer(manager)),
		http.StatusForbidden, "forbidden", "")
	// Nor changes someone holding more than they do.
	root := create(map[string]any{"username": "root2"})["id"].(string)
	mustError(t, s.request(http.MethodPut, "/admin/accounts/"+root, map[string]any{"enabled": false}, authBearer(manager)),
		http.StatusForbidden, "forbidden", "")
	mustError(t, s.request(http.MethodDelete, "/admin/accounts/"+root, nil, authBearer(manager)), http.StatusForbidden, "forbidden", "")

	// Every realm's users but not system:manage: the system realm, whose
	// users are the administrators, stays out of reach.
	create(map[string]any{"username": "realms-admin", "permissions": []string{"users:read", "users:write", "realm:read"}})
	ra := token("realms-admin")
	mustStatus(t, s.request(http.MethodGet, "/admin/realms/other/users", nil, authBearer(ra)), http.StatusOK)
	mustError(t, s.request(http.MethodGet, "/admin/realms/"+SystemRealmName+"/users", nil, authBearer(ra)), http.StatusForbidden, "forbidden", "")
	mustError(t, s.request(http.MethodPut, "/admin/realms/"+SystemRealmName+"/users/"+root+"/reset-password",
		map[string]any{"value": "another-long-password"}, authBearer(ra)), http.StatusForbidden, "forbidden", "")

	// Nobody disables or deletes their own account.
	rootToken := token("root2")
	mustError(t, s.request(http.MethodPut, "/admin/accounts/"+root, map[string]any{"enabled": false}, authBearer(rootToken)),
		http.StatusConflict, "invalid_state", "")
	mustError(t, s.request(http.MethodDelete, "/admin/accounts/"+root, nil, authBearer(rootToken)), http.StatusConflict, "invalid_state", "")
	// Another administrator deletes it: its token stops.
	mustStatus(t, s.admin(http.MethodDelete, "/admin/accounts/"+b2, nil), http.StatusNoContent)
	mustStatus(t, s.request(http.MethodDelete, "/admin/accounts/"+root, nil, authBearer(manager)), http.StatusForbidden)
	mustStatus(t, s.admin(http.MethodDelete, "/admin/accounts/"+root, nil), http.StatusNoContent)
	mustError(t, s.request(http.MethodGet, "/admin/auth/me", nil, authBearer(rootToken)), http.StatusUnauthorized, "unauthorized", "")

	// The system realm is never deleted, listed among the realms, nor
	// replaced by an import.
	mustError(t, s.admin(http.MethodDelete, "/admin/realms/"+SystemRealmName, nil), http.StatusConflict, "invalid_state", "")
	if strings.Contains(string(s.admin(http.MethodGet, "/admin/realms", nil).Body), SystemRealmName) {
		t.Fatal("the system realm is listed among the realms")
	}

	// The changes to accounts are the system realm's admin events, each
	// naming who made it.
	var recorded []events.AdminEventRep
	ev := s.admin(http.MethodGet, "/admin/realms/"+SystemRealmName+"/admin-events?resourceTypes=ADMIN_ACCOUNT", nil)
	mustStatus(t, ev, http.StatusOK)
	ev.decode(t, &recorded)
	var byManager bool
	for _, e := range recorded {
		if strings.Contains(string(e.Representation), "token=") {
			t.Errorf("an enrolment link in an admin event: %s", e.Representation)
		}
		if e.OperationType == "CREATE" && e.AuthDetails.Username == "manager" && e.ResourcePath == "accounts/"+b2 {
			byManager = true
		}
	}
	if !byManager || len(recorded) < 7 {
		t.Fatalf("admin events %+v: want every change, the manager's creation of b2 among them", recorded)
	}
}

// TestAdminAccountLockout: the system realm's brute-force lockout holds
// the password login, and each refusal is a login event of that realm;
// past the lockout, the admin login's own flood guard answers 429.
func TestAdminAccountLockout(t *testing.T) {
	s := newTestServer(t)
	s.systemMFA(false)
	sys, err := s.store.GetRealm(t.Context(), SystemRealmName)
	if err != nil {
		t.Fatal(err)
	}
	sys.MaxLoginFailures = 3
	if err := s.store.UpdateRealm(t.Context(), sys); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, s.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "ops", "password": "a-long-enough-password"}),
		http.StatusCreated)
	for range 3 {
		mustError(t, s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": "ops", "password": "wrong-password"}),
			http.StatusUnauthorized, "invalid_credentials", "")
	}
	mustError(t, s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": "ops", "password": "a-long-enough-password"}),
		http.StatusUnauthorized, "invalid_credentials", "")
	var evs []loginEventRep
	r := s.admin(http.MethodGet, "/admin/realms/"+SystemRealmName+"/events?type=LOGIN_ERROR", nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &evs)
	if len(evs) != 5 || evs[0].Error != "user_temporarily_disabled" || evs[0].ClientID != adminAPIClient {
		t.Fatalf("login events %+v: want 3 refusals, the lockout and a refusal for it", evs)
	}
	// Unlocked by an administrator holding system:manage, it signs in.
	user, err := s.systemUser("ops")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/"+SystemRealmName+"/brute-force/users/"+user.ID+"/unlock", nil),
		http.StatusNoContent)
	authLogin(t, s, "ops", "a-long-enough-password")
}

// TestAdminUsersMovedIntoSystemRealm: the password-only admin users of
// earlier versions become administrators with every permission at the
// first start, their passwords kept.
func TestAdminUsersMovedIntoSystemRealm(t *testing.T) {
	s := newTestServer(t)
	ctx := t.Context()
	if err := s.store.CreateAdminUser(ctx, &store.AdminUser{ID: "5e7a1d2c-0000-4000-8000-0000000000a1", Username: "legacy",
		PasswordHash: identity.Argon2idHash("legacy-password"), CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	a2, err := New(ctx, s.store, s.app.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s2 := &testServer{t: t, app: a2, store: s.store, handler: a2.Handler(), dbPath: s.dbPath}
	s2.systemMFA(false)
	tok := authLogin(t, s2, "legacy", "legacy-password")
	me := s2.request(http.MethodGet, "/admin/auth/me", nil, authBearer(tok))
	mustStatus(t, me, http.StatusOK)
	if got := me.object(t); got["id"] != "5e7a1d2c-0000-4000-8000-0000000000a1" || len(toStrings(got["permissions"])) != len(authz.All) {
		t.Fatalf("me %v", got)
	}
	if left, err := s.store.ListAdminUsers(ctx); err != nil || len(left) != 0 {
		t.Fatalf("admin users left %v %v", left, err)
	}
}

// TestAdminAccountPasskey: an administrator may enrol a passkey instead
// of an authenticator app at the first console sign-in; from then on the
// passkey is the console's second step, and the password login, which
// cannot ask for it, sends the administrator to the console.
func TestAdminAccountPasskey(t *testing.T) {
	e := newWebAuthnEnv(t)
	mustStatus(t, e.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "grace", "password": codeflowPassword}),
		http.StatusCreated)
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	sysWebAuthn := e.url + "/realms/" + SystemRealmName + "/webauthn"
	b := e.browser()
	token := e.consoleSignIn(b, "grace", codeflowPassword, func(setup *codeflowPage) *codeflowPage {
		p := b.get(pageLink(t, setup, `[^"]*/realms/`+SystemRealmName+`/webauthn\?authRequestID=[^"]*`))
		mustPage(t, p, http.StatusOK, "Register a security key")
		f := webauthnForm(t, p, "register")
		id, opts := pageCeremony(t, b, sysWebAuthn+"/register/options", map[string]any{"authRequestID": f.fields.Get("authRequestID")},
			"X-CSRF-Token: "+f.fields.Get("csrf"))
		return webauthnSubmit(b, p, f, id, e.attest(key, opts, ""), map[string]string{"name": "grace's key"})
	})
	me := e.request(http.MethodGet, "/admin/auth/me", nil, authBearer(token))
	mustStatus(t, me, http.StatusOK)
	list := e.admin(http.MethodGet, "/admin/accounts", nil)
	mustStatus(t, list, http.StatusOK)
	if !strings.Contains(string(list.Body), `"passkeys":1`) {
		t.Fatalf("accounts after the enrolment: %s", list.Body)
	}

	var asked bool
	b = e.browser()
	e.consoleSignIn(b, "grace", codeflowPassword, func(p *codeflowPage) *codeflowPage {
		asked = true
		if p.url.Path != "/realms/"+SystemRealmName+"/webauthn" {
			t.Fatalf("second step at %s, want the passkey's page", p.url)
		}
		f := webauthnForm(t, p, "authenticate")
		id, body := pageCeremony(t, b, sysWebAuthn+"/authenticate/options", map[string]any{"authRequestID": f.fields.Get("authRequestID")})
		return webauthnSubmit(b, p, f, id, e.assertWith(key, body, ""), nil)
	})
	if !asked {
		t.Fatal("the second console sign-in asked for no passkey")
	}
	mustError(t, e.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": "grace", "password": codeflowPassword}),
		http.StatusForbidden, "forbidden", "")
}
