package ldapfed

import (
	"context"
	"errors"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// The users of entries, written through the identity core: an import
// creates the user and its link in one transaction; a refresh writes the
// entry's profile onto the linked user when it changed.

// importUser creates the local user of an entry, linked to it. The
// directory vouches for the address, as Keycloak's "trust email" does. A
// username or email a local user holds already is a 409 naming the field.
func (s *Service) importUser(ctx context.Context, realm *store.Realm, p *store.FederationProvider, eu entryUser) (*store.User, error) {
	var u *store.User
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		var err error
		u, err = s.createLinked(ctx, tx, realm, p, eu)
		return err
	})
	return u, err
}

func (s *Service) createLinked(ctx context.Context, tx *store.Store, realm *store.Realm, p *store.FederationProvider, eu entryUser) (*store.User, error) {
	u, err := s.deps.Identity().CreateUser(ctx, tx, realm, identity.NewUser{Username: eu.Username, Email: eu.Email,
		FirstName: eu.FirstName, LastName: eu.LastName, Disabled: eu.Disabled, EmailVerified: eu.Email != ""})
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Status == 409 {
		return nil, apperr.Conflict(ae.Field, "a local user already has the %s of directory entry %s: it cannot be imported", ae.Field, eu.DN)
	} else if err != nil {
		return nil, err
	}
	link := &store.FederationLink{UserID: u.ID, RealmID: realm.ID, ProviderID: p.ID, ExternalID: eu.ExternalID, DN: eu.DN}
	if err := tx.PutFederationLink(ctx, link); err != nil {
		return nil, err
	}
	return u, nil
}

// refreshUser writes the entry's profile (username, email, names, and
// Active Directory's disabled flag) onto u, its linked user, on st, and
// moves the link when the entry's DN changed. It says whether anything
// changed, and which sessions a disable ended, for the caller to pass on
// once st has committed; u is updated in place.
func (s *Service) refreshUser(ctx context.Context, st *store.Store, realm *store.Realm, u *store.User, link *store.FederationLink,
	eu entryUser, set *Settings) (changed bool, ended []*store.Session, err error) {
	next, changed, err := profileOf(u, eu, set)
	if err != nil {
		return false, nil, err
	}
	if changed {
		if ended, err = s.deps.Identity().UpdateLinkedUser(ctx, st, &next); err != nil {
			return false, nil, err
		}
		*u = next
	}
	if link.DN != eu.DN {
		link.DN = eu.DN
		if err := st.PutFederationLink(ctx, link); err != nil {
			return false, nil, err
		}
		changed = true
	}
	return changed, ended, nil
}

// profileOf is u with the entry's profile, and whether that differs from
// u: the user rules applied, so that a difference in case or spacing the
// rules take away is none.
func profileOf(u *store.User, eu entryUser, set *Settings) (store.User, bool, error) {
	next := *u
	next.Username, next.Email, next.FirstName, next.LastName = eu.Username, eu.Email, eu.FirstName, eu.LastName
	if set.Vendor == "ad" {
		next.Enabled = !eu.Disabled
	}
	if err := identity.ValidateUser(&next); err != nil {
		return next, false, err
	}
	if next.Email != u.Email {
		next.EmailVerified = next.Email != ""
	}
	return next, next != *u, nil
}

// UserFederation says whether a user is linked to an entry of one of the
// realm's providers (its password is the directory's), and whether that
// provider is READ_ONLY (its profile is the directory's too): the identity
// core's question before it writes a user.
func (s *Service) UserFederation(ctx context.Context, st *store.Store, realmID, userID string) (linked, readOnly bool, err error) {
	link, err := st.GetFederationLink(ctx, realmID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return false, false, nil
	} else if err != nil {
		return false, false, err
	}
	p, err := st.GetFederationProvider(ctx, realmID, link.ProviderID)
	if err != nil {
		return true, false, err
	}
	set, err := settingsOf(p)
	if err != nil {
		return true, false, err
	}
	return true, set.SyncMode == ModeReadOnly, nil
}
