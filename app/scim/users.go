package scim

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// CreateUser provisions a user (RFC 7644 §3.3) through the identity core:
// its rules, the realm's password policy, and a taken userName or email
// as 409 uniqueness.
func (s *Service) CreateUser(w http.ResponseWriter, r *http.Request) error {
	ctx, realm := r.Context(), callerOf(r).realm
	body, err := readObject(r)
	if err != nil {
		return err
	}
	m, err := s.model(r)
	if err != nil {
		return err
	}
	doc, err := readUser(m, body)
	if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	nu := identity.NewUser{Username: doc.userName, Email: doc.email, FirstName: doc.givenName, LastName: doc.familyName,
		Disabled: doc.active != nil && !*doc.active, EmailVerified: doc.email != "", CreatedAt: now}
	if doc.password != nil {
		// The hash is slow: made before the write transaction.
		hash, err := s.deps.Identity.NewPasswordHash(ctx, realm, &store.User{Username: doc.userName, Email: doc.email}, *doc.password)
		if err != nil {
			return err
		}
		nu.PasswordHash, nu.PasswordChangedAt = hash, now
	}
	su, values, err := scimUser(doc, now)
	if err != nil {
		return err
	}
	var u *store.User
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if u, err = s.deps.Identity.CreateUser(ctx, tx, realm, nu); err != nil {
			return err
		}
		if err := s.setAttributes(ctx, tx, m, u, doc); err != nil {
			return err
		}
		return tx.PutSCIMUser(ctx, realm.ID, u.ID, su, values)
	})
	if err != nil {
		return err
	}
	res, err := s.renderUser(r, m, u, su, nil, doc.attrs)
	if err != nil {
		return err
	}
	return answer(w, r, http.StatusCreated, res)
}

