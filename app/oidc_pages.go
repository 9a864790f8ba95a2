package app

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The browser side of the code flow: the authorization endpoint and the
// hosted login and consent pages. They answer in HTML, never JSON: a
// person is looking at them.

const (
	pathLogin = "/login"
	// pathSignInFlow is a page of a sign-in through an authentication
	// flow.
	pathSignInFlow = "/signin/{flow}"
	pathConsent    = "/consent"
)

// realmHandler serves one realm-scoped page.
type realmHandler func(w http.ResponseWriter, r *http.Request, realm *store.Realm) error

// realmPage loads the realm of a page request and renders what goes wrong
// as an error page.
func (a *App) realmPage(h realmHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		realm, err := a.protocolRealm(r.Context(), mux.Vars(r)["realm"])
		if errors.Is(err, store.ErrNotFound) {
			err = errNoRealm
		}
		if err == nil {
			r = signin.WithRealm(r, realm)
			err = h(w, r, realm)
		}
		if err != nil {
			a.renderPageError(w, r, err)
		}
	})
}

// errNoRealm is an unknown or disabled realm, on the pages and the APIs
// under /realms/{realm}.
var errNoRealm = apperr.NotFound("realm").WithKey("error.noRealm")

// pageErr is an error a page shows with its own message, key.
func pageErr(status int, code apperr.Code, key string) *apperr.Error {
	return apperr.New(status, code, "").WithKey(key)
}

// badPage is a request a page cannot take, said by key.
func badPage(key string) *apperr.Error {
	return pageErr(http.StatusBadRequest, apperr.CodeInvalidRequest, key)
}

// errStaleAuthRequest is a login or consent form whose authorization
// request is unknown, expired or already answered.
var errStaleAuthRequest = badPage("error.staleAuthRequest")

// pageMessages is the message a page shows for an error of a code, when
// the error brings none of its own (Key).
var pageMessages = map[apperr.Code]string{
	apperr.CodeNotFound:            "error.notFound",
	apperr.CodeTooManyRequests:     "error.tooManyRequests",
	apperr.CodeWebAuthnUnavailable: "webauthn.error.unavailable",
}

// pageFailure classifies err for a page: it is logged as the APIs log
// their failures (a fault of the server once, at error level, with its
// cause), Retry-After is set when the caller may try again, and key is
// the message to show: the error's own, else its code's, else its
// message when the caller is at fault; a fault of the server shows
// nothing of itself.
func (a *App) pageFailure(w http.ResponseWriter, r *http.Request, err error) (e *apperr.Error, key string) {
	e = httpx.Classify(err)
	httpx.LogFailure(a.log, r, e.Status, err)
	httpx.SetRetryAfter(w, e)
	switch key = pageMessages[e.Code]; {
	case e.Key != "":
		key = e.Key
	case key != "":
	case e.Status < http.StatusInternalServerError:
		key = e.Message
	default:
		key = "error.internal"
	}
	return e, key
}

// renderPageError is the renderer of the hosted pages: a refused form as
// its page says (signin.FormError), anything else as the error page, with the
// error's status.
func (a *App) renderPageError(w http.ResponseWriter, r *http.Request, err error) {
	var fe *signin.FormError
	if errors.As(err, &fe) {
		e := httpx.Classify(fe.Unwrap())
		httpx.SetRetryAfter(w, e)
		if err = fe.Page(w, r, e); err == nil {
			return
		}
	}
	e, key := a.pageFailure(w, r, err)
	if err := a.pages.Render(w, r, e.Status, ui.AuthError(a.pages.Page("error.title"), key)); err != nil {
		a.log.ErrorContext(r.Context(), "render error page", "err", err)
	}
}

// pageAuthRequest loads the authorization request a login or consent form
// answers: of the realm, not answered yet, not expired, and authenticated
// when the form needs a user. A request whose client has an
// authentication flow bound signs in through that flow's pages only
// (signin_oidc.go): the forms of the sign-in without a flow refuse it.
func (a *App) pageAuthRequest(ctx context.Context, realm *store.Realm, id string, authenticated bool) (*store.AuthRequest, *store.Client, error) {
	ar, c, err := loadAuthRequest(ctx, a.store, a.now(), realm, id, authenticated)
	if err != nil {
		return nil, nil, err
	}
	if !authenticated {
		if bound, _, err := a.signin.Definition(ctx, realm, store.ClientKindOIDC, c.ID, signin.UsageBrowser); err != nil {
			return nil, nil, err
		} else if bound != nil {
			return nil, nil, errStaleAuthRequest
		}
	}
	signin.FormsLeaveServer(ctx)
	return ar, c, nil
}

// loadAuthRequest is an authorization request of the realm, not answered
// yet and unexpired at now, of an enabled client, and authenticated when
// asked; otherwise errStaleAuthRequest.
func loadAuthRequest(ctx context.Context, st *store.Store, now time.Time, realm *store.Realm, id string, authenticated bool) (*store.AuthRequest, *store.Client, error) {
	if id == "" {
		return nil, nil, errStaleAuthRequest
	}
	ar, err := st.GetAuthRequest(ctx, realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errStaleAuthRequest
	} else if err != nil {
		return nil, nil, err
	}
	if ar.Done || ar.ExpiresAt <= now.UnixMilli() || (authenticated && ar.UserID == "") {
		return nil, nil, errStaleAuthRequest
	}
	c, err := st.GetClient(ctx, realm.ID, ar.ClientID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errStaleAuthRequest
	} else if err != nil {
		return nil, nil, err
	}
	if !c.Enabled {
		return nil, nil, errStaleAuthRequest
	}
	return ar, c, nil
}

// clientName is how pages name a client to people.
func clientName(c *store.Client) string {
	if c.Name != "" {
		return c.Name
	}
	return c.ClientID
}
