package app

import (
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// accountEnv is the code flow's environment (realm acme, user alice, a
// clock) with a client that gets user tokens by the password grant, a
// realm that records login events and can send mail.
type accountEnv struct {
	*codeflowEnv
	cfg *oauth2.Config
}

const accountTestHome = "/realms/acme/account/"

func newAccountEnv(t *testing.T) *accountEnv {
	t.Helper()
	e := newCodeflowEnv(t)
	secret := e.client("cli", map[string]any{"grantTypes": []string{"password", "refresh_token"}})
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config",
		map[string]any{"eventsEnabled": true, "eventsExpiration": 86400, "adminEventsEnabled": false}), http.StatusOK)
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme",
		map[string]any{"smtpHost": "mail.acme.test", "smtpFrom": "noreply@acme.test"}), http.StatusOK)
	return &accountEnv{codeflowEnv: e, cfg: e.oauth2Config("cli", secret, "openid")}
}

// token signs username in by the password grant and returns the tokens.
func (e *accountEnv) token(username, password string) *oauth2.Token {
	e.t.Helper()
	tok, err := e.cfg.PasswordCredentialsToken(e.t.Context(), username, password)
	if err != nil {
		e.t.Fatalf("password grant for %s: %v", username, err)
	}
	return tok
}

// api sends an account request with a Bearer token.
func (e *accountEnv) api(method, path, token string, body any, headers ...string) *testResponse {
	e.t.Helper()
	return e.request(method, "/realms/acme/account"+path, body, append([]string{"Authorization: Bearer " + token}, headers...)...)
}

// signIn opens the account home in b, signs in as alice on the login page
// it is sent to, and returns the account page it comes back to.
func (e *accountEnv) signIn(b *codeflowBrowser) *codeflowPage {
	e.t.Helper()
	return e.signInAt(b, accountTestHome, "alice", codeflowPassword)
}

// signInAt opens an account path signed out, signs in, and returns the
// page the browser ends on.
func (e *accountEnv) signInAt(b *codeflowBrowser, path, username, password string) *codeflowPage {
	e.t.Helper()
	p := b.get(e.url + path)
	if p.status != http.StatusFound {
		e.t.Fatalf("signed out %s: status %d, want 302 to sign in; body %s", path, p.status, p.body)
	}
	p = b.follow(e.url, p.location(e.t).String())
	if p.status != http.StatusOK {
		e.t.Fatalf("authorization: status %d, want the login page; body %s", p.status, p.body)
	}
	p = b.submit(p, map[string]string{"username": username, "password": password})
	if p.status != http.StatusSeeOther {
		e.t.Fatalf("login: status %d, want 303 back to the account; body %s", p.status, p.body)
	}
	return b.follow(e.url, p.location(e.t).String())
}

// accountForm is the form of p whose action ends in suffix.
func accountForm(t *testing.T, p *codeflowPage, suffix string) *codeflowForm {
	t.Helper()
	for _, f := range p.forms(t) {
		if strings.HasSuffix(f.action, suffix) {
			return f
		}
	}
	t.Fatalf("no form posting to …%s on the page: status %d body %s", suffix, p.status, p.body)
	return nil
}

// accountSubmit posts p's form whose action ends in suffix, with fields
// set as given ("" deletes one).
func accountSubmit(b *codeflowBrowser, p *codeflowPage, suffix string, set map[string]string) *codeflowPage {
	b.t.Helper()
	f := accountForm(b.t, p, suffix)
	values := url.Values{}
	maps.Copy(values, f.fields)
	for k, v := range set {
		if v == "" {
			values.Del(k)
		} else {
			values.Set(k, v)
		}
	}
	action, err := p.url.Parse(f.action)
	if err != nil || f.method != http.MethodPost {
		b.t.Fatalf("form action %q method %q", f.action, f.method)
	}
	return b.post(action.String(), values)
}

// mustPage checks a page's status and that its body holds every want.
func mustPage(t *testing.T, p *codeflowPage, status int, want ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d; body %s", p.status, status, p.body)
	}
	for _, w := range want {
		if !strings.Contains(string(p.body), w) {
			t.Fatalf("page lacks %q: %s", w, p.body)
		}
	}
}

// mustRedirectTo checks that p redirects to path (and query, when given).
func mustRedirectTo(t *testing.T, p *codeflowPage, status int, pathAndQuery string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d to %s; body %s", p.status, status, pathAndQuery, p.body)
	}
	if got := p.location(t).RequestURI(); got != pathAndQuery {
		t.Fatalf("redirect to %s, want %s", got, pathAndQuery)
	}
}

// loginEvents lists acme's login events of a user, oldest first.
func (e *accountEnv) loginEvents(userID string) []loginEventRep {
	e.t.Helper()
	var reps []loginEventRep
	r := e.admin(http.MethodGet, "/admin/realms/acme/events?userId="+userID, nil)
	mustStatus(e.t, r, http.StatusOK)
	r.decode(e.t, &reps)
	for i, j := 0, len(reps)-1; i < j; i, j = i+1, j-1 {
		reps[i], reps[j] = reps[j], reps[i]
	}
	return reps
}

// hasEvent says whether events hold one of type typ.
func hasEvent(events []loginEventRep, typ string) *loginEventRep {
	for i := range events {
		if events[i].Type == typ {
			return &events[i]
		}
	}
	return nil
}
