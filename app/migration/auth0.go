package migration

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Auth0's exports: the users, one JSON object a line (the bulk user export,
// or the bulk import's schema), and, exported separately on request, the
// password hashes of the database connection's users (bcrypt), one a
// line, matched to their user by the user's id (auth0|<_id.$oid>) or email.

// auth0Attributes are the user fields kept as custom attributes, under the
// names the default scopes' mappers read.
var auth0Attributes = []struct{ field, attribute string }{
	{"nickname", "nickname"}, {"locale", "locale"}, {"picture", "picture"},
	{"phone_number", "phoneNumber"}, {"phone_verified", "phoneNumberVerified"}, {"user_id", "auth0UserId"},
}

// auth0Known are the user fields read, or deliberately left out.
var auth0Known = map[string]bool{
	"user_id": true, "email": true, "username": true, "given_name": true, "family_name": true, "name": true,
	"nickname": true, "locale": true, "picture": true, "phone_number": true, "phone_verified": true,
	"email_verified": true, "blocked": true, "created_at": true, "updated_at": true, "last_login": true,
	"logins_count": true, "last_ip": true, "password_hash": true, "custom_password_hash": true,
	"identities": true, "user_metadata": true, "app_metadata": true,
}

// ndjson reads a list given as a JSON list of objects, or as a string of
// NDJSON (one object a line, as Auth0 writes its files); the elements'
// paths are path[i] either way, i counting the non-blank lines.
func ndjson(v val) []val {
	s, ok := v.v.(string)
	if !ok {
		return v.items()
	}
	var out []val
	for _, line := range bytes.Split([]byte(s), []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		path := fmt.Sprintf("%s[%d]", v.path, len(out))
		x, err := parseJSON(line, path)
		if err != nil {
			v.r.fail(path, "%s", strings.TrimPrefix(err.Error(), path+": "))
			return nil
		}
		out = append(out, v.child(path, x))
	}
	return out
}

