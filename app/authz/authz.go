// Package authz names what an admin credential may do. Every admin route
// is registered with the one Permission it needs (app/routes.go); a
// credential holds a Set. The bootstrap admin API key and admin users hold
// every permission; an admin user may sign in for fewer (a token for a
// script that only reads), and named admin API keys, service accounts and
// organization admins are granted subsets.
package authz

import (
	"fmt"
	"slices"
	"strings"
)

// Permission is one thing an admin credential may do: "area:read" to
// look, "area:write" to change. Names are stable: they are stored in
// admin tokens and documented in docs/architecture.md.
type Permission string

const (
	SystemRead   Permission = "system:read"   // list realms and themes, read metrics, list the plugins
	SystemManage Permission = "system:manage" // create, import and delete realms; enable, disable and remove plugins
	RealmRead    Permission = "realm:read"    // a realm's settings, keys, stats, registration setup, export
	RealmWrite   Permission = "realm:write"   // change them, rotate keys, send test mail
	UsersRead    Permission = "users:read"    // users and what hangs off them: memberships, role mappings, consents, second factors, lockouts, pending registrations
	UsersWrite   Permission = "users:write"   // create, change and delete them, reset passwords, unlock, approve registrations
	ClientsRead  Permission = "clients:read"  // clients, their scopes and service accounts
	ClientsWrite Permission = "clients:write" // change them and their secrets
	RolesRead    Permission = "roles:read"    // realm and client roles, composites
	RolesWrite   Permission = "roles:write"
	GroupsRead   Permission = "groups:read" // the group tree, members, group role mappings
	GroupsWrite  Permission = "groups:write"
	ScopesRead   Permission = "scopes:read" // client scopes and protocol mappers
	ScopesWrite  Permission = "scopes:write"
	SessionsRead Permission = "sessions:read" // SSO, client and offline sessions
	SessionsEnd  Permission = "sessions:write"
	EventsRead   Permission = "events:read" // login and admin events, exports, event settings
	EventsWrite  Permission = "events:write"
	SCIMRead     Permission = "scim:read" // SCIM tokens, attribute mappings and provisioning status
	SCIMWrite    Permission = "scim:write"

	IdentityProvidersRead  Permission = "identity-providers:read" // identity providers, users' federated identities
	IdentityProvidersWrite Permission = "identity-providers:write"
	NHIRead                Permission = "nhi:read" // non-human identities and service accounts, their credentials (never a secret), stats
	NHIWrite               Permission = "nhi:write"
	OrgsRead               Permission = "organizations:read" // organizations, their members, invitations and domains
	OrgsWrite              Permission = "organizations:write"
	RiskRead               Permission = "risk:read" // risk assessments, their dashboard, risk policies and settings
	RiskWrite              Permission = "risk:write"
	PoliciesRead           Permission = "policies:read" // authorization policies, their settings, evaluate and test
	PoliciesWrite          Permission = "policies:write"
	// UsersImpersonate signs in as a user (app/impersonation). No other
	// permission implies it: it is held by a credential granted it by name,
	// or every permission.
	UsersImpersonate Permission = "users:impersonate"

	// Authenticated is what a route asks that needs a valid admin
	// credential and nothing more: who am I, sign out.
	Authenticated Permission = "authenticated"
)

// All is every permission a credential can hold.
var All = []Permission{SystemRead, SystemManage, RealmRead, RealmWrite, UsersRead, UsersWrite, ClientsRead, ClientsWrite,
	RolesRead, RolesWrite, GroupsRead, GroupsWrite, ScopesRead, ScopesWrite, SessionsRead, SessionsEnd, EventsRead, EventsWrite,
	IdentityProvidersRead, IdentityProvidersWrite, SCIMRead, SCIMWrite, NHIRead, NHIWrite,
	OrgsRead, OrgsWrite, RiskRead, RiskWrite, PoliciesRead, PoliciesWrite, UsersImpersonate,
}

// Set is the permissions a credential holds.
type Set struct{ perms []Permission }

// Everything is the set of every permission.
func Everything() Set { return Set{perms: All} }

// Parse makes a set of permission names, refusing unknown ones.
func Parse(names []string) (Set, error) {
	var s Set
	for _, n := range names {
		p := Permission(n)
		if !slices.Contains(All, p) {
			return Set{}, fmt.Errorf("unknown permission %q (known: %s)", n, strings.Join(Names(Everything()), ", "))
		}
		if !slices.Contains(s.perms, p) {
			s.perms = append(s.perms, p)
		}
	}
	return s, nil
}

// Has says whether the set allows p; every set allows Authenticated.
func (s Set) Has(p Permission) bool { return p == Authenticated || slices.Contains(s.perms, p) }

// All says whether the set holds every permission.
func (s Set) All() bool {
	for _, p := range All {
		if !s.Has(p) {
			return false
		}
	}
	return true
}

// Names lists the set's permissions in the order of All.
func Names(s Set) []string {
	var out []string
	for _, p := range All {
		if s.Has(p) {
			out = append(out, string(p))
		}
	}
	return out
}

// Without is s less the given permissions.
func (s Set) Without(drop ...Permission) Set {
	var out Set
	for _, p := range s.perms {
		if !slices.Contains(drop, p) {
			out.perms = append(out.perms, p)
		}
	}
	return out
}

// AllName, alone in a stored list of permission names, is every
// permission: those there are and those a later version adds.
const AllName = "all"

// ParseStored is the set a stored list of names holds: ParseStored of
// [AllName] is Everything.
func ParseStored(names []string) (Set, error) {
	if slices.Equal(names, []string{AllName}) {
		return Everything(), nil
	}
	return Parse(names)
}

// Intersect is the permissions both s and o hold.
func (s Set) Intersect(o Set) Set {
	var out Set
	for _, p := range s.perms {
		if o.Has(p) {
			out.perms = append(out.perms, p)
		}
	}
	return out
}

// ParseGrant checks the list of names a credential is to hold, as stored:
// at least one, known ones, or AllName alone. It answers them in the
// order of All, or [AllName].
func ParseGrant(names []string) ([]string, error) {
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("must name at least one permission, or %q for every one", AllName)
	case slices.Contains(names, AllName) && len(names) != 1:
		return nil, fmt.Errorf("%q stands alone: it is every permission", AllName)
	case names[0] == AllName:
		return []string{AllName}, nil
	}
	set, err := Parse(names)
	if err != nil {
		return nil, err
	}
	return Names(set), nil
}

// ErrSystemInRealm: a credential confined to one realm acts on that
// realm's routes alone, where a system permission would reach only the
// deletion of its own realm, so it holds none.
var ErrSystemInRealm = fmt.Errorf("a credential confined to a realm holds no system permission (%s, %s), nor %q",
	SystemRead, SystemManage, AllName)

// CheckConfined refuses a stored grant that a credential confined to a
// realm may not hold.
func CheckConfined(names []string) error {
	for _, p := range names {
		if p == AllName || p == string(SystemRead) || p == string(SystemManage) {
			return ErrSystemInRealm
		}
	}
	return nil
}
