package ldapfed

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// The credential source: the identity core asks it after the local store,
// for the logins the store does not know and for the users linked to an
// entry. A password is checked by binding as the user's entry; it is
// never stored.

// CheckPassword answers for a linked user (by its provider), or looks the
// login up in the realm's enabled providers in order of priority: the
// first that has the entry decides. A right password of an entry not yet
// imported imports it. A directory that fails is a 503 within its
// timeouts: never a fallback to another provider or to a stale password.
func (s *Service) CheckPassword(ctx context.Context, at identity.PasswordAttempt) (identity.Answer, error) {
	if at.User != nil {
		return s.checkLinked(ctx, at)
	}
	// From a guarded address, an unknown login costs no directory round
	// trips; without a password there is nothing to bind with.
	if at.Guarded || at.Password == "" {
		return identity.Answer{Verdict: identity.NotMine}, nil
	}
	providers, err := s.deps.Store.ListFederationProviders(ctx, at.Realm.ID)
	if err != nil {
		return identity.Answer{}, err
	}
	for _, p := range providers {
		if !p.Enabled {
			continue
		}
		answer, err := s.checkNew(ctx, at, p)
		if err != nil {
			return identity.Answer{}, s.unavailable(ctx, p, err)
		}
		if answer.Verdict != identity.NotMine {
			return answer, nil
		}
	}
	return identity.Answer{Verdict: identity.NotMine}, nil
}

// signInContext bounds a sign-in's work with one directory: a connection
// and a read.
func signInContext(ctx context.Context, set *Settings) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, set.connectionTimeout()+set.readTimeout())
}

// checkNew looks a login up in one provider and binds as its entry.
func (s *Service) checkNew(ctx context.Context, at identity.PasswordAttempt, p *store.FederationProvider) (identity.Answer, error) {
	set, err := settingsOf(p)
	if err != nil {
		return identity.Answer{}, err
	}
	ctx, cancel := signInContext(ctx, set)
	defer cancel()
	sess, e, err := s.findEntry(ctx, set, p, set.loginFilter(at.Login))
	if err != nil || e == nil {
		return identity.Answer{Verdict: identity.NotMine}, err
	}
	defer sess.end()
	eu, err := set.readEntry(e)
	if err != nil {
		s.deps.Log.Warn("a directory entry cannot be a user", "provider", p.Name, "dn", e.DN, "err", err)
		return identity.Answer{Verdict: identity.NotMine}, nil
	}
	if right, err := sess.bindUser(e.DN, at.Password); err != nil || !right {
		return identity.Answer{Verdict: identity.WrongPassword}, err
	}
	// The entry may be linked already, to a user the login did not name
	// (signed in by email before the local user had one).
	link, err := s.deps.Store.FederationLinkByExternalID(ctx, at.Realm.ID, p.ID, eu.ExternalID)
	var u *store.User
	switch {
	case errors.Is(err, store.ErrNotFound):
		if u, err = s.importUser(ctx, at.Realm, p, eu); err != nil {
			// The same user's first sign-in, twice at once: the other
			// imported it.
			if l, lerr := s.deps.Store.FederationLinkByExternalID(ctx, at.Realm.ID, p.ID, eu.ExternalID); lerr == nil {
				u, err = s.deps.Store.GetUser(ctx, at.Realm.ID, l.UserID)
			}
			if err != nil {
				return identity.Answer{}, err
			}
			break
		}
		s.deps.Log.Info("imported a directory user at sign-in", "realm", at.Realm.Name, "provider", p.Name, "username", u.Username)
	case err != nil:
		return identity.Answer{}, err
	default:
		if u, err = s.deps.Store.GetUser(ctx, at.Realm.ID, link.UserID); err != nil {
			return identity.Answer{}, err
		}
		_, ended, err := s.refreshUser(ctx, s.deps.Store, at.Realm, u, link, eu, set)
		if err != nil {
			return identity.Answer{}, err
		}
		s.sessionsEnded(ctx, at.Realm, ended)
	}
	if err := s.syncSignInGroups(ctx, sess.c, set, at.Realm, u, e); err != nil {
		return identity.Answer{}, err
	}
	return identity.Answer{Verdict: identity.RightPassword, User: u}, nil
}

