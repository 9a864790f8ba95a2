package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// unboundAuthURL is an authorization request of spa, a client bound to
// no flow.
func (e *riskEnv) unboundAuthURL() string {
	e.t.Helper()
	u, err := url.Parse(e.authURL())
	if err != nil {
		e.t.Fatal(err)
	}
	q := u.Query()
	q.Set("client_id", "spa")
	u.RawQuery = q.Encode()
	return u.String()
}

// A client bound to no flow signs in on the pages without a flow while
// the realm has no risk policy. Once it has one, its sign-ins follow the
// server's own browser flow, assessed and decided as any other, and the
// older pages refuse its requests, even one they showed before: a form
// of theirs cannot get past the policy.
func TestRiskUnboundClient(t *testing.T) {
	e := newRiskEnv(t)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "spa", "clientType": "PUBLIC",
		"redirectUris": []string{codeflowRedirect}, "grantTypes": []string{"authorization_code"}}), http.StatusCreated)

	old := e.browserAt(riskTokyo)
	legacy := old.follow(e.url, e.unboundAuthURL())
	if legacy.status != http.StatusOK || legacy.url.Path != "/realms/acme"+pathLogin {
		t.Fatalf("without a policy: status %d at %s, want the login page", legacy.status, legacy.url)
	}

	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/risk-settings", map[string]any{"denyList": []string{riskTokyo}}),
		http.StatusOK)
	id := e.policy(map[string]any{"name": "no bad actors", "conditions": map[string]any{"signals": []string{"ip_denylisted"}},
		"action": "deny"})

	// The login page's form, shown before the policy, signs in nobody now.
	p := old.submit(legacy, map[string]string{"username": "alice", "password": codeflowPassword})
	if p.status != http.StatusBadRequest || !strings.Contains(string(p.body), enMsg("error.staleAuthRequest")) {
		t.Fatalf("the login page's post past the policy: %d %s", p.status, p.body)
	}
	if again := old.get(legacy.url.String()); again.status != http.StatusBadRequest {
		t.Fatalf("the login page of a request after the policy: %d %s", again.status, again.body)
	}

	// From the denied address, the flow's pages refuse alice.
	e.clock.advance(time.Minute) // each assessment its own time: the list's newest is the last
	b := e.browserAt(riskTokyo)
	page := e.flowTestStart(b.codeflowBrowser, e.unboundAuthURL())
	p = b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword})
	for p.status == http.StatusSeeOther && strings.Contains(p.location(t).Path, "/signin/") {
		p = b.get(p.location(t).String())
	}
	if p.status != http.StatusForbidden || !strings.Contains(string(p.body), "looks unusual for this account") {
		t.Fatalf("a denied sign-in of a client without a flow: %d %s", p.status, p.body)
	}
	a := e.latest()
	if a["kind"] != "oidc" || a["clientId"] != "spa" || a["action"] != "deny" || a["policyId"] != id || a["outcome"] != "pending" {
		t.Fatalf("assessment of the denied sign-in: %v", a)
	}

	// From elsewhere, the same pages sign alice in, assessed.
	e.clock.advance(time.Minute)
	b = e.browserAt(riskParis)
	page = e.flowTestStart(b.codeflowBrowser, e.unboundAuthURL())
	p = b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword})
	for p.status == http.StatusSeeOther && strings.Contains(p.location(t).Path, "/signin/") {
		p = b.get(p.location(t).String())
	}
	if back := e.redirectedBack(p); back.Get("code") == "" {
		t.Fatalf("no code: %v", back)
	}
	a = e.latest()
	if a["clientId"] != "spa" || a["action"] != "allow" || a["outcome"] != "succeeded" {
		t.Fatalf("assessment of the allowed sign-in: %v", a)
	}

	// A policy of sessions alone is enough: their profiles start from the
	// sign-in's assessment.
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/risk-policies/"+id+"/toggle", map[string]any{"enabled": false}),
		http.StatusOK)
	sessions := e.policy(map[string]any{"name": "watch sessions", "scope": "session",
		"conditions": map[string]any{"levels": []string{"critical"}}, "action": "end-session"})
	e.flowTestStart(e.browserAt(riskParis).codeflowBrowser, e.unboundAuthURL())

	// Without an enabled policy, the pages without a flow again.
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/risk-policies/"+sessions+"/toggle", map[string]any{"enabled": false}),
		http.StatusOK)
	if p := e.browserAt(riskParis).follow(e.url, e.unboundAuthURL()); p.status != http.StatusOK || p.url.Path != "/realms/acme"+pathLogin {
		t.Fatalf("after the policy is off: status %d at %s, want the login page", p.status, p.url)
	}
}

