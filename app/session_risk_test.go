package app

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/risk"
)

// sessionRiskEnv is a riskEnv with a client "app" of the password and
// refresh grants, and a confidential client "rs" that introspects.
type sessionRiskEnv struct {
	*riskEnv
	rsSecret string
}

func newSessionRiskEnv(t *testing.T, opts ...func(*Config)) *sessionRiskEnv {
	t.Helper()
	e := &sessionRiskEnv{riskEnv: newRiskEnv(t, opts...)}
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "app", "clientType": "PUBLIC",
		"grantTypes": []string{"password", "refresh_token"}}), http.StatusCreated)
	e.rsSecret = e.client("rs", nil)
	return e
}

// signedIn is one sign-in's tokens and its SSO session.
type signedIn struct {
	access, refresh, sid string
}

// grantFrom signs username in with the password grant of app from the
// address from.
func (e *sessionRiskEnv) grantFrom(username, from string) *signedIn {
	e.t.Helper()
	e.clock.advance(time.Minute)
	status, body := e.tokenRequest(url.Values{"grant_type": {"password"}, "client_id": {"app"}, "username": {username},
		"password": {codeflowPassword}, "scope": {"openid"}}, "X-Forwarded-For: "+from)
	if status != http.StatusOK {
		e.t.Fatalf("password grant of %s from %s: %d %v", username, from, status, body)
	}
	s := &signedIn{access: body["access_token"].(string), refresh: body["refresh_token"].(string)}
	s.sid = sessionRiskClaims(e.t, s.access)["sid"].(string)
	return s
}

// refreshFrom refreshes s's tokens from the address from; a refresh that
// succeeds moves s on to the new ones.
func (e *sessionRiskEnv) refreshFrom(s *signedIn, from string) (int, map[string]any) {
	e.t.Helper()
	status, body := e.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "refresh_token": {s.refresh}},
		"X-Forwarded-For: "+from)
	if status == http.StatusOK {
		s.access, s.refresh = body["access_token"].(string), body["refresh_token"].(string)
	}
	return status, body
}

func sessionRiskClaims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// sessionPolicy makes a session policy.
func (e *sessionRiskEnv) sessionPolicy(name string, priority int, conditions map[string]any, action string) string {
	e.t.Helper()
	return e.policy(map[string]any{"name": name, "priority": priority, "scope": "session", "conditions": conditions, "action": action})
}

func (e *sessionRiskEnv) sessionRisk(sid string) map[string]any {
	e.t.Helper()
	r := e.admin(http.MethodGet, "/admin/realms/acme/session-risk/"+sid, nil)
	mustStatus(e.t, r, http.StatusOK)
	return r.object(e.t)
}

// events lists the realm's continuous verification events the query
// selects.
func (e *sessionRiskEnv) events(query string) []map[string]any {
	e.t.Helper()
	var list []map[string]any
	r := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/events?"+query, nil)
	mustStatus(e.t, r, http.StatusOK)
	r.decode(e.t, &list)
	return list
}

// active says whether rs's introspection finds the access token active.
func (e *sessionRiskEnv) active(access string) bool {
	e.t.Helper()
	return e.introspect("rs", e.rsSecret, access)["active"] == true
}

// signal posts a report of the client SDK with the access token, from
// the address from.
func (e *sessionRiskEnv) signal(path, access, from string, body any) *testResponse {
	e.t.Helper()
	headers := []string{"X-Forwarded-For: " + from}
	if access != "" {
		headers = append(headers, "Authorization: Bearer "+access)
	}
	return e.request(http.MethodPost, "/admin/realms/acme/continuous-verification/"+path, body, headers...)
}

