package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The account's view of a person's links: which providers they are linked
// to, unlinking one (never the last way to sign in), and linking another
// from a signed-in session (a sign-in upstream whose identity is linked to
// the session's user rather than signing anyone in).

// LinkedAccount is a provider as the account shows it to a person.
type LinkedAccount struct {
	ProviderAlias  string `json:"providerAlias"`
	DisplayName    string `json:"displayName"`
	ProviderType   string `json:"providerType"`
	Connected      bool   `json:"connected"`
	LinkedUsername string `json:"linkedUsername,omitempty"`
}

// LinkedAccounts lists the realm's enabled providers and those the user
// is linked to, by alias.
func (s *Service) LinkedAccounts(ctx context.Context, realm *store.Realm, user *store.User) ([]LinkedAccount, error) {
	providers, err := s.deps.Store.ListIdentityProviders(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	links, err := s.deps.Store.ListFederatedIdentities(ctx, realm.ID, user.ID)
	if err != nil {
		return nil, err
	}
	out := []LinkedAccount{}
	for _, p := range providers {
		i := slices.IndexFunc(links, func(f *store.FederatedIdentity) bool { return f.ProviderID == p.ID })
		if !p.Enabled && i < 0 {
			continue
		}
		a := LinkedAccount{ProviderAlias: p.Alias, DisplayName: p.DisplayName, ProviderType: p.ProviderType, Connected: i >= 0}
		if a.DisplayName == "" {
			a.DisplayName = p.Alias
		}
		if i >= 0 {
			a.LinkedUsername = links[i].Username
		}
		out = append(out, a)
	}
	return out, nil
}

// ErrLastSignIn refuses to unlink a person's only way to sign in.
var ErrLastSignIn = apperr.New(http.StatusConflict, apperr.CodeConflict,
	"this link is your only way to sign in: set a password or link another account first").WithKey("account.linked.error.last")

// Unlink removes the user's link to the provider alias, unless it is their
// last way to sign in: no password, no security key or passkey, no other
// link.
func (s *Service) Unlink(ctx context.Context, realm *store.Realm, user *store.User, alias string) error {
	links, err := s.deps.Store.ListFederatedIdentities(ctx, realm.ID, user.ID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(links, func(f *store.FederatedIdentity) bool { return f.Alias == alias }) {
		return apperr.NotFound("link to identity provider " + alias)
	}
	if user.PasswordHash == "" && len(links) == 1 {
		types, err := s.deps.Store.CredentialTypes(ctx, realm.ID, user.ID)
		if err != nil {
			return err
		}
		if !slices.Contains(types, store.CredentialWebAuthn) {
			return ErrLastSignIn
		}
	}
	return s.unlink(ctx, realm, user, alias)
}

// StartLink sends a signed-in person's browser to the provider alias to
// sign in there; the callback links that upstream account to user and
// goes back to returnTo, a page of the account.
func (s *Service) StartLink(w http.ResponseWriter, r *http.Request, realm *store.Realm, user *store.User, alias string) error {
	p, err := s.enabledProvider(r.Context(), realm, alias)
	if err != nil {
		return err
	}
	if p.ClientSecret == "" {
		return errNotConfigured
	}
	return s.redirectUpstream(w, r, realm, p, &store.BrokerLogin{LinkUserID: user.ID}, "")
}

// accountLinkedURL is the account's page of links, where a link made from
// it goes back to.
func (s *Service) accountLinkedURL(realm *store.Realm, done string) string {
	return s.issuer(realm) + "/account/linked-accounts?done=" + done
}

// finishLink links the upstream identity to the user who started the link
// from the account. An upstream account linked to someone else, or a user
// linked to another account of the provider, is refused.
func (s *Service) finishLink(w http.ResponseWriter, r *http.Request, realm *store.Realm, p *store.IdentityProvider, l *store.BrokerLogin, ident *upstreamIdentity) error {
	ctx := r.Context()
	user, err := s.deps.Store.GetUser(ctx, realm.ID, l.LinkUserID)
	if errors.Is(err, store.ErrNotFound) {
		return fail(errStaleRequest, "invalid_request", errors.New("the user who started the link is gone"))
	} else if err != nil {
		return err
	}
	if !user.Enabled {
		return fail(errUserDisabled, "user_disabled", errors.New("user "+user.ID+" is disabled"))
	}
	existing, err := s.deps.Store.FederatedIdentityBySubject(ctx, p.ID, ident.Subject)
	switch {
	case err == nil && existing.UserID != user.ID:
		return fail(errLinkConflict, "already_linked", fmt.Errorf("upstream subject %s is linked to user %s", ident.Subject, existing.UserID))
	case err == nil:
		http.Redirect(w, r, s.accountLinkedURL(realm, "linked"), http.StatusSeeOther)
		return nil
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	st, err := readSettings(p)
	if err != nil {
		return err
	}
	if err := s.deps.Store.Tx(ctx, func(tx *store.Store) error { return s.link(ctx, tx, realm, p, st, user, ident) }); err != nil {
		return err
	}
	s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventFederatedIdentityLink, UserID: user.ID, IPAddress: s.deps.ClientIP(r),
		Details: map[string]string{"identity_provider": p.Alias, "identity_provider_identity": ident.Username}})
	http.Redirect(w, r, s.accountLinkedURL(realm, "linked"), http.StatusSeeOther)
	return nil
}
