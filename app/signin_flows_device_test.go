package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// deviceFlowBind makes a device flow of acme with steps and binds the
// device approvals of tv to it.
func (e *codeflowEnv) deviceFlowBind(steps ...map[string]any) {
	e.t.Helper()
	r := e.admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": "tv-approval", "usage": "device", "steps": steps})
	mustStatus(e.t, r, http.StatusCreated)
	id, _ := r.object(e.t)["id"].(string)
	r = e.admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+id+"/assign-client/tv", map[string]any{"usage": "device"})
	mustStatus(e.t, r, http.StatusNoContent)
}

// deviceAuthorize starts a device authorization of tv: its device code
// and the page that approves it.
func (e *codeflowEnv) deviceAuthorize() (deviceCode, userCode, pageURL string) {
	e.t.Helper()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/auth/device", "client_id=tv&scope=openid",
		"Content-Type: application/x-www-form-urlencoded")
	mustStatus(e.t, r, http.StatusOK)
	da := r.object(e.t)
	return da["device_code"].(string), da["user_code"].(string), da["verification_uri_complete"].(string)
}

// A client whose device approvals follow a flow of password and TOTP: the
// device page asks for no credentials, its approval leads through the
// flow's pages, and the flow's user approves the device; the page's
// password form alone, posted by another client, approves nothing.
func TestFlowDeviceApproval(t *testing.T) {
	e := deviceEnv(t)
	e.deviceFlowBind(flowTestPassword, flowTestTOTP)
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)

	deviceCode, userCode, pageURL := e.deviceAuthorize()
	// The form of the spec, with the right password, from a client that
	// never saw the page: the flow decides, and it is the browser's.
	p := e.devicePost(url.Values{"user_code": {userCode}, "action": {"approve"}, "username": {"alice"}, "password": {codeflowPassword}})
	mustDeviceRefused(t, p, http.StatusForbidden, enMsg("error.formExpired"))
	if s := e.deviceStatus(userCode); s != store.DevicePending {
		t.Fatalf("device %s after a password post past the flow", s)
	}

	b := e.browser()
	page := b.get(pageURL)
	mustPage(t, page, http.StatusOK, "Living room TV")
	if f := page.form(t); f.fields.Has("password") || f.fields.Has("otp") {
		t.Fatalf("the device form of a client with a flow asks for credentials: %v", f.fields)
	}
	first := e.flowTestNext(b, b.submit(page, map[string]string{"action": "approve"}))
	if f := first.form(t); !f.fields.Has("username") || !f.fields.Has("password") {
		t.Fatalf("the flow's first page is no password form: %v", f.fields)
	}
	if s := e.deviceStatus(userCode); s != store.DevicePending {
		t.Fatalf("device %s before the flow's steps", s)
	}
	totpPage := e.flowTestNext(b, b.submit(first, map[string]string{"username": "alice", "password": codeflowPassword}))
	if s := e.deviceStatus(userCode); s != store.DevicePending {
		t.Fatalf("device %s after the password alone", s)
	}
	done := b.submit(totpPage, map[string]string{"code": totpTestCode(t, secret, e.clock.now())})
	mustPage(t, done, http.StatusOK, enMsg("device.approved.title"))
	if s := e.deviceStatus(userCode); s != store.DeviceApproved {
		t.Fatalf("device %s after the flow", s)
	}
	if logins := e.loginEvents("LOGIN"); len(logins) != 1 || logins[0].UserID != e.aliceID || logins[0].ClientID != "tv" {
		t.Fatalf("LOGIN events %+v, want alice's for tv", logins)
	}
	r := deviceTestPoll(e.oidcTestServer, "client_id=tv&device_code="+url.QueryEscape(deviceCode))
	mustStatus(t, r, http.StatusOK)
	if _, claims := jwtParts(t, r.object(t)["access_token"].(string)); claims["sub"] != e.aliceID {
		t.Fatalf("device token of %v, want alice", claims["sub"])
	}
	if p := b.get(totpPage.url.String()); p.status != http.StatusBadRequest {
		t.Fatalf("the page of a finished flow: status %d, want 400", p.status)
	}
}

// A device denied while its approval's flow runs stays denied: the flow's
// end approves only a code still waiting.
func TestFlowDeviceDeniedMeanwhile(t *testing.T) {
	e := deviceEnv(t)
	e.deviceFlowBind(flowTestPassword)
	_, userCode, pageURL := e.deviceAuthorize()
	b := e.browser()
	first := e.flowTestNext(b, b.submit(b.get(pageURL), map[string]string{"action": "approve"}))

	mustPage(t, e.devicePost(url.Values{"user_code": {userCode}, "action": {"deny"}}), http.StatusOK, enMsg("device.denied.title"))
	p := b.submit(first, map[string]string{"username": "alice", "password": codeflowPassword})
	mustDeviceRefused(t, p, http.StatusBadRequest, enMsg("device.error.badCode"))
	if s := e.deviceStatus(userCode); s != store.DeviceDenied {
		t.Fatalf("device %s, want it denied still", s)
	}
	if code, _ := normalizeUserCode(userCode); !strings.Contains(string(p.body), `value="`+code+`"`) {
		t.Fatalf("the refusal does not show the code it refused: %s", p.body)
	}
	if f := p.form(t); !f.fields.Has("password") {
		t.Fatalf("the form after a refused code asks for no password, for a code that may need one: %v", f.fields)
	}
}