// A session signed in from Paris refreshing from Tokyo ten minutes later
// travelled faster than a plane: its profile says so, and the notify
// policy publishes it once. Re-evaluated under a policy that ends such
// sessions, it ends: the refresh answers invalid_grant with the
// documented description, and its access tokens no longer introspect
// active.
func TestSessionRiskEndSessionOnEvaluate(t *testing.T) {
	e := newSessionRiskEnv(t, allowLoopback)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook",
		"events": []string{"risk.session.*"}}), http.StatusCreated)
	e.sessionPolicy("tell of travellers", 10, map[string]any{"signals": []string{"impossible_travel"}}, "notify")
	s := e.grantFrom("alice", riskParis)
	first := s.access
	p := e.sessionRisk(s.sid)
	if p["status"] != "active" || p["assessmentId"] != e.latest()["id"] || p["clientId"] != "app" || p["country"] != "FR" {
		t.Fatalf("the profile of a new session: %v", p)
	}
	riskMustState(t, p, "impossible_travel", "absent")
	riskMustState(t, p, "device_posture", "unknown")

	e.clock.advance(10 * time.Minute)
	if status, body := e.refreshFrom(s, riskTokyo); status != http.StatusOK {
		t.Fatalf("a refresh a notify policy allows: %d %v", status, body)
	}
	p = e.sessionRisk(s.sid)
	riskMustState(t, p, "impossible_travel", "present")
	riskMustState(t, p, "new_country", "present")
	if p["level"] != "critical" || p["action"] != "notify" || p["policyName"] != "tell of travellers" || p["ipAddress"] != riskTokyo ||
		p["country"] != "JP" || p["status"] != "active" {
		t.Fatalf("the profile after the journey: %v", p)
	}
	refreshes := e.events("kind=refresh&session=" + s.sid)
	if len(refreshes) != 1 || !strings.Contains(fmt.Sprint(refreshes[0]["signals"]), "impossible_travel") ||
		refreshes[0]["clientId"] != "app" || refreshes[0]["ipAddress"] != riskTokyo {
		t.Fatalf("refresh events: %v", refreshes)
	}
	// From where it was last seen, a refresh writes nothing.
	e.clock.advance(time.Minute)
	if status, body := e.refreshFrom(s, riskTokyo); status != http.StatusOK {
		t.Fatalf("a refresh from the same address: %d %v", status, body)
	}
	if n := len(e.events("kind=refresh&session=" + s.sid)); n != 1 {
		t.Fatalf("a refresh from where the session was wrote %d events", n)
	}

	end := e.sessionPolicy("end impossible journeys", 1, map[string]any{"levels": []string{"critical"}}, "end-session")
	r := e.admin(http.MethodPost, "/admin/realms/acme/session-risk/"+s.sid+"/evaluate", nil)
	mustStatus(t, r, http.StatusOK)
	p = r.object(t)
	if p["status"] != "ended-by-risk" || p["endedBy"] != "end-session" || p["policyId"] != end || p["stepUpOwed"] != false {
		t.Fatalf("evaluated: %v", p)
	}
	status, body := e.refreshFrom(s, riskTokyo)
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
	if body["error_description"] != risk.EndedDescription {
		t.Fatalf("a refresh of the ended session: %v", body)
	}
	for _, access := range []string{first, s.access} {
		if e.active(access) {
			t.Fatal("an access token of the ended session introspects active")
		}
	}
	if sessions := e.userSessions(); len(sessions) != 0 {
		t.Fatalf("sessions left: %+v", sessions)
	}
	// The record stays, and an evaluation of an ended session acts no more.
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/session-risk/"+s.sid+"/evaluate", nil), http.StatusOK)
	if p := e.sessionRisk(s.sid); p["status"] != "ended-by-risk" {
		t.Fatalf("after the end: %v", p)
	}
	evaluations := e.events("kind=evaluation&session=" + s.sid)
	if len(evaluations) != 2 || evaluations[1]["action"] != "end-session" {
		t.Fatalf("evaluation events: %v", evaluations)
	}
	due, err := e.store.DueWebhookMessages(t.Context(), e.clock.now().Add(time.Hour).UnixMilli(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("webhook messages %+v %v", due, err)
	}
	if msgs := due[0]; len(msgs) != 2 || msgs[0].EventType != "risk.session.notify" || msgs[1].EventType != "risk.session.ended" ||
		!strings.Contains(string(msgs[1].Payload), s.sid) {
		t.Fatalf("webhook messages %+v", msgs)
	}
	d := e.admin(http.MethodGet, "/admin/realms/acme/session-risk/dashboard", nil).object(t)
	if d["total"] != float64(1) || d["byStatus"].(map[string]any)["ended-by-risk"] != float64(1) ||
		d["bySignal"].(map[string]any)["impossible_travel"] != float64(1) || d["byAction"].(map[string]any)["end-session"] != float64(1) {
		t.Fatalf("dashboard %v", d)
	}
}

