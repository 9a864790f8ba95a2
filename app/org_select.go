package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The organization step of a browser sign-in, GET and POST
// /realms/{realm}/select-organization, as Keycloak 26's organization
// selection. A client asking for a scope with an organization mapper sees
// the user in one organization: the one the request's hint names
// (organization or kc_org), the user's only one, or, for a member of
// several, the one the user picks here once signed in. The choice goes
// into the organization claim of the tokens of that authorization and of
// the refresh tokens that follow.

const (
	pathOrgSelect = "/select-organization"
	orgSelectForm = "organization" // names the form in its CSRF token
)

// orgHintParam reads the organization an authorization request hints at:
// organization, or Keycloak's kc_org. Both naming different ones is the
// client's mistake.
func orgHintParam(q url.Values) (string, *oidc.Error) {
	hint, kc := strings.ToLower(q.Get("organization")), strings.ToLower(q.Get("kc_org"))
	switch {
	case len(hint) > maxAuthParam || len(kc) > maxAuthParam:
		return "", oidc.ErrInvalidRequest().WithDescription("organization is longer than %d characters", maxAuthParam)
	case hint != "" && kc != "" && hint != kc:
		return "", oidc.ErrInvalidRequest().WithDescription("organization and kc_org name different organizations")
	case hint != "":
		return hint, nil
	}
	return kc, nil
}

// settleOrganization decides the organization of a request its user
// authenticated for. Nothing is settled (a zero choice, no options) when
// none of its scopes has an organization mapper, or it settled already.
// options, when not empty, are the organizations the user must choose
// from. A hint the user is no member of settles on none, as Keycloak's
// organization:<alias> scope maps nothing for a non-member: the client
// asked for that organization's context, and no other stands in for it.
func (a *App) settleOrganization(ctx context.Context, realm *store.Realm, client *store.Client, ar *store.AuthRequest) (choice store.OrgChoice, options []store.OrgMembership, err error) {
	if ar.Org.Made {
		return ar.Org, nil, nil
	}
	granted, err := a.grantScopes(ctx, realm, client, ar.Scopes)
	var oe *oidc.Error
	if errors.As(err, &oe) {
		return choice, nil, nil // a scope taken from the client since: the redemption refuses it
	} else if err != nil {
		return choice, nil, err
	}
	if !scopesHaveMapper(granted, scopes.MapperOrganization) {
		return choice, nil, nil
	}
	all, err := a.store.UserOrganizations(ctx, ar.UserID)
	if err != nil {
		return choice, nil, err
	}
	member := slices.DeleteFunc(all, func(m store.OrgMembership) bool { return !m.Enabled })
	if ar.OrgHint != "" {
		i := slices.IndexFunc(member, func(m store.OrgMembership) bool { return m.Slug == ar.OrgHint })
		if i < 0 {
			return store.OrgChoice{Made: true}, nil, nil
		}
		return store.OrgChoice{Made: true, ID: member[i].OrgID}, nil, nil
	}
	switch len(member) {
	case 0:
		return store.OrgChoice{Made: true}, nil, nil
	case 1:
		return store.OrgChoice{Made: true, ID: member[0].OrgID}, nil, nil
	}
	return choice, member, nil
}

// orgStep settles the organization of a request just authenticated in the
// browser, or sends the browser to choose one. It says whether it did
// the latter.
func (a *App) orgStep(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest) (bool, error) {
	choice, options, err := a.settleOrganization(r.Context(), realm, client, ar)
	if err != nil {
		return false, err
	}
	if len(options) > 0 {
		http.Redirect(w, r, orgSelectURL(a.issuer(realm), ar.ID), http.StatusSeeOther)
		return true, nil
	}
	return false, a.keepOrgChoice(r.Context(), realm, ar, choice)
}

// ssoOrgStep is orgStep for a request the browser's SSO session answers,
// not stored yet: a choice goes in with it; a question stores it and sends
// the browser to answer, or, with prompt=none, answers the client
// interaction_required. It says whether it answered.
func (a *App) ssoOrgStep(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, sso *store.Session, ar *store.AuthRequest, silent bool) (bool, error) {
	choice, options, err := a.settleOrganization(r.Context(), realm, client, ar)
	if err != nil {
		return false, err
	}
	if len(options) == 0 {
		ar.Org = choice
		return false, nil
	}
	if silent {
		return true, a.authErrorResponse(w, r, ar, oidc.ErrInteractionRequired().WithDescription("the user must choose an organization"))
	}
	if err := a.saveSSORequest(r.Context(), realm, sso, ar); err != nil {
		return true, err
	}
	http.Redirect(w, r, orgSelectURL(a.issuer(realm), ar.ID), redirectStatus(r))
	return true, nil
}

