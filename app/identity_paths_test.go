package app

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/store"
)

// Every path that writes a user goes through the identity core, so the
// same rules hold on each: the realm's password policy, the username
// rules, the conflicts with another user's username or email. Each path
// answers a broken rule in its own shape (the JSON error's field, or the
// page's message at the field), which the table names.

// identityRule is one broken rule, as a write would carry it: what is
// left empty is filled with a valid value.
type identityRule struct {
	name, username, email, password string
}

var identityRules = []identityRule{
	{name: "a password the realm's policy refuses", password: "no digits at all"},
	{name: "a username with a space", username: "new comer"},
	{name: "a username with a bidi control", username: "new\u202ecomer"},
	{name: "a username another user holds", username: "TAKEN"},
	{name: "an email another user holds", email: "Taken@Example.test"},
}

// identityAnswer is how a path refused a write: its status and the field
// it named.
type identityAnswer struct {
	status int
	field  string
}

// identityPathEnv is the realm acme (alice, and a user "taken" with the
// email taken@example.test), whose password policy asks for a digit,
// which can send mail and takes registrations.
func identityPathEnv(t *testing.T) *accountEnv {
	t.Helper()
	e := newAccountEnv(t)
	e.setRealmEmail("acme", func(r *store.Realm) { r.PasswordRequireDigits, r.RegistrationAllowed = true, true })
	e.createUser("acme", map[string]any{"username": "taken", "email": "taken@example.test"})
	return e
}

// valid fills what the rule leaves empty; n makes the names unique.
func (r identityRule) valid(n int) identityRule {
	if r.username == "" {
		r.username = fmt.Sprintf("newcomer%d", n)
	}
	if r.email == "" {
		r.email = fmt.Sprintf("newcomer%d@example.test", n)
	}
	if r.password == "" {
		r.password = "a valid password 1"
	}
	return r
}

// jsonAnswer is a JSON error's status and field, or a success's status.
func jsonAnswer(t *testing.T, r *testResponse) identityAnswer {
	t.Helper()
	if r.Status < 400 {
		return identityAnswer{r.Status, ""}
	}
	field, _ := r.object(t)["field"].(string)
	return identityAnswer{r.Status, field}
}

var fieldErrorSpan = regexp.MustCompile(`<span id="([A-Za-z]+)-error" class="field-error">`)

// pageAnswer is a page's status and the field its message is at.
func pageAnswer(p *codeflowPage) identityAnswer {
	m := fieldErrorSpan.FindSubmatch(p.body)
	if m == nil {
		return identityAnswer{p.status, ""}
	}
	return identityAnswer{p.status, string(m[1])}
}

