package account

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The account's linked accounts (identity brokering): the list, unlinking
// (never the last way to sign in) and, from a browser, linking another.
// The links themselves are app/broker's.

const (
	// LinkedPath is the linked accounts' page and API under /account.
	LinkedPath        = "/linked-accounts"
	accountLinkedForm = "account-linked" // names the page's forms in their CSRF token
)

// LinkedAccount is an identity provider the user may sign in with, and
// the user's link to it if any: app/broker's, as the API shows it.
type LinkedAccount struct {
	ProviderAlias  string `json:"providerAlias"`
	DisplayName    string `json:"displayName"`
	ProviderType   string `json:"providerType"`
	Connected      bool   `json:"connected"`
	LinkedUsername string `json:"linkedUsername,omitempty"`
}

// Links are the user's links to the realm's identity providers: the
// broker's (app/broker), which the server hands over, since a module does
// not import another.
type Links interface {
	// LinkedAccounts lists the realm's enabled providers and those the
	// user is linked to.
	LinkedAccounts(ctx context.Context, realm *store.Realm, user *store.User) ([]LinkedAccount, error)
	// Unlink removes the user's link to the provider alias, unless it is
	// their last way to sign in (Deps.ErrLastSignIn).
	Unlink(ctx context.Context, realm *store.Realm, user *store.User, alias string) error
	// StartLink sends the browser to the provider alias to link the
	// account there to user.
	StartLink(w http.ResponseWriter, r *http.Request, realm *store.Realm, user *store.User, alias string) error
}

var accountLinkedNotices = map[string]string{"linked": "account.linked.done.linked", "unlinked": "account.linked.done.unlinked"}

func (s *Service) Linked(w http.ResponseWriter, r *http.Request, c *Caller) error {
	if c.API {
		list, err := s.deps.Links.LinkedAccounts(r.Context(), c.Realm, c.User)
		if err != nil {
			return err
		}
		return httpx.OK(w, list)
	}
	return s.renderAccountLinked(w, r, c, http.StatusOK, accountLinkedNotices[r.URL.Query().Get("done")], "")
}

func (s *Service) renderAccountLinked(w http.ResponseWriter, r *http.Request, c *Caller, status int, notice, errKey string) error {
	list, err := s.deps.Links.LinkedAccounts(r.Context(), c.Realm, c.User)
	if err != nil {
		return err
	}
	token := s.deps.Pages.CSRFToken(w, r, c.Realm, accountLinkedForm, c.Session.ID)
	base := s.deps.BaseURL + Path(c.Realm)
	v := ui.AccountLinkedView{Notice: notice, Error: errKey, CSRFToken: token, AccountURL: base + "/"}
	for _, l := range list {
		item := ui.AccountLinkedItem{Name: l.DisplayName, Type: l.ProviderType, Connected: l.Connected, Username: l.LinkedUsername,
			Icon: s.deps.Assets.ProviderIcon(l.ProviderType)}
		one := base + LinkedPath + "/" + url.PathEscape(l.ProviderAlias)
		item.UnlinkAction, item.LinkAction = one+"/delete", one+"/link"
		v.Items = append(v.Items, item)
	}
	signin.FormsLeaveServer(r.Context()) // a link starts with a sign-in at the provider
	return s.deps.Pages.Render(w, r, status, ui.AccountLinked(s.deps.Pages.Page("account.linked.title"), v))
}

// Unlink removes a link: DELETE for an API caller, the page's form
// for a browser.
func (s *Service) Unlink(w http.ResponseWriter, r *http.Request, c *Caller) error {
	if !c.API {
		if err := r.ParseForm(); err != nil {
			return errFormUnreadable
		}
		if err := s.deps.Pages.CheckCSRF(r, accountLinkedForm, c.Session.ID); err != nil {
			return err
		}
	}
	alias := mux.Vars(r)["alias"]
	err := s.deps.Links.Unlink(r.Context(), c.Realm, c.User, alias)
	switch {
	case errors.Is(err, s.deps.ErrLastSignIn) && !c.API:
		return s.renderAccountLinked(w, r, c, http.StatusConflict, "", "account.linked.error.last")
	case err != nil:
		return err
	}
	s.deps.LoginEvent(r.Context(), c.Realm, store.LoginEvent{Type: store.EventRemoveFederatedIdentity, UserID: c.User.ID,
		SessionID: c.SessionID(), ClientID: c.ClientID, IPAddress: s.deps.ClientIP(r),
		Details: map[string]string{"username": c.User.Username, "identity_provider": alias}})
	if c.API {
		return httpx.NoContent(w)
	}
	http.Redirect(w, r, s.deps.BaseURL+Path(c.Realm)+LinkedPath+"?done=unlinked", http.StatusSeeOther)
	return nil
}

// LinkStart sends a browser to a provider to link its account
// there to this one.
func (s *Service) LinkStart(w http.ResponseWriter, r *http.Request, c *Caller) error {
	if err := r.ParseForm(); err != nil {
		return errFormUnreadable
	}
	if err := s.deps.Pages.CheckCSRF(r, accountLinkedForm, c.Session.ID); err != nil {
		return err
	}
	return s.deps.Links.StartLink(w, r, c.Realm, c.User, mux.Vars(r)["alias"])
}
