package broker

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// AMRFederated is the amr of a sign-in through an upstream provider.
const AMRFederated = "fed"

// flowSignInLifetime is how long the upstream ID token of a flow's sign-in
// waits for the SSO session the flow ends in: longer than any flow lives.
const flowSignInLifetime = time.Hour

// finishLogin finds the user an upstream identity belongs to and signs
// them in. A linked upstream account is its user. Without a link: a local
// account with the same email is linked when the provider is trusted with
// emails and the upstream says the email is verified, else the person
// signs in to that account once to confirm the link (link.go); with no
// such account, a user is created through the identity core. Disabled
// users stay out.
func (s *Service) finishLogin(w http.ResponseWriter, r *http.Request, realm *store.Realm, p *store.IdentityProvider, l *store.BrokerLogin, ident *upstreamIdentity) error {
	ctx := r.Context()
	st, err := readSettings(p)
	if err != nil {
		return err
	}
	// Whichever way the sign-in ends, its session signs out upstream.
	switch {
	case ident.IDToken == "":
	case l.AuthRequestID != "":
		if err := s.deps.Store.PutBrokerSignIn(ctx, l.AuthRequestID, p.ID, ident.IDToken); err != nil {
			return err
		}
	case l.SignInFlowID != "":
		expires := s.deps.Now().Add(flowSignInLifetime).UnixMilli()
		if err := s.deps.Store.PutBrokerFlowSignIn(ctx, l.SignInFlowID, p.ID, ident.IDToken, expires); err != nil {
			return err
		}
	}
	link, err := s.deps.Store.FederatedIdentityBySubject(ctx, p.ID, ident.Subject)
	switch {
	case err == nil:
		user, err := s.deps.Store.GetUser(ctx, realm.ID, link.UserID)
		if err != nil {
			return err
		}
		if !user.Enabled {
			return fail(errUserDisabled, "user_disabled", errors.New("user "+user.ID+" is disabled"))
		}
		err = s.deps.Store.Tx(ctx, func(tx *store.Store) error { return s.syncLinked(ctx, tx, realm, p, st, user, link, ident) })
		if err != nil {
			return err
		}
		return s.signIn(w, r, realm, p, l, user, ident, store.EventIdentityProviderLogin)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if ident.Email != "" {
		existing, err := s.deps.Store.GetUserByEmail(ctx, realm.ID, ident.Email)
		switch {
		case err == nil && !existing.Enabled:
			return fail(errUserDisabled, "user_disabled", errors.New("user "+existing.ID+" is disabled"))
		case err == nil && p.TrustEmail && ident.EmailVerified:
			err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
				return s.link(ctx, tx, realm, p, st, existing, ident)
			})
			if err != nil {
				return err
			}
			return s.signIn(w, r, realm, p, l, existing, ident, store.EventFederatedIdentityLink)
		case err == nil:
			return s.askToConfirmLink(w, r, realm, p, l, existing, ident)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	user, err := s.createUser(ctx, realm, p, st, ident)
	if err != nil {
		return err
	}
	return s.signIn(w, r, realm, p, l, user, ident, store.EventIdentityProviderFirstLogin)
}

// signIn hands the user to the app's sign-in, with the event saying how
// the provider found them.
func (s *Service) signIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, p *store.IdentityProvider, l *store.BrokerLogin, user *store.User, ident *upstreamIdentity, event store.EventType) error {
	e := store.LoginEvent{Type: event, UserID: user.ID, IPAddress: s.deps.ClientIP(r),
		Details: map[string]string{"identity_provider": p.Alias, "identity_provider_identity": ident.Username}}
	return s.deps.SignIn(w, r, realm, Finish{AuthRequestID: l.AuthRequestID, FlowID: l.SignInFlowID, User: user, ProviderID: p.ID,
		AMR: []string{AMRFederated}, Events: []store.LoginEvent{e}})
}

