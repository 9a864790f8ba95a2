package ldapfed

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Group mapping: each group under groupsDn is the realm's top-level group
// of the same name (made when first needed), and a linked user's
// memberships of those groups follow the directory, at sync and at
// sign-in. The realm's other groups, and memberships of them, are left
// alone.

// maxNesting bounds how deep nested groups are followed.
const maxNesting = 10

// normDN is a DN in one spelling, for comparing: attribute types and
// values lowercased, no spaces around separators.
func normDN(dn string) string {
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(dn))
	}
	rdns := make([]string, len(parsed.RDNs))
	for i, rdn := range parsed.RDNs {
		parts := make([]string, len(rdn.Attributes))
		for j, a := range rdn.Attributes {
			parts[j] = strings.ToLower(a.Type) + "=" + strings.ToLower(a.Value)
		}
		slices.Sort(parts)
		rdns[i] = strings.Join(parts, "+")
	}
	return strings.Join(rdns, ",")
}

// under says whether dn (normalized) is base (normalized) or below it.
func under(dn, base string) bool { return dn == base || strings.HasSuffix(dn, ","+base) }

// directoryGroups are the groups under groupsDn, as a full sync reads
// them once.
type directoryGroups struct {
	names   map[string]string // group DN (normalized) → name
	members *memberIndex      // member DN (normalized) → DNs of the groups holding it
	byName  map[string]bool
}

// loadGroups reads every group under groupsDn with its members, in pages
// sized by groupPages.
func loadGroups(ctx context.Context, c *ldap.Conn, set *Settings) (*directoryGroups, error) {
	g := &directoryGroups{names: map[string]string{}, byName: map[string]bool{},
		members: newMemberIndex(normDN(set.UsersDN), normDN(set.GroupsDN))}
	req := ldap.NewSearchRequest(set.GroupsDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass="+ldap.EscapeFilter(set.GroupObjectClass)+")", []string{set.GroupNameLDAPAttr, set.MembershipLDAPAttr}, nil)
	pages := groupPages{max: set.Pagination}
	err := eachEntry(ctx, c, req, pages.size, func(e *ldap.Entry) error {
		members := e.GetAttributeValues(set.MembershipLDAPAttr)
		pages.largest = max(pages.largest, len(members))
		name := e.GetAttributeValue(set.GroupNameLDAPAttr)
		if name == "" {
			return nil
		}
		dn := normDN(e.DN)
		g.names[dn] = name
		g.byName[name] = true
		group := g.members.addGroup(dn)
		for _, m := range members {
			g.members.add(normDN(m), group)
		}
		return nil
	})
	g.members.sort()
	return g, err
}

// groupPages sizes the pages of the search for groups by the largest
// group met so far. The library decodes up to a dozen entries ahead of the
// one it hands over, each whole with its members (about a kilobyte each):
// a page of large groups asks for few of them, a page of small ones for
// up to the provider's pagination.
type groupPages struct {
	max     int // the provider's pagination
	largest int // members of the largest group met
}

const (
	firstGroupPage  = 10   // groups the first page asks for, their sizes unknown
	groupPageValues = 2000 // members a page asks for at most, once sizes are known
)

func (p *groupPages) size() int {
	if p.largest == 0 {
		return min(p.max, firstGroupPage)
	}
	return max(1, min(p.max, groupPageValues/p.largest))
}

// of names the groups of a member: direct ones (from, as group DNs, for
// memberOf; else the groups holding dn), and with nested, the groups
// holding those.
func (g *directoryGroups) of(dn string, from []string, nested bool) []string {
	direct := from
	if direct == nil {
		direct = g.members.groupsOf(dn)
	}
	seen := map[string]bool{}
	frontier := direct
	for depth := 0; len(frontier) > 0 && depth < maxNesting; depth++ {
		var next []string
		for _, gdn := range frontier {
			if seen[gdn] || g.names[gdn] == "" {
				continue
			}
			seen[gdn] = true
			next = append(next, g.members.groupsOf(gdn)...)
		}
		if !nested {
			break
		}
		frontier = next
	}
	names := make([]string, 0, len(seen))
	for gdn := range seen {
		names = append(names, g.names[gdn])
	}
	return names
}

// memberOfDNs are an entry's memberOf values under groupsDn, normalized;
// nil unless the memberOf strategy is set.
func (set *Settings) memberOfDNs(e *ldap.Entry) []string {
	if set.GroupsDN == "" || set.GroupsStrategy != GroupsByMemberOf {
		return nil
	}
	base := normDN(set.GroupsDN)
	out := []string{}
	for _, v := range e.GetAttributeValues("memberOf") {
		if dn := normDN(v); under(dn, base) {
			out = append(out, dn)
		}
	}
	return out
}