// keepOrgChoice stores a choice made for a stored request.
func (a *App) keepOrgChoice(ctx context.Context, realm *store.Realm, ar *store.AuthRequest, choice store.OrgChoice) error {
	if !choice.Made || ar.Org.Made {
		return nil
	}
	err := a.store.SettleAuthRequestOrganization(ctx, realm.ID, ar.ID, choice, a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return errStaleAuthRequest // answered, expired or settled meanwhile
	} else if err != nil {
		return err
	}
	ar.Org = choice
	return nil
}

func orgSelectURL(issuer, authRequestID string) string {
	return issuer + pathOrgSelect + "?" + url.Values{"authRequestID": {authRequestID}}.Encode()
}

// orgSelectRequest loads the request an organization form answers:
// authenticated by the browser's own SSO session (as consent is), and not
// settled yet.
func (a *App) orgSelectRequest(r *http.Request, realm *store.Realm, id string) (*store.AuthRequest, *store.Client, error) {
	ar, client, err := a.consentRequest(r, realm, id)
	if err != nil {
		return nil, nil, err
	}
	if ar.Org.Made {
		return nil, nil, errStaleAuthRequest
	}
	return ar, client, nil
}

// orgSelectPage lists the user's organizations to choose from. Should the
// question have gone meanwhile (memberships changed), the sign-in goes on.
func (a *App) orgSelectPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ar, client, err := a.orgSelectRequest(r, realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	choice, options, err := a.settleOrganization(r.Context(), realm, client, ar)
	if err != nil {
		return err
	}
	if len(options) == 0 {
		if err := a.keepOrgChoice(r.Context(), realm, ar, choice); err != nil {
			return err
		}
		return a.consentOrCode(w, r, realm, client, ar)
	}
	return a.renderOrgSelect(w, r, realm, client, ar, options, http.StatusOK, "")
}

// orgSelect takes the user's choice, one of their organizations, and goes
// on to consent or back to the client.
func (a *App) orgSelect(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ar, client, err := a.orgSelectRequest(r, realm, r.PostForm.Get("authRequestID"))
	if err != nil {
		return err
	}
	if err := a.pages.CheckCSRF(r, orgSelectForm, ar.ID); err != nil {
		return err
	}
	choice, options, err := a.settleOrganization(r.Context(), realm, client, ar)
	if err != nil {
		return err
	}
	if len(options) > 0 {
		slug := r.PostForm.Get("organization")
		i := slices.IndexFunc(options, func(m store.OrgMembership) bool { return m.Slug == slug })
		if i < 0 {
			return a.renderOrgSelect(w, r, realm, client, ar, options, http.StatusBadRequest, "error.orgSelect.notMember")
		}
		choice = store.OrgChoice{Made: true, ID: options[i].OrgID}
	}
	if err := a.keepOrgChoice(r.Context(), realm, ar, choice); err != nil {
		return err
	}
	return a.consentOrCode(w, r, realm, client, ar)
}

func (a *App) renderOrgSelect(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, options []store.OrgMembership, status int, errKey string) error {
	token := a.pages.CSRFToken(w, r, realm, orgSelectForm, ar.ID)
	f := ui.OrgSelectForm{Action: a.issuer(realm) + pathOrgSelect, AuthRequestID: ar.ID, CSRFToken: token,
		ClientName: clientName(client), Error: errKey}
	for _, m := range options {
		f.Organizations = append(f.Organizations, ui.OrgSelectOption{Slug: m.Slug, Name: m.Name, Role: m.Role})
	}
	return a.pages.Render(w, r, status, ui.OrgSelect(a.pages.Page("org.select.title"), f))
}

// tokenOrgChoice reads back, from an access token's organization claim,
// the organization it was issued for, so that userinfo answers for the
// token's organization rather than every membership: one organization
// named is that one, none is none; several, or no organization mapper
// writing access tokens, is no choice.
func tokenOrgChoice(claims map[string]any, clientScopes []*store.ClientScope) store.OrgChoice {
	for _, m := range orderedMappers(clientScopes) {
		if m.MapperType != scopes.MapperOrganization || !scopes.AppliesTo(m, scopes.AccessToken) {
			continue
		}
		var v any = claims
		for _, p := range scopes.SplitClaimName(m.Config[scopes.CfgClaimName]) {
			obj, _ := v.(map[string]any)
			v = obj[p]
		}
		orgs, _ := v.(map[string]any)
		if len(orgs) > 1 {
			return store.OrgChoice{}
		}
		for _, o := range orgs {
			obj, _ := o.(map[string]any)
			id, _ := obj["id"].(string)
			return store.OrgChoice{Made: true, ID: id}
		}
		return store.OrgChoice{Made: true}
	}
	return store.OrgChoice{}
}