// createUser creates the user of a first sign-in through the identity core
// (the realm's user rules), with the link, the mapped attributes and
// roles, in one transaction. A username another user holds is tried again
// as "<alias>.<username>"; an email another user holds cannot happen here
// (that user would have been found).
func (s *Service) createUser(ctx context.Context, realm *store.Realm, p *store.IdentityProvider, st settings, ident *upstreamIdentity) (*store.User, error) {
	var user *store.User
	for _, username := range []string{ident.Username, p.Alias + "." + ident.Username} {
		err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
			var err error
			user, err = s.deps.Core.CreateUser(ctx, tx, realm, identity.NewUser{Username: username, Email: ident.Email,
				FirstName: ident.FirstName, LastName: ident.LastName, EmailVerified: p.TrustEmail && ident.EmailVerified})
			if err != nil {
				return err
			}
			return s.link(ctx, tx, realm, p, st, user, ident)
		})
		var ae *apperr.Error
		switch {
		case err == nil:
			return user, nil
		case errors.As(err, &ae) && ae.Status == http.StatusConflict && ae.Field == "username":
			continue
		case errors.As(err, &ae) && ae.Status < 500:
			return nil, fail(errProfile, "invalid_profile", err)
		default:
			return nil, err
		}
	}
	return nil, fail(errProfile, "username_in_use", errors.New("username "+ident.Username+" is taken, and "+p.Alias+"."+ident.Username+" too"))
}

// link links user to the upstream identity, with the mapped attributes and
// roles, inside tx.
func (s *Service) link(ctx context.Context, tx *store.Store, realm *store.Realm, p *store.IdentityProvider, st settings, user *store.User, ident *upstreamIdentity) error {
	f := &store.FederatedIdentity{ProviderID: p.ID, UserID: user.ID, RealmID: realm.ID, Subject: ident.Subject,
		Username: ident.Username, Email: ident.Email, CreatedAt: s.deps.Now().UnixMilli()}
	if st.StoreToken {
		f.Token = ident.Token
	}
	if err := tx.CreateFederatedIdentity(ctx, f); err != nil {
		if errors.Is(err, store.ErrConflict) { // the user is linked to another account of this provider
			return fail(errLinkConflict, "already_linked", err)
		}
		return err
	}
	return s.applyMapping(ctx, tx, realm, user, ident)
}

// syncLinked updates a linked user at a later sign-in: the link's upstream
// username, email and tokens; with syncUserProfile, the user's names and
// email through the core (an email another user holds is left as it was);
// the mapped attributes and roles.
func (s *Service) syncLinked(ctx context.Context, tx *store.Store, realm *store.Realm, p *store.IdentityProvider, st settings, user *store.User, link *store.FederatedIdentity, ident *upstreamIdentity) error {
	link.Username, link.Email, link.Token = ident.Username, ident.Email, ""
	if st.StoreToken {
		link.Token = ident.Token
	}
	if err := tx.UpdateFederatedIdentity(ctx, link); err != nil {
		return err
	}
	if p.SyncUserProfile {
		updated := *user
		updated.FirstName, updated.LastName = ident.FirstName, ident.LastName
		if ident.Email != "" && ident.Email != user.Email {
			updated.Email, updated.EmailVerified = ident.Email, p.TrustEmail && ident.EmailVerified
		}
		_, err := s.deps.Core.UpdateUser(ctx, tx, &updated)
		var ae *apperr.Error
		if errors.As(err, &ae) && ae.Status == http.StatusConflict {
			updated.Email, updated.EmailVerified = user.Email, user.EmailVerified
			_, err = s.deps.Core.UpdateUser(ctx, tx, &updated)
		}
		if errors.As(err, &ae) && ae.Status < 500 {
			// Upstream names the realm's rules refuse: the account stays as it was.
			s.deps.Log.WarnContext(ctx, "profile from identity provider not synced", "provider", p.Alias, "user", user.ID, "err", err)
			err = nil
		}
		if err != nil {
			return err
		}
		*user = updated
	}
	return s.applyMapping(ctx, tx, realm, user, ident)
}

// applyMapping stores the mapped attributes and grants the mapped realm
// roles; a mapped role the realm does not have is skipped (and logged).
func (s *Service) applyMapping(ctx context.Context, tx *store.Store, realm *store.Realm, user *store.User, ident *upstreamIdentity) error {
	if len(ident.Attributes) > 0 {
		if err := tx.SetUserAttributes(ctx, user.ID, ident.Attributes); err != nil {
			return err
		}
	}
	if len(ident.Roles) == 0 {
		return nil
	}
	roles, missing, err := tx.RolesByName(ctx, realm.ID, "", ident.Roles)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		s.deps.Log.WarnContext(ctx, "mapped roles the realm does not have", "realm", realm.Name, "roles", missing)
	}
	ids := make([]string, len(roles))
	for i, role := range roles {
		ids[i] = role.ID
	}
	return tx.AddRoleMappings(ctx, store.UserRoles(user.ID), ids)
}