// A step-up policy ends the session as end-session does, with its own
// description, and the user's next sign-in must prove a second factor:
// the password grant is refused without one, and the browser's sign-in
// asks the TOTP code, after which nothing is owed.
func TestSessionRiskStepUpOnEvaluate(t *testing.T) {
	e := newSessionRiskEnv(t)
	e.sessionPolicy("tell of travellers", 10, map[string]any{"signals": []string{"impossible_travel"}}, "notify")
	s := e.grantFrom("alice", riskParis)
	e.clock.advance(10 * time.Minute)
	if status, body := e.refreshFrom(s, riskTokyo); status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, body)
	}
	riskMustState(t, e.sessionRisk(s.sid), "impossible_travel", "present")
	stepUp := e.sessionPolicy("travellers prove it", 1, map[string]any{"signals": []string{"impossible_travel"}}, "step-up")
	r := e.admin(http.MethodPost, "/admin/realms/acme/session-risk/"+s.sid+"/evaluate", nil)
	mustStatus(t, r, http.StatusOK)
	if p := r.object(t); p["endedBy"] != "step-up" || p["stepUpOwed"] != true || p["status"] != "ended-by-risk" {
		t.Fatalf("evaluated: %v", p)
	}
	status, body := e.refreshFrom(s, riskTokyo)
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
	if body["error_description"] != risk.StepUpDescription {
		t.Fatalf("a refresh of the stepped-up session: %v", body)
	}
	if e.active(s.access) {
		t.Fatal("the access token of the session introspects active")
	}

	// The next sign-in owes the second factor, whatever the sign-in
	// policies say (there are none).
	e.clock.advance(time.Minute)
	status, body = e.tokenRequest(url.Values{"grant_type": {"password"}, "client_id": {"app"}, "username": {"alice"},
		"password": {codeflowPassword}, "scope": {"openid"}}, "X-Forwarded-For: "+riskParis)
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
	if !strings.Contains(body["error_description"].(string), "a second factor is required") {
		t.Fatalf("a grant owing a step-up: %v", body)
	}
	if a := e.latest(); a["action"] != "mfa" || a["policyId"] != stepUp {
		t.Fatalf("the assessment of a sign-in owing a step-up: %v", a)
	}
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	b := e.browserAt(riskParis)
	page := e.signInPage(b)
	if page.status != http.StatusOK || !page.form(t).fields.Has("code") {
		t.Fatalf("a browser sign-in owing a step-up: %d %s", page.status, page.body)
	}
	e.redirectedBack(b.submit(page, map[string]string{"code": totpTestCode(t, secret, e.clock.now())}))
	if p := e.sessionRisk(s.sid); p["stepUpOwed"] != false {
		t.Fatalf("the step-up given, the old profile: %v", p)
	}
	// The browser's new session has its profile, from its sign-in.
	var list []map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/session-risk?status=active&user="+e.aliceID, nil).decode(t, &list)
	if len(list) != 1 || list[0]["assessmentId"] != e.latest()["id"] || list[0]["clientId"] != "web" {
		t.Fatalf("active profiles: %v", list)
	}
	e.clock.advance(time.Hour)
	e.signIn(e.browserAt(riskParis)) // nothing owed: no code asked (a new browser, no policy)
}

