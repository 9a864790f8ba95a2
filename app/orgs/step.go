package orgs

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// step is the org-discovery step of an authentication flow: the person
// types an email, and the organization that verified its domain, through
// its SSO connection, sends the browser to its identity provider, whose
// callback passes the step (signin.Engine.Pass) with the user it vouched
// for.
type step struct {
	s     *Service
	pages *signin.Pages
	// loginURL starts a sign-in at the provider alias for a step of the
	// flow f (app/broker's FlowLoginURL).
	loginURL func(realm *store.Realm, alias string, f *signin.Flow) string
}

// Step is the organizations' step of the hosted sign-in (app/signin).
func (s *Service) Step(pages *signin.Pages, loginURL func(realm *store.Realm, alias string, f *signin.Flow) string) signin.Step {
	return step{s: s, pages: pages, loginURL: loginURL}
}

func (step) Kind() signin.StepKind { return signin.KindOrgDiscovery }

// AMR: the organization's provider vouches for the user, as an
// identity-provider step's does.
func (step) AMR() []string              { return []string{"fed"} }
func (step) Events() []signin.EventType { return nil }

func (st step) page(w http.ResponseWriter, r *http.Request, f *signin.Flow, v signin.View, status int, email, errKey string) error {
	return st.pages.Render(w, r, status, ui.LoginUsername(st.pages.Page("login.title"), ui.LoginForm{Action: v.FormAction(),
		CSRFToken: v.CSRF, ClientName: f.Wants.ClientName, Username: email, Error: errKey, Others: v.Ways}))
}

// Offer: a button to the step's page, in a realm where an email's domain
// may lead to an organization's provider.
func (st step) Offer(ctx context.Context, f *signin.Flow, c signin.Choice) ([]ui.OtherWay, error) {
	if ok, err := st.s.deps.Store.RealmHasSSODiscovery(ctx, f.Realm.ID); !ok || err != nil {
		return nil, err
	}
	return []ui.OtherWay{{Label: "signin.offer.organization", URL: c.URL}}, nil
}

func (st step) Show(w http.ResponseWriter, r *http.Request, f *signin.Flow, v signin.View) error {
	return st.page(w, r, f, v, http.StatusOK, f.Wants.LoginHint, "")
}

// Submit finds the organization of the email's domain and sends the
// browser to its provider, the email as its login_hint, as Keycloak
// passes it on; an email of no organization's domain gets the form again.
func (st step) Submit(w http.ResponseWriter, r *http.Request, f *signin.Flow, v signin.View) (*store.User, error) {
	email := strings.TrimSpace(r.PostForm.Get("username"))
	at := strings.LastIndexByte(email, '@')
	if at < 1 || at == len(email)-1 {
		return nil, st.page(w, r, f, v, http.StatusBadRequest, email, "signin.error.orgEmail")
	}
	domain := strings.TrimSuffix(strings.ToLower(email[at+1:]), ".")
	d, err := st.s.deps.Store.DiscoverSSOConnection(r.Context(), f.Realm.ID, domain)
	if errors.Is(err, store.ErrNotFound) {
		return nil, st.page(w, r, f, v, http.StatusBadRequest, email, "signin.error.noOrganization")
	} else if err != nil {
		return nil, err
	}
	to := st.loginURL(f.Realm, d.Connection.ProviderAlias, f) + "&" + url.Values{"login_hint": {email}}.Encode()
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil, nil
}