// A device client bound to no flow: once the realm has a risk policy, its
// page asks for no password, its approval leads through the server's own
// flow, assessed, and the spec's form with a password approves nothing.
func TestRiskUnboundDeviceClient(t *testing.T) {
	e := newRiskEnv(t)
	e.client("tv", map[string]any{"name": "Living room TV", "clientType": "PUBLIC", "grantTypes": []string{identity.GrantDeviceCode}})
	e.policy(map[string]any{"name": "tell", "conditions": map[string]any{"levels": []string{"critical"}}, "action": "notify"})

	_, userCode, pageURL := e.deviceAuthorize()
	p := e.devicePost(url.Values{"user_code": {userCode}, "action": {"approve"}, "username": {"alice"}, "password": {codeflowPassword}})
	mustDeviceRefused(t, p, http.StatusForbidden, enMsg("error.formExpired"))
	if s := e.deviceStatus(userCode); s != store.DevicePending {
		t.Fatalf("device %s after a password post past the flow", s)
	}
	b := e.browserAt(riskParis)
	page := b.get(pageURL)
	if f := page.form(t); f.fields.Has("password") {
		t.Fatalf("the device form asks for the password: %v", f.fields)
	}
	first := e.flowTestNext(b.codeflowBrowser, b.submit(page, map[string]string{"action": "approve"}))
	p = b.submit(first, map[string]string{"username": "alice", "password": codeflowPassword})
	for p.status == http.StatusSeeOther && strings.Contains(p.location(t).Path, "/signin/") {
		p = b.get(p.location(t).String())
	}
	if s := e.deviceStatus(userCode); s != store.DeviceApproved {
		t.Fatalf("device %s after the flow: %d %s", s, p.status, p.body)
	}
	if a := e.latest(); a["kind"] != "device" || a["clientId"] != "tv" || a["outcome"] != "succeeded" {
		t.Fatalf("assessment of the approval: %v", a)
	}
}

// In a realm whose risk policies do not act, a client bound to no flow
// signs in on the pages without a flow, and each of its sign-ins is
// assessed all the same, once, when it lands: the signals make the
// user's history and start the session's profile, whichever step came
// last (the password, or the one-time code after it).
func TestRiskUnboundPagesAssessed(t *testing.T) {
	e := newRiskEnv(t)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "spa", "clientType": "PUBLIC",
		"redirectUris": []string{codeflowRedirect}, "grantTypes": []string{"authorization_code"}}), http.StatusCreated)
	count := func() int {
		var list []map[string]any
		e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments?user="+e.aliceID, nil).decode(t, &list)
		return len(list)
	}
	signIn := func(b *riskBrowser, then func(*riskBrowser, *codeflowPage) *codeflowPage) {
		t.Helper()
		e.clock.advance(time.Minute) // each assessment its own time: the list's newest is the last
		login := b.follow(e.url, e.unboundAuthURL())
		if login.status != http.StatusOK || login.url.Path != "/realms/acme"+pathLogin {
			t.Fatalf("status %d at %s, want the login page", login.status, login.url)
		}
		p := b.submit(login, map[string]string{"username": "alice", "password": codeflowPassword})
		if then != nil {
			p = then(b, p)
		}
		if back := e.redirectedBack(p); back.Get("code") == "" {
			t.Fatalf("no code: %v", back)
		}
	}

	paris := e.browserAt(riskParis)
	signIn(paris, nil)
	first := e.latest()
	if first["kind"] != "oidc" || first["clientId"] != "spa" || first["action"] != "allow" || first["outcome"] != "succeeded" ||
		first["policyId"] != nil || first["country"] != "FR" {
		t.Fatalf("assessment of a sign-in on the login page: %v", first)
	}
	var sessions []map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil).decode(t, &sessions)
	if len(sessions) != 1 {
		t.Fatalf("sessions %v", sessions)
	}
	profile := e.admin(http.MethodGet, "/admin/realms/acme/session-risk/"+sessions[0]["id"].(string), nil)
	mustStatus(t, profile, http.StatusOK)
	if got := profile.object(t)["assessmentId"]; got != first["id"] {
		t.Fatalf("the session's profile starts from %v, want the sign-in's assessment %v", got, first["id"])
	}

	// A browser seen before is no new device; another from Tokyo is, with
	// its one-time code after the password, assessed once.
	signIn(paris, nil)
	riskMustState(t, e.latest(), "new_device", "absent")
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	before := count()
	signIn(e.browserAt(riskTokyo), func(b *riskBrowser, p *codeflowPage) *codeflowPage {
		if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme"+pathTOTP {
			t.Fatalf("after the password: %d, want the TOTP page", p.status)
		}
		if n := count(); n != before {
			t.Fatalf("%d assessments before the code, want %d", n, before)
		}
		page := b.follow(e.url, p.location(t).String())
		return b.submit(page, map[string]string{"code": totpTestCode(t, secret, e.clock.now())})
	})
	if n := count(); n != before+1 {
		t.Fatalf("%d assessments after one sign-in with a code, want %d", n, before+1)
	}
	last := e.latest()
	riskMustState(t, last, "new_device", "present")
	if last["country"] != "JP" || last["outcome"] != "succeeded" {
		t.Fatalf("assessment of the sign-in with a code: %v", last)
	}
}