// A session policy in force when the session moves acts at that refresh:
// the refresh is refused, and so is every later one with the same token.
func TestSessionRiskRefreshEndsSession(t *testing.T) {
	e := newSessionRiskEnv(t)
	e.sessionPolicy("no jumping", 1, map[string]any{"signals": []string{"impossible_travel"}}, "end-session")
	s := e.grantFrom("alice", riskParis)
	e.clock.advance(10 * time.Minute)
	for range 2 {
		status, body := e.refreshFrom(s, riskTokyo)
		codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
		if body["error_description"] != risk.EndedDescription {
			t.Fatalf("a refresh from Tokyo: %v", body)
		}
	}
	if e.active(s.access) {
		t.Fatal("the access token introspects active")
	}
	if p := e.sessionRisk(s.sid); p["endedBy"] != "end-session" || p["status"] != "ended-by-risk" {
		t.Fatalf("profile %v", p)
	}
	// Another session of the same user, where it signed in, goes on.
	other := e.grantFrom("alice", riskParis)
	if status, body := e.refreshFrom(other, riskParis); status != http.StatusOK {
		t.Fatalf("another session: %d %v", status, body)
	}
}

// Without a session policy that can act, a refresh reads and writes
// nothing of the session's risk, however far it went.
func TestSessionRiskRefreshWithoutPolicies(t *testing.T) {
	e := newSessionRiskEnv(t)
	e.sessionPolicy("a quiet one", 1, map[string]any{}, "allow")
	s := e.grantFrom("alice", riskParis)
	e.clock.advance(10 * time.Minute)
	if status, body := e.refreshFrom(s, riskTokyo); status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, body)
	}
	p := e.sessionRisk(s.sid)
	if p["observations"] != float64(1) || p["ipAddress"] != riskParis {
		t.Fatalf("a refresh without acting session policies changed the profile: %v", p)
	}
	if n := len(e.events("session=" + s.sid)); n != 1 { // the sign-in's
		t.Fatalf("%d events", n)
	}
	// An evaluation sees what the profile knows; the allow policy decides.
	r := e.admin(http.MethodPost, "/admin/realms/acme/session-risk/"+s.sid+"/evaluate", nil)
	mustStatus(t, r, http.StatusOK)
	if p := r.object(t); p["action"] != "allow" || p["status"] != "active" || p["observations"] != float64(2) {
		t.Fatalf("evaluated: %v", p)
	}
}