// GetUser answers one user; with If-None-Match naming its version, 304.
func (s *Service) GetUser(w http.ResponseWriter, r *http.Request) error {
	res, err := s.loadUser(r, s.deps.Store, mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	return answer(w, r, http.StatusOK, res)
}

// loadUser reads and renders a user of the caller's realm, on st (the
// store or a transaction). A service account is no SCIM user.
func (s *Service) loadUser(r *http.Request, st *store.Store, id string) (map[string]any, error) {
	ctx, realm := r.Context(), callerOf(r).realm
	u, err := st.GetUser(ctx, realm.ID, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.ServiceAccountClientID != "") {
		return nil, fail(http.StatusNotFound, "", "user %q not found", id)
	}
	if err != nil {
		return nil, err
	}
	users, err := s.renderUsers(r, st, []*store.User{u})
	if err != nil {
		return nil, err
	}
	return users[0], nil
}

// renderUsers renders users with what SCIM keeps of them and their
// groups, read for all of them at once.
func (s *Service) renderUsers(r *http.Request, st *store.Store, users []*store.User) ([]map[string]any, error) {
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	ctx, realm := r.Context(), callerOf(r).realm
	m, err := s.model(r)
	if err != nil {
		return nil, err
	}
	data, err := st.SCIMUsers(ctx, realm.ID, ids)
	if err != nil {
		return nil, err
	}
	groups, err := st.UsersGroups(ctx, ids)
	if err != nil {
		return nil, err
	}
	held := map[string]map[string][]string{}
	if m.hasAttributes() {
		if held, err = st.UsersCustomAttributes(ctx, ids); err != nil {
			return nil, err
		}
	}
	out := make([]map[string]any, len(users))
	for i, u := range users {
		if out[i], err = s.renderUser(r, m, u, data[u.ID], groups[u.ID], held[u.ID]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReplaceUser replaces a user's attributes with the body's (RFC 7644
// §3.5.1). What the body leaves out is cleared, but for the password,
// which stays, and active, which keeps its value.
func (s *Service) ReplaceUser(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	return s.changeUser(w, r, func(map[string]any) (map[string]any, error) { return body, nil })
}

// PatchUser applies a PATCH (RFC 7644 §3.5.2) to a user: every operation
// or none, then the result is written as a replacement is.
func (s *Service) PatchUser(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	ops, err := readPatch(body)
	if err != nil {
		return err
	}
	m, err := s.model(r)
	if err != nil {
		return err
	}
	p := patcher{defs: m.defs, core: schemaUser, extensions: m.extensions}
	return s.changeUser(w, r, func(current map[string]any) (map[string]any, error) {
		return current, p.apply(current, ops)
	})
}

// DeleteUser deletes a user through the identity core (RFC 7644 §3.6).
func (s *Service) DeleteUser(w http.ResponseWriter, r *http.Request) error {
	ctx, realm := r.Context(), callerOf(r).realm
	id := mux.Vars(r)["id"]
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		current, err := s.loadUser(r, tx, id)
		if err != nil {
			return err
		}
		if err := checkIfMatch(r, current); err != nil {
			return err
		}
		u, err := tx.GetUser(ctx, realm.ID, id)
		if err != nil {
			return err
		}
		return s.deps.Identity.DeleteUser(ctx, tx, realm, u)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// errNeedsHash stops a user's write transaction for the slow hash of a
// new password, made outside it; the transaction then runs again.
type errNeedsHash struct{ password string }

func (errNeedsHash) Error() string { return "scim: the new password needs its hash" }

// changeUser applies change to the user as it is (its rendered
// representation) and writes the result through the identity core, in
// one transaction: If-Match is checked against the version read there,
// so no other write comes between. A new password is hashed outside the
// transaction, which then runs again with the hash.
func (s *Service) changeUser(w http.ResponseWriter, r *http.Request, change func(current map[string]any) (map[string]any, error)) error {
	ctx, realm := r.Context(), callerOf(r).realm
	id := mux.Vars(r)["id"]
	m, err := s.model(r)
	if err != nil {
		return err
	}
	hashes := map[string]string{}
	var ended []*store.Session
	var res map[string]any
	write := func(tx *store.Store) error {
		current, err := s.loadUser(r, tx, id)
		if err != nil {
			return err
		}
		if err := checkIfMatch(r, current); err != nil {
			return err
		}
		next, err := change(current)
		if err != nil {
			return err
		}
		doc, err := readUser(m, next)
		if err != nil {
			return err
		}
		u, err := tx.GetUser(ctx, realm.ID, id)
		if err != nil {
			return err
		}
		if u.Email != doc.email {
			u.EmailVerified = doc.email != "" // the provisioning client vouches for it
		}
		u.Username, u.Email, u.FirstName, u.LastName = doc.userName, doc.email, doc.givenName, doc.familyName
		if doc.active != nil {
			u.Enabled = *doc.active
		}
		if ended, err = s.deps.Identity.UpdateUser(ctx, tx, u); err != nil {
			return err
		}
		if doc.password != nil {
			hash, ok := hashes[*doc.password]
			if !ok {
				return errNeedsHash{*doc.password}
			}
			if err := s.deps.Identity.SetPassword(ctx, tx, realm, u.ID, hash, false); err != nil {
				return err
			}
		}
		if err := s.setAttributes(ctx, tx, m, u, doc); err != nil {
			return err
		}
		now := s.deps.Now().UnixMilli()
		su, values, err := scimUser(doc, now)
		if err != nil {
			return err
		}
		if err := tx.PutSCIMUser(ctx, realm.ID, u.ID, su, values); err != nil {
			return err
		}
		res, err = s.loadUser(r, tx, id)
		return err
	}
	for attempt := 0; ; attempt++ {
		err := s.deps.Store.Tx(ctx, write)
		var need errNeedsHash
		if !errors.As(err, &need) || attempt > 0 {
			if err != nil {
				return err
			}
			break
		}
		u, err := s.deps.Store.GetUser(ctx, realm.ID, id)
		if err != nil {
			return err
		}
		hash, err := s.deps.Identity.NewPasswordHash(ctx, realm, u, need.password)
		if err != nil {
			return err
		}
		hashes[need.password] = hash
	}
	if len(ended) > 0 && s.deps.SessionsEnded != nil {
		s.deps.SessionsEnded(context.WithoutCancel(ctx), realm, ended)
	}
	return answer(w, r, http.StatusOK, res)
}

// setAttributes stores the custom attribute values the mappings write,
// through the identity core and the realm's schema as it is in tx; the
// other attributes the user holds are left as they are.
func (s *Service) setAttributes(ctx context.Context, tx *store.Store, m *userModel, u *store.User, doc *userDoc) error {
	if len(doc.attrSchema) == 0 {
		return nil
	}
	return m.attributeError(s.deps.Identity.SetUserAttributes(ctx, tx, u, doc.attrSchema, doc.attrs))
}