func TestUserWritePathsShareTheRules(t *testing.T) {
	const (
		policy = "a password the realm's policy refuses"
		space  = "a username with a space"
		bidi   = "a username with a bidi control"
		name   = "a username another user holds"
		email  = "an email another user holds"
	)
	for _, p := range []struct {
		path string
		// write tries the rule's write n on e.
		write func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer
		want  map[string]identityAnswer // by rule; a rule the path cannot break is absent
	}{
		{"admin API: create", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			return jsonAnswer(t, e.admin(http.MethodPost, "/admin/realms/acme/users",
				map[string]any{"username": r.username, "email": r.email, "password": r.password}))
		}, map[string]identityAnswer{policy: {400, "password"}, space: {400, "username"}, bidi: {400, "username"},
			name: {409, "username"}, email: {409, "email"}}},

		{"admin API: update", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			id := e.createUser("acme", map[string]any{"username": fmt.Sprintf("mover%d", n)})["id"].(string)
			return jsonAnswer(t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+id,
				map[string]any{"username": r.username, "email": r.email}))
		}, map[string]identityAnswer{space: {400, "username"}, bidi: {400, "username"}, name: {409, "username"},
			email: {409, "email"}}},

		{"admin API: reset password", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			return jsonAnswer(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/reset-password",
				map[string]any{"password": r.password}))
		}, map[string]identityAnswer{policy: {400, "password"}}},

		{"registration API", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			return jsonAnswer(t, registrationRegister(e.testServer, "acme",
				map[string]any{"username": r.username, "email": r.email, "password": r.password}, fmt.Sprintf("198.51.100.%d", n)))
		}, map[string]identityAnswer{policy: {400, "password"}, space: {400, "username"}, bidi: {400, "username"},
			name: {409, "username"}, email: {409, "email"}}},

		{"registration page", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			b := e.browser()
			page := b.get(e.issuer("acme") + pathRegister)
			return pageAnswer(b.submit(page, map[string]string{"username": r.username, "email": r.email,
				"password": r.password, "confirm": r.password}))
		}, map[string]identityAnswer{policy: {400, "password"}, space: {400, "username"}, bidi: {400, "username"},
			name: {400, "username"}, email: {400, "email"}}},

		{"realm import", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			body := exportTestImportBody(fmt.Sprintf("imported%d", n),
				map[string]any{"username": "taken", "email": "taken@example.test"},
				map[string]any{"username": r.username, "email": r.email})
			return jsonAnswer(t, e.admin(http.MethodPost, "/admin/realms/import", body))
		}, map[string]identityAnswer{space: {400, "users[1].username"}, bidi: {400, "users[1].username"},
			name: {409, "users[1].username"}, email: {409, "users[1].email"}}},

		{"account API: profile", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			tok := e.token("alice", codeflowPassword).AccessToken
			return jsonAnswer(t, e.api(http.MethodPost, "/profile", tok, map[string]any{"email": r.email}))
		}, map[string]identityAnswer{email: {409, "email"}}},

		{"account page: profile", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			b := e.browser()
			return pageAnswer(accountSubmit(b, e.signIn(b), "/profile", map[string]string{"email": r.email}))
		}, map[string]identityAnswer{email: {409, "email"}}},

		{"account API: password", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			tok := e.token("alice", codeflowPassword).AccessToken
			return jsonAnswer(t, e.api(http.MethodPost, "/password", tok, map[string]any{"currentPassword": codeflowPassword,
				"newPassword": r.password, "confirmation": r.password}))
		}, map[string]identityAnswer{policy: {400, "newPassword"}}},

		{"account page: password", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			b := e.browser()
			return pageAnswer(accountSubmit(b, e.signIn(b), "/password", map[string]string{"currentPassword": codeflowPassword,
				"newPassword": r.password, "confirmation": r.password}))
		}, map[string]identityAnswer{policy: {400, "newPassword"}}},

		{"recovery: reset password", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			b := e.browser()
			forgot := b.get(e.issuer("acme") + recovery.PathForgotPassword)
			b.submit(forgot, map[string]string{"login": "alice"})
			mails := recoveryOutbox(e.codeflowEnv)
			form := b.get(recoveryLink(t, e.codeflowEnv, mails[len(mails)-1].TextBody, recovery.PathResetPassword).String())
			return pageAnswer(b.submit(form, map[string]string{"password": r.password, "confirm": r.password}))
		}, map[string]identityAnswer{policy: {400, "password"}}},

		{"sign-in: forced password change", func(t *testing.T, e *accountEnv, r identityRule, n int) identityAnswer {
			mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+e.aliceID,
				map[string]any{"requirePasswordReset": true}), http.StatusOK)
			clientID := fmt.Sprintf("web%d", n)
			cfg := e.oauth2Config(clientID, e.client(clientID, nil), "openid")
			b := e.browser()
			form := changePasswordStart(e.codeflowEnv, b, cfg.AuthCodeURL("s"), nil)
			return pageAnswer(b.submit(form, map[string]string{"password": r.password, "confirm": r.password}))
		}, map[string]identityAnswer{policy: {400, "password"}}},
	} {
		t.Run(p.path, func(t *testing.T) {
			e := identityPathEnv(t)
			for n, r := range identityRules {
				want, ok := p.want[r.name]
				if !ok {
					continue
				}
				if got := p.write(t, e, r.valid(n), n); got != want {
					t.Errorf("%s: %+v, want %+v", r.name, got, want)
				}
			}
			// And a write that breaks none of them passes.
			if got := p.write(t, e, identityRule{}.valid(100), 100); got.status >= 400 {
				t.Errorf("a valid write: %+v", got)
			}
		})
	}
}

// A client's service-account user is created as every user is: a person
// who holds its username already is a conflict, named on the clientId, on
// creating the client and on giving it client_credentials.
func TestServiceAccountUserConflict(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "service-account-reports"})
	clients := "/admin/realms/acme/clients"
	mustError(t, s.admin(http.MethodPost, clients, map[string]any{"clientId": "Reports", "grantTypes": []string{"client_credentials"}}),
		http.StatusConflict, "conflict", "clientId")
	mustStatus(t, s.admin(http.MethodPost, clients, map[string]any{"clientId": "Reports"}), http.StatusCreated)
	mustError(t, s.admin(http.MethodPatch, clients+"/Reports", map[string]any{"grantTypes": []string{"client_credentials"}}),
		http.StatusConflict, "conflict", "clientId")
	mustStatus(t, s.admin(http.MethodPatch, clients+"/Reports", map[string]any{"grantTypes": []string{"authorization_code"}}), http.StatusOK)
	if r := s.admin(http.MethodGet, clients+"/Reports/service-account-user", nil); r.Status != http.StatusNotFound {
		t.Fatalf("a service account after refused changes: %d %s", r.Status, r.Body)
	}
	// Its username obeys the username rules: no more than 255 characters.
	mustError(t, s.admin(http.MethodPost, clients, map[string]any{"clientId": strings.Repeat("c", 240),
		"grantTypes": []string{"client_credentials"}}), http.StatusBadRequest, "invalid_field", "clientId")
	mustStatus(t, s.admin(http.MethodPost, clients, map[string]any{"clientId": strings.Repeat("c", 239),
		"grantTypes": []string{"client_credentials"}}), http.StatusCreated)
}