// The client SDK's device posture, posted with the session's own access
// token, is stored, shown by the read endpoints and makes the session's
// device_posture signal; a token of another user or of another session
// naming this one is refused, as are bad bodies, and nothing is stored.
func TestContinuousVerificationDevicePosture(t *testing.T) {
	e := newSessionRiskEnv(t)
	s := e.grantFrom("alice", riskParis)
	r := e.signal("device-posture", s.access, riskParis, map[string]any{"platform": "macos", "osVersion": "15.2",
		"diskEncrypted": false, "screenLock": true, "jailbroken": false})
	mustStatus(t, r, http.StatusAccepted)
	if a := r.object(t); a["sessionId"] != s.sid || a["session"] != "active" {
		t.Fatalf("accepted: %v", a)
	}
	posture := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/device-posture/"+s.sid, nil).object(t)
	finding := posture["finding"].(map[string]any)
	if posture["reported"] != true || posture["posture"].(map[string]any)["diskEncrypted"] != false || finding["state"] != "present" ||
		!strings.Contains(finding["detail"].(string), "disk is not encrypted") {
		t.Fatalf("device posture: %v", posture)
	}
	p := e.sessionRisk(s.sid)
	riskMustState(t, p, "device_posture", "present")
	if p["score"] != float64(40) || p["level"] != "medium" {
		t.Fatalf("a device short of its posture: %v", p)
	}
	profile := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/session-profiles/"+s.sid, nil).object(t)
	if profile["devicePosture"].(map[string]any)["platform"] != "macos" || profile["networkContext"] != nil || profile["lastSignal"] == float64(0) {
		t.Fatalf("session profile: %v", profile)
	}
	reports := e.events("kind=device-posture")
	if len(reports) != 1 || reports[0]["sessionId"] != s.sid || reports[0]["detail"].(map[string]any)["osVersion"] != "15.2" {
		t.Fatalf("events: %v", reports)
	}
	mustStatus(t, e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/events/"+reports[0]["id"].(string), nil), http.StatusOK)

	// Put right, the device counts no more.
	mustStatus(t, e.signal("device-posture", s.access, riskParis, map[string]any{"sessionId": s.sid, "platform": "macos",
		"diskEncrypted": true}), http.StatusAccepted)
	riskMustState(t, e.sessionRisk(s.sid), "device_posture", "absent")

	// Refusals: each leaves the two reports as they were.
	e.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": codeflowPassword})
	bob := e.grantFrom("bob", riskParis)
	again := e.grantFrom("alice", riskParis) // another session of alice's
	for _, tc := range []struct {
		name, access string
		body         any
		status       int
		code         string
	}{
		{"another user's token", bob.access, map[string]any{"sessionId": s.sid, "platform": "linux"}, http.StatusForbidden, "forbidden"},
		{"another session's token", again.access, map[string]any{"sessionId": s.sid, "platform": "linux"}, http.StatusForbidden, "forbidden"},
		{"no token", "", map[string]any{"platform": "linux"}, http.StatusUnauthorized, "unauthorized"},
		{"a forged token", "garbage", map[string]any{"platform": "linux"}, http.StatusUnauthorized, "invalid_token"},
		{"malformed JSON", s.access, `{"platform": `, http.StatusBadRequest, "invalid_json"},
		{"an unknown field", s.access, map[string]any{"platform": "linux", "colour": "red"}, http.StatusBadRequest, "unknown_field"},
		{"an unknown platform", s.access, map[string]any{"platform": "amiga"}, http.StatusBadRequest, "invalid_field"},
		{"a flag of the wrong type", s.access, map[string]any{"platform": "linux", "firewall": "on"}, http.StatusBadRequest, "invalid_field"},
		{"an oversized body", s.access, map[string]any{"platform": "linux", "osVersion": strings.Repeat("1", 5000)},
			http.StatusRequestEntityTooLarge, "payload_too_large"},
	} {
		r := e.signal("device-posture", tc.access, riskParis, tc.body)
		if r.Status != tc.status || r.object(t)["error"] != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
		}
		if tc.status == http.StatusUnauthorized && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: no Bearer challenge", tc.name)
		}
	}
	if n := len(e.events("kind=device-posture")); n != 2 {
		t.Fatalf("%d device posture events after the refusals", n)
	}
	for _, sid := range []string{bob.sid, again.sid} {
		if p := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/device-posture/"+sid, nil).object(t); p["reported"] != false {
			t.Fatalf("a refused report was stored on %s: %v", sid, p)
		}
	}
	// A token whose session ended no longer stands.
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/sessions/"+again.sid+"?type=sso", nil), http.StatusOK)
	r = e.signal("device-posture", again.access, riskParis, map[string]any{"platform": "linux"})
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("a token of an ended session: %d %s", r.Status, r.Body)
	}

	// The dashboard and the user's summary count what came.
	d := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/dashboard", nil).object(t)
	if d["byKind"].(map[string]any)["device-posture"] != float64(2) || d["bySignal"].(map[string]any)["device_posture"] != float64(1) ||
		d["sessions"] != float64(3) || d["users"] != float64(2) {
		t.Fatalf("dashboard %v", d)
	}
	sum := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/user/"+e.aliceID+"/summary", nil).object(t)
	sessions := sum["sessions"].(map[string]any)
	if sessions["total"] != float64(2) || sessions["active"] != float64(1) || sessions["ended"] != float64(1) ||
		sum["byKind"].(map[string]any)["device-posture"] != float64(2) || sum["highestLevel"] != "low" || sum["lastSignal"] == float64(0) {
		t.Fatalf("summary %v", sum)
	}
	var profiles []map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/session-profiles?user="+e.aliceID, nil).decode(t, &profiles)
	if len(profiles) != 2 {
		t.Fatalf("alice's session profiles: %v", profiles)
	}
}

