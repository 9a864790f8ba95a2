package migration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// newUser is one user of an import, as every importer reads it: the
// user's fields, the password hash kept (or none, with a reset owed), and
// what the realm format has no place for (attributes, a TOTP secret).
type newUser struct {
	path string // the user's JSON path in the request
	user store.User
	// attributes are custom attribute values; each name not yet in the
	// realm's schema is declared (a string attribute, editable by
	// administrators), as Keycloak keeps unmanaged attributes.
	attributes map[string][]string
	attrPaths  map[string]string
	totp       *totpSecret
	// Role mappings and memberships by name, for imports into a realm
	// that exists (users/import): realm roles, client roles by clientId,
	// groups by path (/parent/child).
	realmRoles  []string
	clientRoles map[string][]string
	groups      []string
}

// totpSecret is a TOTP credential an import keeps: the HMAC key, as the
// authenticator app holds it.
type totpSecret struct {
	path   string
	label  string
	secret []byte
}

// attributeName is what a custom attribute's name may be
// (identity.CheckAttribute's rule), checked here so that an attribute the
// schema could not hold is skipped, not refused.
func attributeName(name string) bool {
	return identity.CheckAttribute(&store.CustomAttribute{Name: name, Type: identity.AttrString}) == nil
}

// writeExtras writes, through tx, what the realm format does not carry of
// users already written: their custom attribute values (declaring the
// names the schema lacks) and their TOTP credentials.
func (s *Service) writeExtras(ctx context.Context, tx *store.Store, realm *store.Realm, users []*newUser, rep *Report) error {
	schema, err := tx.ListCustomAttributes(ctx, realm.ID)
	if err != nil {
		return err
	}
	declared := map[string]*store.CustomAttribute{}
	for _, a := range schema {
		declared[a.Name] = a
	}
	now := s.now().UnixMilli()
	// Declare every name first: a user's values are checked against the
	// whole schema.
	for _, u := range users {
		for _, name := range sortedKeys(u.attributes) {
			a := declared[name]
			multi := len(u.attributes[name]) > 1
			switch {
			case a == nil:
				a = &store.CustomAttribute{ID: uuid.NewString(), RealmID: realm.ID, Name: name, DisplayName: name,
					Type: identity.AttrString, Multivalued: multi, EditableBy: identity.EditableByAdmin, CreatedAt: now}
				if err := tx.CreateCustomAttribute(ctx, a); err != nil {
					return err
				}
				declared[name] = a
				schema = append(schema, a)
				rep.imported("attributes."+name, KindAttribute, name)
			case multi && !a.Multivalued && a.Type == identity.AttrString && a.CreatedAt == now:
				// Declared by this import: it takes several values after all.
				a.Multivalued = true
				if err := tx.UpdateCustomAttribute(ctx, a); err != nil {
					return err
				}
			}
		}
	}
	for _, u := range users {
		if len(u.attributes) > 0 {
			values, err := tx.UserCustomAttributes(ctx, u.user.ID)
			if err != nil {
				return err
			}
			for k, v := range u.attributes {
				values[k] = slices.Clone(v)
			}
			if err := s.deps.Identity.SetUserAttributes(ctx, tx, &u.user, schema, values); err != nil {
				return attributeError(err, u)
			}
		}
		if u.totp != nil {
			c := &store.Credential{ID: uuid.NewString(), RealmID: realm.ID, UserID: u.user.ID, Type: store.CredentialTOTP,
				Label: u.totp.label, Secret: u.totp.secret, CreatedAt: now}
			if err := tx.BeginCredential(ctx, c); err != nil {
				return err
			}
			if err := tx.ConfirmCredential(ctx, realm.ID, c.ID, 0, nil, now); err != nil {
				return err
			}
			rep.imported(u.totp.path, KindCredential, "otp")
		}
	}
	return nil
}

// attributeError names the attribute value refused under the user's path.
func attributeError(err error, u *newUser) error {
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Field == "" {
		return err
	}
	name := strings.TrimPrefix(ae.Field, "attributes.")
	field := u.attrPaths[name]
	if field == "" {
		field = u.path + ".attributes." + name
	}
	out := *ae
	out.Field, out.Fields = field, nil
	out.Message = field + ": " + strings.TrimPrefix(ae.Message, ae.Field+": ")
	if i := strings.Index(out.Message, "; "); i >= 0 {
		out.Message = out.Message[:i]
	}
	return &out
}

