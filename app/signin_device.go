package app

import (
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// deviceRequester finishes the approvals of device codes whose client's
// device sign-ins follow an authentication flow: the flow's user approves
// the code, authenticated now, and the browser keeps the SSO session the
// flow earned, as a sign-in's browser does.
type deviceRequester struct{ a *App }

func (deviceRequester) Kind() signin.RequesterKind { return signin.RequesterDevice }

func (o deviceRequester) Finish(w http.ResponseWriter, r *http.Request, f *signin.Flow) error {
	a, realm := o.a, f.Realm
	form := ui.DeviceForm{UserCode: f.RequesterID(), CSRFToken: a.pages.CSRFToken(w, r, realm, deviceForm, "")}
	d, err := a.livePendingDevice(r, realm, f.RequesterID())
	if err != nil {
		return err
	}
	if d == nil || d.PublicClientID != f.Wants.Client { // expired or decided meanwhile
		form.Error = deviceMsgBadCode
		return a.pages.Render(w, r, http.StatusBadRequest, ui.DeviceVerify(a.pages.Page("device.title"), form))
	}
	form.Client, form.Scopes, form.FollowsFlow = deviceClientName(d), d.Scopes, true
	if reason := deviceAccountOwes(realm, f.User, a.now()); reason != "" {
		return a.deviceSignInFirst(w, r, realm, form, f.User, d, reason)
	}
	if err := landFlow(a, w, r, f); err != nil {
		return err
	}
	return a.deviceApprove(w, r, realm, form, f.User, a.now().UnixMilli())
}

// beginDeviceFlow starts the flow def for approving d, for as long as d
// waits, and sends the browser to its first page.
func beginDeviceFlow(a *App, w http.ResponseWriter, r *http.Request, realm *store.Realm, d *store.DeviceAuthorization, def *signin.Definition) error {
	to, err := a.signin.Begin(w, r, realm, signin.Start{Requester: signin.RequesterDevice, RequesterID: d.UserCode, Definition: def,
		Wants: signin.Wants{Client: d.PublicClientID, ClientName: deviceClientName(d)}, ExpiresAt: time.UnixMilli(d.ExpiresAt)})
	if err != nil {
		return err
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}