// The network the SDK reports makes anonymizing_network, and the
// address it posts from is judged as a refresh's.
func TestContinuousVerificationNetworkContext(t *testing.T) {
	e := newSessionRiskEnv(t)
	s := e.grantFrom("alice", riskParis)
	e.clock.advance(4 * time.Minute) // within the access token's five
	mustStatus(t, e.signal("network-context", s.access, riskTokyo, map[string]any{"vpn": true, "connectionType": "wifi"}),
		http.StatusAccepted)
	n := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/network-context/"+s.sid, nil).object(t)
	states := map[string]string{}
	for _, f := range n["findings"].([]any) {
		states[f.(map[string]any)["signal"].(string)] = f.(map[string]any)["state"].(string)
	}
	if n["reported"] != true || n["context"].(map[string]any)["vpn"] != true || n["ipAddress"] != riskTokyo ||
		len(n["places"].([]any)) != 2 || states["anonymizing_network"] != "present" || states["impossible_travel"] != "present" {
		t.Fatalf("network context: %v", n)
	}
	mustError(t, e.signal("network-context", s.access, riskTokyo, map[string]any{"connectionType": "pigeon"}),
		http.StatusBadRequest, "invalid_field", "connectionType")
	mustStatus(t, e.signal("network-context", s.access, riskTokyo, map[string]any{"vpn": false, "proxy": false, "tor": false}),
		http.StatusAccepted)
	p := e.sessionRisk(s.sid)
	riskMustState(t, p, "anonymizing_network", "absent")
	riskMustState(t, p, "impossible_travel", "present") // a journey made stays made
}