// importUsers writes users into realm, which exists, through tx: each as
// the identity core creates users (its rules; a username or email the
// realm has is skipped and reported, not refused), with its role mappings
// and memberships by name (unknown ones skipped and reported), then
// their attributes and TOTP credentials. A user the rules refuse fails
// the import, with the user's path.
func (s *Service) importUsers(ctx context.Context, tx *store.Store, realm *store.Realm, users []*newUser, rep *Report) error {
	roles, err := s.roleIndex(ctx, tx, realm)
	if err != nil {
		return err
	}
	groups, err := groupIndex(ctx, tx, realm)
	if err != nil {
		return err
	}
	var written []*newUser
	for i, u := range users {
		if taken, why, err := userTaken(ctx, tx, realm, &u.user); err != nil {
			return err
		} else if taken {
			rep.skip(u.path, KindUser, u.user.Username, "%s", why)
			continue
		}
		created, err := s.deps.Identity.CreateUser(ctx, tx, realm, identity.NewUserFrom(&u.user))
		if err != nil {
			var ae *apperr.Error
			if errors.As(err, &ae) {
				return apperr.Under(ae, u.path)
			}
			if errors.Is(err, store.ErrConflict) {
				return apperr.Conflict(u.path+".id", "%s.id: a user with id %s exists already", u.path, u.user.ID)
			}
			return err
		}
		u.user = *created
		rep.imported(u.path, KindUser, created.Username)
		var roleIDs []string
		for j, name := range u.realmRoles {
			path := fmt.Sprintf("%s.realmRoles[%d]", u.path, j)
			if id, ok := roles[roleKey{"", name}]; ok {
				roleIDs = append(roleIDs, id)
				rep.imported(path, KindRoleMapping, name)
			} else {
				rep.skip(path, KindRoleMapping, name, "the realm has no role %s", name)
			}
		}
		for _, clientID := range sortedKeys(u.clientRoles) {
			for j, name := range u.clientRoles[clientID] {
				path := fmt.Sprintf("%s.clientRoles.%s[%d]", u.path, clientID, j)
				if id, ok := roles[roleKey{clientID, name}]; ok {
					roleIDs = append(roleIDs, id)
					rep.imported(path, KindRoleMapping, clientID+"/"+name)
				} else {
					rep.skip(path, KindRoleMapping, clientID+"/"+name, "the realm has no client %s with a role %s", clientID, name)
				}
			}
		}
		if len(roleIDs) > 0 {
			if err := tx.AddRoleMappings(ctx, store.UserRoles(created.ID), dedupe(roleIDs)); err != nil {
				return err
			}
		}
		for j, g := range u.groups {
			path := fmt.Sprintf("%s.groups[%d]", u.path, j)
			id := groups[groupPath(g)]
			if id == "" {
				rep.skip(path, KindMembership, g, "the realm has no group %s", g)
				continue
			}
			if err := tx.AddGroupMember(ctx, id, created.ID); err != nil && !errors.Is(err, store.ErrConflict) {
				return err
			}
			rep.imported(path, KindMembership, g)
		}
		written = append(written, u)
		s.progress(ctx, "users", i+1, len(users))
	}
	return s.writeExtras(ctx, tx, realm, written, rep)
}

// userTaken says whether the realm has a user of u's username or email.
func userTaken(ctx context.Context, tx *store.Store, realm *store.Realm, u *store.User) (bool, string, error) {
	if _, err := tx.GetUserByUsername(ctx, realm.ID, strings.ToLower(u.Username)); err == nil {
		return true, fmt.Sprintf("realm %s has a user named %s already", realm.Name, u.Username), nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, "", err
	}
	if u.Email == "" {
		return false, "", nil
	}
	if _, err := tx.GetUserByEmail(ctx, realm.ID, strings.ToLower(u.Email)); err == nil {
		return true, fmt.Sprintf("realm %s has a user with email %s already", realm.Name, u.Email), nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, "", err
	}
	return false, "", nil
}

type roleKey struct{ clientID, name string }

// roleIndex is every role of the realm by client (public clientId, "" for
// the realm's) and name.
func (s *Service) roleIndex(ctx context.Context, tx *store.Store, realm *store.Realm) (map[roleKey]string, error) {
	all, err := tx.ListAllRoles(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	out := map[roleKey]string{}
	for _, r := range all {
		out[roleKey{r.ClientClientID, r.Name}] = r.ID
	}
	return out, nil
}

// groupIndex is every group of the realm by path ("/parent/child"); a
// top-level group by its name too.
func groupIndex(ctx context.Context, tx *store.Store, realm *store.Realm) (map[string]string, error) {
	all, err := tx.ListGroups(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	byID := map[string]*store.Group{}
	for _, g := range all {
		byID[g.ID] = g
	}
	out := map[string]string{}
	for _, g := range all {
		path, seen := "", map[string]bool{}
		for at := g; at != nil && !seen[at.ID]; at = byID[at.ParentID] {
			seen[at.ID] = true
			path = "/" + at.Name + path
		}
		out[path] = g.ID
	}
	return out, nil
}

// groupPath is a group named by path or, without a leading slash, a
// top-level group's name.
func groupPath(g string) string {
	if strings.HasPrefix(g, "/") {
		return g
	}
	return "/" + g
}

func dedupe(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
