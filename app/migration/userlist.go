package migration

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// maxImportUsers bounds the users of one request.
const maxImportUsers = 200_000

// userList imports a list of users into realm (users/import). Each user:
//
//	{"id"?, "username", "email"?, "firstName"?, "lastName"?, "enabled"?,
//	 "emailVerified"?, "passwordHash"?, "requiredActions"?, "attributes"?,
//	 "realmRoles"?, "clientRoles"?, "groups"?, "createdTimestamp"?}
//
// A passwordHash of a format the server checks (argon2id, argon2i,
// bcrypt, PBKDF2) is kept; any other leaves the user without a password
// and owing a reset, and is reported.
func (s *Service) userList(ctx context.Context, realm *store.Realm, list val, dryRun bool) (*Report, error) {
	rep := newReport()
	rep.Realm, rep.DryRun = realm.Name, dryRun
	users, err := readUserList(list, s.now().UnixMilli(), rep)
	if err != nil {
		return nil, err
	}
	err = s.intoRealm(ctx, dryRun, func(tx *store.Store) error { return s.importUsers(ctx, tx, realm, users, rep) })
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// ReadUserList reads a users/import list without writing anything: the
// parser alone, for its fuzz target and the command line's checks.
func ReadUserList(data []byte) (int, error) {
	v, err := parseJSON(data, "users")
	if err != nil {
		return 0, err
	}
	rd := &reader{}
	users, err := readUserList(rd.root(v, "users"), 0, newReport())
	return len(users), err
}

func readUserList(list val, now int64, rep *Report) ([]*newUser, error) {
	items := list.items()
	if err := list.r.err; err != nil {
		return nil, err
	}
	if len(items) > maxImportUsers {
		return nil, apperr.Field(list.path, "has %d users; at most %d go in one request", len(items), maxImportUsers)
	}
	seen := map[string]string{}
	var out []*newUser
	for _, it := range items {
		u := readListUser(it, now, rep)
		if err := it.r.err; err != nil {
			return nil, err
		}
		if err := checkUser(u, seen); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func readListUser(it val, now int64, rep *Report) *newUser {
	it.object()
	u := &newUser{path: it.path, attrPaths: map[string]string{}}
	su := &u.user
	su.ID = it.get("id").str()
	su.Username = it.get("username").str()
	su.Email = it.get("email").str()
	su.FirstName = it.get("firstName").str()
	su.LastName = it.get("lastName").str()
	su.Enabled = it.get("enabled").boolean(true)
	su.EmailVerified = it.get("emailVerified").boolean(false)
	su.CreatedAt = it.get("createdTimestamp").integer(now)
	if it.has("passwordHash") {
		takeHash(u, it.get("passwordHash"), rep)
		su.PasswordChangedAt = now
	}
	for i, a := range it.get("requiredActions").strs() {
		requiredAction(u, a, fmt.Sprintf("%s.requiredActions[%d]", it.path, i), rep)
	}
	readAttributes(u, it.get("attributes"), rep)
	u.realmRoles = it.get("realmRoles").strs()
	cr := it.get("clientRoles")
	u.clientRoles = map[string][]string{}
	for _, c := range cr.keys() {
		u.clientRoles[c] = cr.get(c).strs()
	}
	u.groups = it.get("groups").strs()
	return u
}

// checkUser checks what the identity core cannot: a required username, an
// id that is a UUID, and a username, email or id given twice in the
// request. The rest of the user's rules are the core's, at the write.
func checkUser(u *newUser, seen map[string]string) error {
	su := &u.user
	if strings.TrimSpace(su.Username) == "" {
		return apperr.Field(u.path+".username", "is required")
	}
	if su.ID == "" {
		su.ID = uuid.NewString()
	} else if uuid.Validate(su.ID) != nil {
		return apperr.Field(u.path+".id", "must be a UUID")
	}
	su.ID = strings.ToLower(su.ID)
	if err := identity.ValidateUser(su); err != nil {
		return apperr.Under(err, u.path)
	}
	for _, k := range []struct{ key, field string }{{"id:" + su.ID, "id"}, {"username:" + su.Username, "username"},
		{"email:" + su.Email, "email"}} {
		if k.key == "email:" {
			continue
		}
		if first, ok := seen[k.key]; ok {
			return apperr.Field(u.path+"."+k.field, "is also %s's", first)
		}
		seen[k.key] = u.path
	}
	return nil
}

// takeHash keeps a password hash the server checks; any other format
// leaves the user owing a password reset.
func takeHash(u *newUser, v val, rep *Report) {
	h := v.str()
	if v.r.err != nil || h == "" {
		return
	}
	if _, err := identity.HashFormat(h); err != nil {
		u.user.RequirePasswordReset = true
		rep.skip(v.path, KindCredential, u.user.Username, "a hash of a format this server does not check (%s): "+
			"the user has no password and sets one through a password reset", describeHash(h))
		return
	}
	u.user.PasswordHash = h
}

// describeHash names a hash's format by its prefix, without its secret.
func describeHash(h string) string {
	switch {
	case strings.HasPrefix(h, "$"):
		if name, _, ok := strings.Cut(h[1:], "$"); ok && len(name) <= 20 {
			return "$" + name + "$"
		}
	case strings.HasPrefix(h, "{"):
		if name, _, ok := strings.Cut(h, "}"); ok && len(name) <= 20 {
			return name + "}"
		}
	}
	return "unrecognized"
}

// requiredAction maps one of Keycloak's required actions (users/import
// takes the same names): UPDATE_PASSWORD is the password change owed at
// sign-in; VERIFY_EMAIL leaves the email unverified; others have no
// counterpart and are reported.
func requiredAction(u *newUser, action, path string, rep *Report) {
	switch action {
	case "UPDATE_PASSWORD":
		u.user.RequirePasswordReset = true
	case "VERIFY_EMAIL":
		u.user.EmailVerified = false
	case "CONFIGURE_TOTP":
		rep.skip(path, KindRequiredAction, action, "no per-user required action to set up an authenticator: "+
			"set the realm's mfaRequired to ask it of everyone without a second factor")
	default:
		rep.skip(path, KindRequiredAction, action, "no required action of that name here")
	}
}

// readAttributes reads a user's attributes: names the schema could not
// hold are reported.
func readAttributes(u *newUser, v val, rep *Report) {
	m := v.multiMap()
	for _, name := range sortedKeys(m) {
		path := v.path + "." + name
		if !attributeName(name) {
			rep.skip(path, KindAttribute, name, "not a name a custom attribute may have: letters, digits, '_', '.' and '-', "+
				"starting with a letter, at most 64")
			continue
		}
		if len(m[name]) == 0 {
			continue
		}
		if u.attributes == nil {
			u.attributes = map[string][]string{}
		}
		u.attributes[name] = m[name]
		u.attrPaths[name] = path
	}
}
