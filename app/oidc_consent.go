package app

import (
	"errors"
	"net/http"
	"slices"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// errOtherBrowser: a consent form of a request that this browser's SSO
// session did not authenticate.
var errOtherBrowser = pageErr(http.StatusForbidden, apperr.CodeForbidden, "error.otherBrowser")

// consentRequest loads the request a consent form answers: authenticated,
// and by the browser's own SSO session.
func (a *App) consentRequest(r *http.Request, realm *store.Realm, id string) (*store.AuthRequest, *store.Client, error) {
	ar, client, err := a.pageAuthRequest(r.Context(), realm, id, true)
	if err != nil {
		return nil, nil, err
	}
	sso, _, err := a.ssoSession(r, realm)
	if err != nil {
		return nil, nil, err
	}
	if sso == nil || sso.ID != ar.SessionID {
		return nil, nil, errOtherBrowser
	}
	return ar, client, nil
}

// consentPage lists the scopes the client asks for, each in plain words,
// for the user to allow or deny, and apart from them the client's default
// scopes the request did not name, which the grant holds too.
func (a *App) consentPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ar, client, err := a.consentRequest(r, realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	scopes, err := a.grantScopes(r.Context(), realm, client, ar.Scopes)
	var oe *oidc.Error
	if errors.As(err, &oe) { // a scope taken from the client meanwhile
		return a.authErrorResponse(w, r, ar, oe)
	} else if err != nil {
		return err
	}
	token := a.pages.CSRFToken(w, r, realm, "consent", ar.ID)
	form := ui.ConsentForm{Action: a.issuer(realm) + pathConsent, AuthRequestID: ar.ID, CSRFToken: token,
		ClientName: clientName(client)}
	for _, sc := range scopes {
		// A request that named no scope asked for the client's defaults;
		// the defaults a request did not name are granted all the same, so
		// they are shown apart rather than hidden.
		if len(ar.Scopes) == 0 || slices.Contains(ar.Scopes, sc.Name) {
			form.Scopes = append(form.Scopes, consentScope(sc))
		} else {
			form.AlsoShared = append(form.AlsoShared, consentScope(sc))
		}
	}
	return a.pages.Render(w, r, http.StatusOK, ui.Consent(a.pages.Page("consent.title"), form))
}

// standardScopes are the client scopes every realm starts with, whose
// consent text is in the pages' catalogues (consent.scope.<name>).
var standardScopes = []string{"openid", "profile", "email", "address", "phone", "offline_access", "roles",
	"web-origins", "microprofile-jwt", "organization"}

// consentScope is how the consent page shows sc: a standard scope by its
// catalogue text, in the reader's language; any other by the description
// its admin gave it, else by its name.
func consentScope(sc *store.ClientScope) ui.ConsentScope {
	if slices.Contains(standardScopes, sc.Name) {
		return ui.ConsentScope{Key: "consent.scope." + sc.Name, Name: sc.Name}
	}
	return ui.ConsentScope{Name: sc.Name, Description: sc.Description}
}

// consent takes the user's decision: approval is stored as a grant of the
// scopes and the client gets its code; denial sends it access_denied.
func (a *App) consent(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.consent.unreadable")
	}
	ar, client, err := a.consentRequest(r, realm, r.PostForm.Get("authRequestID"))
	if err != nil {
		return err
	}
	if err := a.pages.CheckCSRF(r, "consent", ar.ID); err != nil {
		return err
	}
	switch r.PostForm.Get("action") {
	case "approve":
		scopes, err := a.grantScopes(r.Context(), realm, client, ar.Scopes)
		var oe *oidc.Error
		if errors.As(err, &oe) { // a scope taken from the client meanwhile
			return a.authErrorResponse(w, r, ar, oe)
		} else if err != nil {
			return err
		}
		return a.issueCode(w, r, realm, ar, func(tx *store.Store) error {
			return tx.GrantConsent(r.Context(), ar.UserID, client.ID, scopeNames(scopes), a.now().UnixMilli())
		})
	case "deny":
		if err := a.store.DeleteAuthRequest(r.Context(), realm.ID, ar.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return a.authErrorResponse(w, r, ar, oidc.ErrAccessDenied().WithDescription("the user denied access"))
	default:
		return badPage("error.consent.noAnswer")
	}
}
