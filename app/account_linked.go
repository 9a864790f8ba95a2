package app

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The account's linked accounts (identity brokering): the list, unlinking
// (never the last way to sign in) and, from a browser, linking another.
// The links themselves are app/broker's.

const (
	accountLinkedPath = "/linked-accounts"
	accountLinkedForm = "account-linked" // names the page's forms in their CSRF token
)

var accountLinkedNotices = map[string]string{"linked": "account.linked.done.linked", "unlinked": "account.linked.done.unlinked"}

func (a *App) accountLinked(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	if c.api {
		list, err := a.broker.LinkedAccounts(r.Context(), c.realm, c.user)
		if err != nil {
			return err
		}
		return httpx.OK(w, list)
	}
	return a.renderAccountLinked(w, r, c, http.StatusOK, accountLinkedNotices[r.URL.Query().Get("done")], "")
}

func (a *App) renderAccountLinked(w http.ResponseWriter, r *http.Request, c *accountCaller, status int, notice, errKey string) error {
	list, err := a.broker.LinkedAccounts(r.Context(), c.realm, c.user)
	if err != nil {
		return err
	}
	token := a.pages.CSRFToken(w, r, c.realm, accountLinkedForm, c.session.ID)
	base := a.cfg.BaseURL + accountPath(c.realm)
	v := ui.AccountLinkedView{Notice: notice, Error: errKey, CSRFToken: token, AccountURL: base + "/"}
	for _, l := range list {
		item := ui.AccountLinkedItem{Name: l.DisplayName, Type: l.ProviderType, Connected: l.Connected, Username: l.LinkedUsername,
			Icon: a.assets.ProviderIcon(l.ProviderType)}
		one := base + accountLinkedPath + "/" + url.PathEscape(l.ProviderAlias)
		item.UnlinkAction, item.LinkAction = one+"/delete", one+"/link"
		v.Items = append(v.Items, item)
	}
	signin.FormsLeaveServer(r.Context()) // a link starts with a sign-in at the provider
	return a.pages.Render(w, r, status, ui.AccountLinked(a.pages.Page("account.linked.title"), v))
}

// accountUnlink removes a link: DELETE for an API caller, the page's form
// for a browser.
func (a *App) accountUnlink(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	if !c.api {
		if err := r.ParseForm(); err != nil {
			return badPage("error.formUnreadable")
		}
		if err := a.pages.CheckCSRF(r, accountLinkedForm, c.session.ID); err != nil {
			return err
		}
	}
	alias := mux.Vars(r)["alias"]
	err := a.broker.Unlink(r.Context(), c.realm, c.user, alias)
	switch {
	case errors.Is(err, broker.ErrLastSignIn) && !c.api:
		return a.renderAccountLinked(w, r, c, http.StatusConflict, "", "account.linked.error.last")
	case err != nil:
		return err
	}
	a.loginEvent(r.Context(), c.realm, store.LoginEvent{Type: store.EventRemoveFederatedIdentity, UserID: c.user.ID,
		SessionID: accountSessionID(c), ClientID: c.clientID, IPAddress: a.clientIP(r),
		Details: map[string]string{"username": c.user.Username, "identity_provider": alias}})
	if c.api {
		return httpx.NoContent(w)
	}
	http.Redirect(w, r, a.cfg.BaseURL+accountPath(c.realm)+accountLinkedPath+"?done=unlinked", http.StatusSeeOther)
	return nil
}

// accountLinkStart sends a browser to a provider to link its account
// there to this one.
func (a *App) accountLinkStart(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	if err := a.pages.CheckCSRF(r, accountLinkedForm, c.session.ID); err != nil {
		return err
	}
	return a.broker.StartLink(w, r, c.realm, c.user, mux.Vars(r)["alias"])
}