// signInGroups finds the groups of one user's entry with searches (a
// sign-in reads no other group): the direct ones, then with nestedGroups
// the groups that hold them. c must be bound as the provider's account.
func signInGroups(ctx context.Context, c *ldap.Conn, set *Settings, e *ldap.Entry) ([]string, error) {
	names := map[string]string{} // group DN → name
	var frontier []string
	if from := set.memberOfDNs(e); from != nil {
		for _, dn := range from {
			res, err := c.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 0, false,
				"(objectClass="+ldap.EscapeFilter(set.GroupObjectClass)+")", []string{set.GroupNameLDAPAttr}, nil))
			if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
				continue
			} else if err != nil {
				return nil, err
			}
			for _, g := range res.Entries {
				if name := g.GetAttributeValue(set.GroupNameLDAPAttr); name != "" && names[dn] == "" {
					names[dn] = name
					frontier = append(frontier, g.DN)
				}
			}
		}
	} else {
		frontier = []string{e.DN}
	}
	if set.GroupsStrategy == GroupsByMemberOf && !set.NestedGroups {
		frontier = nil
	}
	for depth := 0; len(frontier) > 0 && depth < maxNesting; depth++ {
		var next []string
		for _, member := range frontier {
			res, err := c.Search(ldap.NewSearchRequest(set.GroupsDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
				"(&(objectClass="+ldap.EscapeFilter(set.GroupObjectClass)+")("+set.MembershipLDAPAttr+"="+ldap.EscapeFilter(member)+"))",
				[]string{set.GroupNameLDAPAttr}, nil))
			if err != nil {
				return nil, err
			}
			for _, g := range res.Entries {
				dn := normDN(g.DN)
				if name := g.GetAttributeValue(set.GroupNameLDAPAttr); name != "" && names[dn] == "" {
					names[dn] = name
					next = append(next, g.DN)
				}
			}
		}
		if !set.NestedGroups {
			break
		}
		frontier = next
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, n)
	}
	return out, nil
}

// existingGroups says which of names are groups under groupsDn: the
// groups a sign-in keeps in step, among those the user is in.
func existingGroups(c *ldap.Conn, set *Settings, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(names) == 0 {
		return out, nil
	}
	var b strings.Builder
	for _, n := range names {
		b.WriteString("(" + set.GroupNameLDAPAttr + "=" + ldap.EscapeFilter(n) + ")")
	}
	res, err := c.Search(ldap.NewSearchRequest(set.GroupsDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(&(objectClass="+ldap.EscapeFilter(set.GroupObjectClass)+")(|"+b.String()+"))", []string{set.GroupNameLDAPAttr}, nil))
	if err != nil {
		return nil, err
	}
	for _, e := range res.Entries {
		out[e.GetAttributeValue(set.GroupNameLDAPAttr)] = true
	}
	return out, nil
}

// realmGroups are a realm's top-level groups by name, made as needed.
type realmGroups struct {
	realm *store.Realm
	ids   map[string]string // name → ID
	now   int64
}

func loadRealmGroups(ctx context.Context, st *store.Store, realm *store.Realm, now int64) (*realmGroups, error) {
	all, err := st.ListGroups(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	rg := &realmGroups{realm: realm, ids: map[string]string{}, now: now}
	for _, g := range all {
		if g.ParentID == "" {
			rg.ids[g.Name] = g.ID
		}
	}
	return rg, nil
}

// id is the ID of the top-level group name, made on tx if it is new; ""
// for a name that cannot be a group's: one the realm's group rules refuse
// or would change (a '/', markup, spaces around it), which is never
// looked up by what the directory calls it.
func (rg *realmGroups) id(ctx context.Context, tx *store.Store, name string) (string, error) {
	if id := rg.ids[name]; id != "" {
		return id, nil
	}
	g := &store.Group{ID: uuid.NewString(), RealmID: rg.realm.ID, Name: name, CreatedAt: rg.now}
	if identity.ValidateGroup(g) != nil || g.Name != name {
		return "", nil
	}
	err := tx.CreateGroup(ctx, g)
	if errors.Is(err, store.ErrConflict) {
		// Made meanwhile by another writer: find it.
		fresh, err := loadRealmGroups(ctx, tx, rg.realm, rg.now)
		if err != nil {
			return "", err
		}
		rg.ids = fresh.ids
		return rg.ids[name], nil
	} else if err != nil {
		return "", err
	}
	rg.ids[name] = g.ID
	return g.ID, nil
}

// setMemberships puts userID in the groups named wanted and takes it out
// of the other groups managed says the directory has; current are the
// IDs of the groups it is in. It says whether anything changed.
func (rg *realmGroups) setMemberships(ctx context.Context, tx *store.Store, userID string, wanted []string, current []string,
	managed func(name string) bool) (bool, error) {
	want := map[string]bool{}
	changed := false
	for _, name := range wanted {
		id, err := rg.id(ctx, tx, name)
		if err != nil {
			return false, err
		}
		if id == "" {
			continue
		}
		want[id] = true
		if !slices.Contains(current, id) {
			if err := tx.AddGroupMember(ctx, id, userID); err != nil {
				return false, err
			}
			changed = true
		}
	}
	for name, id := range rg.ids {
		if want[id] || !slices.Contains(current, id) || !managed(name) {
			continue
		}
		if err := tx.RemoveGroupMember(ctx, id, userID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

// syncSignInGroups keeps the memberships of a user who just signed in in
// step with the directory. c is bound as the provider's account again
// (session.bindUser): a user may not be allowed to read the groups.
func (s *Service) syncSignInGroups(ctx context.Context, c *ldap.Conn, set *Settings, realm *store.Realm, u *store.User,
	e *ldap.Entry) error {
	if set.GroupsDN == "" {
		return nil
	}
	wanted, err := signInGroups(ctx, c, set, e)
	if err != nil {
		return classify(err, set, "search the user's groups")
	}
	current, err := s.deps.Store.ListUserGroups(ctx, u.ID)
	if err != nil {
		return err
	}
	var ids, names []string
	for _, g := range current {
		ids = append(ids, g.ID)
		if g.ParentID == "" {
			names = append(names, g.Name)
		}
	}
	managed, err := existingGroups(c, set, names)
	if err != nil {
		return classify(err, set, "search the groups")
	}
	rg, err := loadRealmGroups(ctx, s.deps.Store, realm, s.deps.Now().UnixMilli())
	if err != nil {
		return err
	}
	_, err = rg.setMemberships(ctx, s.deps.Store, u.ID, wanted, ids, func(name string) bool { return managed[name] })
	return err
}