// Samples of behaviour teach the user's baseline until it judges; a batch
// far from it is an anomaly, which the baseline does not learn; bad
// batches are refused.
func TestContinuousVerificationBehavior(t *testing.T) {
	e := newSessionRiskEnv(t)
	s := e.grantFrom("alice", riskParis)
	batch := func(values ...float64) []map[string]any {
		out := []map[string]any{}
		for _, v := range values {
			out = append(out, map[string]any{"metric": "typing_interval_ms", "value": v})
		}
		return out
	}
	steady := func(n int) []float64 {
		out := []float64{}
		for i := range n {
			out = append(out, 170+float64(i%5)*5) // 170–190 ms
		}
		return out
	}
	mustStatus(t, e.signal("behavioral/samples", s.access, riskParis, map[string]any{"samples": batch(steady(20)...)}), http.StatusAccepted)
	riskMustState(t, e.sessionRisk(s.sid), "behavior_anomaly", "unknown") // learning
	mustStatus(t, e.signal("behavioral/samples", s.access, riskParis, map[string]any{"samples": batch(steady(10)...)}), http.StatusAccepted)
	riskMustState(t, e.sessionRisk(s.sid), "behavior_anomaly", "absent")
	mustStatus(t, e.signal("behavioral/samples", s.access, riskParis, map[string]any{"sessionId": s.sid,
		"samples": batch(600, 640, 580)}), http.StatusAccepted)
	p := e.sessionRisk(s.sid)
	riskMustState(t, p, "behavior_anomaly", "present")
	b := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/behavioral/"+e.aliceID, nil).object(t)
	typing := b["metrics"].([]any)[0].(map[string]any)
	if typing["metric"] != "typing_interval_ms" || typing["samples"] != float64(30) || typing["ready"] != true ||
		typing["mean"].(float64) < 170 || typing["mean"].(float64) > 190 {
		t.Fatalf("baseline %v", b)
	}
	profile := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/session-profiles/"+s.sid, nil).object(t)
	if behavior := profile["behavior"].(map[string]any); behavior["anomalous"] != true {
		t.Fatalf("session profile: %v", profile)
	}

	tooMany := batch(steady(risk.MaxSamples + 1)...)
	mustError(t, e.signal("behavioral/samples", s.access, riskParis, map[string]any{"samples": tooMany}), http.StatusBadRequest,
		"invalid_field", "samples")
	mustError(t, e.signal("behavioral/samples", s.access, riskParis, map[string]any{"samples": []map[string]any{}}),
		http.StatusBadRequest, "invalid_field", "samples")
	mustError(t, e.signal("behavioral/samples", s.access, riskParis, map[string]any{"samples": []map[string]any{
		{"metric": "heartbeat_bpm", "value": 60}}}), http.StatusBadRequest, "invalid_field", "samples[0].metric")
	mustError(t, e.signal("behavioral/samples", s.access, riskParis, map[string]any{"samples": []map[string]any{
		{"metric": "key_dwell_ms", "value": -1}}}), http.StatusBadRequest, "invalid_field", "samples[0].value")
	r := e.signal("behavioral/samples", s.access, riskParis, map[string]any{"samples": batch(steady(risk.MaxSamples)...),
		"padding": strings.Repeat("x", 40<<10)})
	mustError(t, r, http.StatusRequestEntityTooLarge, "payload_too_large", "")
	if n := len(e.events("kind=behavioral")); n != 3 {
		t.Fatalf("%d behavioural events after the refusals", n)
	}
	sum := e.admin(http.MethodGet, "/admin/realms/acme/continuous-verification/user/"+e.aliceID+"/summary", nil).object(t)
	if sum["baselineMetrics"] != float64(1) || sum["bySignal"].(map[string]any)["behavior_anomaly"] != float64(1) {
		t.Fatalf("summary %v", sum)
	}
}

