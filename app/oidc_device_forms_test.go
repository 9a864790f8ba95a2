package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// The device page's form as the spec gives it (user_code, action,
// username, password) is not only the page's: another client may post it
// without the page's CSRF token and cookie. Only an approval that the
// browser's SSO session vouches for needs the token.

// devicePost posts the device form from a client that never saw the page:
// no CSRF token, no cookies.
func (e *codeflowEnv) devicePost(fields url.Values) *codeflowPage {
	e.t.Helper()
	return e.browser().post(e.issuer("acme")+"/device", fields)
}

// deviceSignedIn is a browser signed in to acme as alice, by password: it
// holds an SSO session.
func (e *codeflowEnv) deviceSignedIn() *codeflowBrowser {
	e.t.Helper()
	b := e.browser()
	p := b.follow(e.url, e.url+"/realms/acme/account/")
	mustPage(e.t, p, http.StatusOK, `name="password"`)
	p = b.follow(e.url, b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword}).location(e.t).String())
	mustPage(e.t, p, http.StatusOK)
	return b
}

func TestDeviceDecisionsWithoutThePage(t *testing.T) {
	e := deviceEnv(t)
	signedIn := e.deviceSignedIn()
	// The page's form, read by the signed-in browser: its CSRF token.
	page := signedIn.get(e.issuer("acme") + "/device")
	mustPage(t, page, http.StatusOK, enMsg("device.signedInAs", "alice"))
	if f := page.form(t); f.fields.Has("password") || f.fields.Get("csrf") == "" {
		t.Fatalf("signed-in form fields %v: want the token and no credentials", f.fields)
	}
	token := page.form(t).fields.Get("csrf")

	for _, c := range []struct {
		name   string
		post   func(userCode string) *codeflowPage
		status int
		want   string // message key on the answer
		after  string // the device's state
	}{
		{"credentials, from another client", func(code string) *codeflowPage {
			return e.devicePost(url.Values{"user_code": {code}, "action": {"approve"}, "username": {"alice"},
				"password": {codeflowPassword}})
		}, http.StatusOK, "device.approved.title", store.DeviceApproved},
		{"wrong password, from another client", func(code string) *codeflowPage {
			return e.devicePost(url.Values{"user_code": {code}, "action": {"approve"}, "username": {"alice"},
				"password": {"wrong"}})
		}, http.StatusBadRequest, deviceMsgBadLogin, store.DevicePending},
		{"denial, from another client", func(code string) *codeflowPage {
			return e.devicePost(url.Values{"user_code": {code}, "action": {"deny"}})
		}, http.StatusOK, "device.denied.title", store.DeviceDenied},
		{"no credentials, no session, from another client", func(code string) *codeflowPage {
			return e.devicePost(url.Values{"user_code": {code}, "action": {"approve"}})
		}, http.StatusForbidden, deviceMsgFormExpired, store.DevicePending},
		{"session approval without the token", func(code string) *codeflowPage {
			return signedIn.post(e.issuer("acme")+"/device", url.Values{"user_code": {code}, "action": {"approve"}})
		}, http.StatusForbidden, deviceMsgFormExpired, store.DevicePending},
		{"session approval with a forged token", func(code string) *codeflowPage {
			return signedIn.post(e.issuer("acme")+"/device", url.Values{"user_code": {code}, "action": {"approve"},
				"csrf": {strings.Repeat("A", len(token))}})
		}, http.StatusForbidden, deviceMsgFormExpired, store.DevicePending},
		{"session approval with another browser's token", func(code string) *codeflowPage {
			otherToken := e.browser().get(e.issuer("acme") + "/device").form(e.t).fields.Get("csrf")
			return signedIn.post(e.issuer("acme")+"/device", url.Values{"user_code": {code}, "action": {"approve"},
				"csrf": {otherToken}})
		}, http.StatusForbidden, deviceMsgFormExpired, store.DevicePending},
		{"session approval with the page's token", func(code string) *codeflowPage {
			return signedIn.post(e.issuer("acme")+"/device", url.Values{"user_code": {code}, "action": {"approve"}, "csrf": {token}})
		}, http.StatusOK, "device.approved.title", store.DeviceApproved},
		{"the page's token without a session", func(code string) *codeflowPage {
			b := e.browser()
			p := b.get(e.issuer("acme") + "/device")
			return b.submit(p, map[string]string{"user_code": code, "action": "approve"})
		}, http.StatusBadRequest, deviceMsgNoLogin, store.DevicePending},
	} {
		t.Run(c.name, func(t *testing.T) {
			userCode := deviceTestStart(t, e.oidcTestServer)
			p := c.post(userCode)
			mustPage(t, p, c.status, enMsg(c.want))
			if s := e.deviceStatus(userCode); s != c.after {
				t.Fatalf("device %s, want %s", s, c.after)
			}
		})
	}
}

// A device approved by the browser's session gets the tokens of the
// session's user, authenticated when the session was.
func TestDeviceSessionApprovalTokens(t *testing.T) {
	e := deviceEnv(t)
	signedIn := e.deviceSignedIn()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/auth/device", "client_id=tv&scope=openid",
		"Content-Type: application/x-www-form-urlencoded")
	mustStatus(t, r, http.StatusOK)
	da := r.object(t)
	page := signedIn.get(da["verification_uri_complete"].(string))
	mustPage(t, page, http.StatusOK, "Living room TV", enMsg("device.signedInAs", "alice"))
	mustPage(t, signedIn.submit(page, map[string]string{"action": "approve"}), http.StatusOK, enMsg("device.approved.title"))

	r = deviceTestPoll(e.oidcTestServer, "client_id=tv&device_code="+url.QueryEscape(da["device_code"].(string)))
	mustStatus(t, r, http.StatusOK)
	_, claims := jwtParts(t, r.object(t)["access_token"].(string))
	if claims["sub"] != e.aliceID {
		t.Fatalf("device token of %v, want alice", claims["sub"])
	}
}

// A session approval keeps the device page's rules: a session begun
// without the second factor the user has since enrolled approves nothing,
// and the user is sent to sign in first.
func TestDeviceSessionApprovalOwesSecondFactor(t *testing.T) {
	e := deviceEnv(t)
	signedIn := e.deviceSignedIn()
	e.totpEnrol(e.aliceID)
	userCode := deviceTestStart(t, e.oidcTestServer)
	page := signedIn.get(e.issuer("acme") + "/device?user_code=" + url.QueryEscape(userCode))
	p := signedIn.submit(page, map[string]string{"action": "approve"})
	mustDeviceRefused(t, p, http.StatusForbidden, enMsg("device.error.signInFirst"))
	if s := e.deviceStatus(userCode); s != store.DevicePending {
		t.Fatalf("device %s", s)
	}
}