// checkLinked checks the password of a user linked to an entry, by
// binding as that entry, found again by its stable ID (its DN may have
// moved). A user that is not linked is not this source's.
func (s *Service) checkLinked(ctx context.Context, at identity.PasswordAttempt) (identity.Answer, error) {
	link, err := s.deps.Store.GetFederationLink(ctx, at.Realm.ID, at.User.ID)
	if errors.Is(err, store.ErrNotFound) {
		return identity.Answer{Verdict: identity.NotMine}, nil
	} else if err != nil {
		return identity.Answer{}, err
	}
	wrong := identity.Answer{Verdict: identity.WrongPassword, User: at.User}
	p, err := s.deps.Store.GetFederationProvider(ctx, at.Realm.ID, link.ProviderID)
	if err != nil {
		return identity.Answer{}, err
	}
	// A disabled provider signs nobody in; nor does an empty password.
	if !p.Enabled || at.Password == "" {
		return wrong, nil
	}
	set, err := settingsOf(p)
	if err != nil {
		return identity.Answer{}, err
	}
	ctx, cancel := signInContext(ctx, set)
	defer cancel()
	filter, err := set.idFilter(link.ExternalID)
	if err != nil {
		return identity.Answer{}, err
	}
	sess, e, err := s.findEntry(ctx, set, p, filter)
	if err != nil {
		return identity.Answer{}, s.unavailable(ctx, p, err)
	}
	if e == nil {
		s.deps.Log.Warn("a linked user's directory entry is gone", "realm", at.Realm.Name, "provider", p.Name,
			"username", at.User.Username)
		return wrong, nil
	}
	defer sess.end()
	right, err := sess.bindUser(e.DN, at.Password)
	if err != nil {
		return identity.Answer{}, s.unavailable(ctx, p, err)
	}
	if !right {
		return wrong, nil
	}
	eu, err := set.readEntry(e)
	if err != nil {
		s.deps.Log.Warn("a linked user's directory entry cannot be read", "provider", p.Name, "dn", e.DN, "err", err)
		return wrong, nil
	}
	_, ended, err := s.refreshUser(ctx, s.deps.Store, at.Realm, at.User, link, eu, set)
	if err != nil {
		return identity.Answer{}, err
	}
	s.sessionsEnded(ctx, at.Realm, ended)
	if err := s.syncSignInGroups(ctx, sess.c, set, at.Realm, at.User, e); err != nil {
		return identity.Answer{}, s.unavailable(ctx, p, err)
	}
	return identity.Answer{Verdict: identity.RightPassword, User: at.User}, nil
}

// session is a pooled connection lent to one sign-in.
type session struct {
	c    *ldap.Conn
	set  *Settings
	p    *store.FederationProvider
	done func(reuse bool)
	// asAccount: bound as the provider's account (else as a user, or
	// broken): only then may the connection go back to the pool.
	asAccount bool
}

// end gives the connection back to the pool when it is bound as the
// provider's account, else closes it.
func (sess *session) end() { sess.done(sess.asAccount) }

// bindUser binds as a user's entry, then as the provider's account again
// (for the group searches, and the pool): right, wrong, or a failure of
// the directory.
func (sess *session) bindUser(dn, password string) (bool, error) {
	sess.asAccount = false
	right, err := bindUser(sess.c, sess.set, dn, password)
	if err != nil {
		return false, err
	}
	if err := bindAs(sess.c, sess.set.BindDN, sess.p.BindCredential); err != nil {
		return false, classify(err, sess.set, "bind as "+sess.set.BindDN)
	}
	sess.asAccount = true
	return right, nil
}

// findEntry takes a connection bound as the provider's account and finds
// the one user entry that matches item (an escaped filter item). No
// entry, or more than one, is nil with the connection given back;
// otherwise the session comes with it, for the user's bind.
func (s *Service) findEntry(ctx context.Context, set *Settings, p *store.FederationProvider, item string) (*session, *ldap.Entry, error) {
	c, done, err := s.conns.get(ctx, p, set)
	if err != nil {
		return nil, nil, err
	}
	res, err := c.Search(ldap.NewSearchRequest(set.UsersDN, set.searchScope(), ldap.NeverDerefAliases, 2, 0, false,
		set.userFilter(item), set.attributes(), nil))
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		done(false)
		return nil, nil, classify(err, set, "search the users")
	}
	if res == nil || len(res.Entries) != 1 {
		done(true)
		return nil, nil, nil
	}
	return &session{c: c, set: set, p: p, done: done, asAccount: true}, res.Entries[0], nil
}

// bindUser binds as a user's entry: right, wrong, or a failure of the
// directory.
func bindUser(c *ldap.Conn, set *Settings, dn, password string) (bool, error) {
	err := bindAs(c, dn, password)
	var de *DirectoryError
	switch {
	case err == nil:
		return true, nil
	case ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials), errors.As(err, &de) && de.Kind == KindInvalidCredentials:
		return false, nil
	}
	return false, classify(err, set, "bind as the user")
}

// unavailable is a directory's failure as a sign-in answers it: a 503
// that says what kind of failure, without the directory's address; the
// detail goes to the log.
func (s *Service) unavailable(ctx context.Context, p *store.FederationProvider, err error) error {
	var de *DirectoryError
	if !errors.As(err, &de) {
		return err
	}
	s.deps.Log.WarnContext(ctx, "a user directory failed a sign-in", "provider", p.Name, "kind", de.Kind, "detail", de.Detail)
	what := "is unavailable"
	if de.Kind == KindTimeout {
		what = "did not answer in time"
	}
	return &apperr.Error{Status: http.StatusServiceUnavailable, Code: apperr.CodeUnavailable,
		Message: "the user directory " + what + "; try again later", Cause: err}
}