// A session's posts of one kind are limited per window: the one past the
// limit is a 429, and other kinds go on.
func TestContinuousVerificationRateLimit(t *testing.T) {
	e := newSessionRiskEnv(t)
	s := e.grantFrom("alice", riskParis)
	for i := range 20 {
		if r := e.signal("device-posture", s.access, riskParis, map[string]any{"platform": "linux"}); r.Status != http.StatusAccepted {
			t.Fatalf("post %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := e.signal("device-posture", s.access, riskParis, map[string]any{"platform": "linux"})
	mustError(t, r, http.StatusTooManyRequests, "too_many_requests", "")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("a 429 without Retry-After")
	}
	if n := len(e.events("kind=device-posture&max=100")); n != 20 {
		t.Fatalf("%d reports stored", n)
	}
	mustStatus(t, e.signal("network-context", s.access, riskParis, map[string]any{"vpn": false}), http.StatusAccepted)
	// Another session of the user has its own count.
	other := e.grantFrom("alice", riskParis)
	mustStatus(t, e.signal("device-posture", other.access, riskParis, map[string]any{"platform": "linux"}), http.StatusAccepted)
}

// Bad input on every endpoint is refused in the API's error shape.
func TestSessionRiskBadInput(t *testing.T) {
	e := newSessionRiskEnv(t)
	const base, verification = "/admin/realms/acme/session-risk", "/admin/realms/acme/continuous-verification"
	for _, path := range []string{base + "/nope", verification + "/session-profiles/nope", verification + "/device-posture/nope",
		verification + "/network-context/nope", verification + "/events/nope", verification + "/behavioral/nope",
		verification + "/user/nope/summary"} {
		mustError(t, e.admin(http.MethodGet, path, nil), http.StatusNotFound, "not_found", "")
	}
	mustError(t, e.admin(http.MethodPost, base+"/nope/evaluate", nil), http.StatusNotFound, "not_found", "")
	// An OAuth session is no SSO session.
	s := e.grantFrom("alice", riskParis)
	var sessions []map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil).decode(t, &sessions)
	for _, sess := range sessions {
		if sess["type"] == "oauth" {
			mustError(t, e.admin(http.MethodPost, base+"/"+sess["id"].(string)+"/evaluate", nil), http.StatusNotFound, "not_found", "")
		}
	}
	mustError(t, e.admin(http.MethodGet, "/admin/realms/nowhere/session-risk/"+s.sid, nil), http.StatusNotFound, "not_found", "")
	for _, tc := range []struct{ query, field string }{
		{"status=asleep", "status"}, {"level=extreme", "level"}, {"signal=full_moon", "signal"}, {"from=yesterday", "from"},
		{"from=10&to=5", "to"},
	} {
		for _, path := range []string{base, base + "/dashboard", verification + "/session-profiles"} {
			r := e.admin(http.MethodGet, path+"?"+tc.query, nil)
			if r.Status != http.StatusBadRequest || r.object(t)["field"] != tc.field {
				t.Errorf("%s?%s: %d %s", path, tc.query, r.Status, r.Body)
			}
		}
	}
	for _, path := range []string{base, verification + "/session-profiles", verification + "/events"} {
		mustError(t, e.admin(http.MethodGet, path+"?max=0", nil), http.StatusBadRequest, "invalid_parameter", "max")
	}
	for _, tc := range []struct{ query, field string }{{"kind=telepathy", "kind"}, {"signal=full_moon", "signal"}, {"to=soon", "to"}} {
		for _, path := range []string{verification + "/events", verification + "/dashboard"} {
			r := e.admin(http.MethodGet, path+"?"+tc.query, nil)
			if r.Status != http.StatusBadRequest || r.object(t)["field"] != tc.field {
				t.Errorf("%s?%s: %d %s", path, tc.query, r.Status, r.Body)
			}
		}
	}
	const policies = "/admin/realms/acme/risk-policies"
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "scope": "session", "conditions": map[string]any{"signals": []string{"full_moon"}}, "action": "end-session"},
			"conditions.signals"},
		{map[string]any{"name": "x", "conditions": map[string]any{"signals": []string{"behavior_anomaly"}}, "action": "deny"}, "conditions.signals"},
		{map[string]any{"name": "x", "scope": "session", "action": "mfa"}, "action"},
		{map[string]any{"name": "x", "action": "end-session"}, "action"},
		{map[string]any{"name": "x", "scope": "forever", "action": "allow"}, "scope"},
	} {
		mustError(t, e.admin(http.MethodPost, policies, tc.body), http.StatusBadRequest, "invalid_field", tc.field)
	}
	var list []map[string]any
	e.admin(http.MethodGet, policies, nil).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("refused policies stored: %v", list)
	}
	id := e.sessionPolicy("posture", 1, map[string]any{"signals": []string{"device_posture", "behavior_anomaly"}}, "step-up")
	if p := e.admin(http.MethodGet, policies+"/"+id, nil).object(t); p["scope"] != "session" || p["action"] != "step-up" {
		t.Fatalf("session policy %v", p)
	}
	mustError(t, e.admin(http.MethodPut, policies+"/"+id, map[string]any{"name": "posture", "scope": "session", "action": "deny"}),
		http.StatusBadRequest, "invalid_field", "action")
	// A sign-in policy by default.
	sign := e.policy(map[string]any{"name": "plain", "action": "allow"})
	if p := e.admin(http.MethodGet, policies+"/"+sign, nil).object(t); p["scope"] != "sign-in" {
		t.Fatalf("a policy without a scope: %v", p)
	}
}