// auth0 imports Auth0's users and password hashes into realm.
func (s *Service) auth0(ctx context.Context, realm *store.Realm, users, passwords val, dryRun bool) (*Report, error) {
	rep := newReport()
	rep.Realm, rep.DryRun = realm.Name, dryRun
	list, err := readAuth0(users, passwords, s.now().UnixMilli(), rep)
	if err != nil {
		return nil, err
	}
	err = s.intoRealm(ctx, dryRun, func(tx *store.Store) error { return s.importUsers(ctx, tx, realm, list, rep) })
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// ReadAuth0 reads Auth0's users and password hashes (NDJSON) without
// writing anything: the parser alone, for its fuzz target.
func ReadAuth0(users, passwords []byte) (int, error) {
	rd := &reader{}
	u := rd.root(string(users), "users")
	p := rd.root(string(passwords), "passwords")
	list, err := readAuth0(u, p, 0, newReport())
	return len(list), err
}

type auth0Hash struct {
	path, hash string
	used       bool
}

func readAuth0(users, passwords val, now int64, rep *Report) ([]*newUser, error) {
	if !users.set {
		return nil, apperr.Field("users", "is required: Auth0's users export")
	}
	byID, byEmail := map[string]*auth0Hash{}, map[string]*auth0Hash{}
	for _, p := range ndjson(passwords) {
		h := &auth0Hash{path: p.path + ".passwordHash", hash: p.get("passwordHash").str()}
		if h.hash == "" {
			h.path = p.path + ".password_hash"
			h.hash = p.get("password_hash").str()
		}
		id := p.getFold("_id")
		if oid, ok := id.v.(map[string]any); ok {
			id = id.child(id.path+".$oid", oid["$oid"])
		}
		if key := id.str(); key != "" {
			byID[key] = h
		}
		if email := strings.ToLower(p.get("email").str()); email != "" {
			byEmail[email] = h
		}
		if p.r.err != nil {
			return nil, p.r.err
		}
		if h.hash == "" {
			rep.skip(p.path, KindCredential, "", "no passwordHash")
		}
	}
	items := ndjson(users)
	if err := users.r.err; err != nil {
		return nil, err
	}
	if len(items) > maxImportUsers {
		return nil, apperr.Field(users.path, "has %d users; at most %d go in one request", len(items), maxImportUsers)
	}
	seen := map[string]string{}
	var out []*newUser
	for _, it := range items {
		u := readAuth0User(it, now, rep)
		if it.r.err != nil {
			return nil, it.r.err
		}
		if u.user.Email == "" {
			return nil, apperr.Field(it.path+".email", "is required")
		}
		if u.user.PasswordHash == "" && !u.user.RequirePasswordReset {
			h := byID[strings.TrimPrefix(it.get("user_id").str(), "auth0|")]
			if h == nil {
				h = byEmail[strings.ToLower(u.user.Email)]
			}
			if h != nil && h.hash != "" {
				h.used = true
				takeHash(u, it.child(h.path, h.hash), rep)
				u.user.PasswordChangedAt = now
			} else {
				rep.skip(it.path, KindCredential, u.user.Username, "no password hash in the passwords export: "+
					"the user sets a password through a password reset, or signs in another way")
			}
		}
		if err := checkUser(u, seen); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	for _, h := range byID {
		if !h.used && h.hash != "" {
			rep.skip(h.path, KindCredential, "", "no user of the users export has this hash's _id or email")
			h.used = true
		}
	}
	for _, h := range byEmail {
		if !h.used && h.hash != "" {
			rep.skip(h.path, KindCredential, "", "no user of the users export has this hash's _id or email")
			h.used = true
		}
	}
	return out, nil
}

func readAuth0User(it val, now int64, rep *Report) *newUser {
	u := &newUser{path: it.path, attrPaths: map[string]string{}}
	su := &u.user
	su.Email = it.get("email").str()
	su.Username = it.get("username").str()
	if su.Username == "" {
		su.Username = su.Email
	}
	su.FirstName = it.get("given_name").str()
	su.LastName = it.get("family_name").str()
	if name := it.get("name").str(); su.FirstName == "" && su.LastName == "" && name != "" && name != su.Email {
		su.FirstName = name
	}
	su.EmailVerified = it.get("email_verified").boolean(false)
	su.Enabled = !it.get("blocked").boolean(false)
	su.CreatedAt = now
	if c := it.get("created_at"); c.set {
		if t, err := time.Parse(time.RFC3339, c.str()); err == nil {
			su.CreatedAt = t.UnixMilli()
		}
	}
	for _, a := range auth0Attributes {
		v := it.get(a.field)
		if !v.set {
			continue
		}
		var value string
		switch x := v.v.(type) {
		case bool:
			value = strconv.FormatBool(x)
		default:
			value = v.str()
		}
		if value == "" {
			continue
		}
		if u.attributes == nil {
			u.attributes = map[string][]string{}
		}
		u.attributes[a.attribute] = []string{value}
		u.attrPaths[a.attribute] = v.path
	}
	if h := it.get("password_hash"); h.set {
		takeHash(u, h, rep)
		su.PasswordChangedAt = now
	}
	if c := it.get("custom_password_hash"); c.set {
		customHash(u, c, rep)
		su.PasswordChangedAt = now
	}
	for _, k := range []string{"user_metadata", "app_metadata"} {
		if v := it.get(k); len(v.keys()) > 0 {
			rep.skip(v.path, KindAttribute, k, "Auth0's metadata objects have no counterpart: custom attributes hold "+
				"text values; add the ones needed to the realm's attributes and set them through the admin API")
		}
	}
	for i, id := range it.get("identities").items() {
		if conn := id.get("provider").str(); conn != "" && conn != "auth0" {
			rep.skip(fmt.Sprintf("%s.identities[%d]", it.path, i), KindFederatedLink, conn,
				"a link to a social or enterprise connection: create the identity provider, and the user links it at their next sign-in through it")
		}
	}
	for _, k := range it.keys() {
		if !auth0Known[k] {
			rep.skip(it.path+"."+k, KindAttribute, k, "not a field of Auth0's user export this import reads")
		}
	}
	return u
}

// customHash reads the bulk import schema's custom_password_hash: argon2,
// bcrypt and pbkdf2 (PHC strings) are kept; other algorithms leave the
// user owing a password reset.
func customHash(u *newUser, c val, rep *Report) {
	alg := c.get("algorithm").str()
	value := c.get("hash").get("value")
	switch alg {
	case "argon2", "bcrypt", "pbkdf2":
		h := value.str()
		if _, err := identity.HashFormat(h); err == nil {
			u.user.PasswordHash = h
			return
		}
		u.user.RequirePasswordReset = true
		rep.skip(value.path, KindCredential, u.user.Username, "a %s hash this server cannot check (its parameters are "+
			"out of bounds or malformed): the user sets a password through a password reset", alg)
	default:
		u.user.RequirePasswordReset = true
		rep.skip(c.path, KindCredential, u.user.Username, "algorithm %q is not checked here: the user has no password "+
			"and sets one through a password reset", alg)
	}
}
