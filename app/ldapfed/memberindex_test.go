package ldapfed

import (
	"slices"
	"testing"
)

func TestMemberIndex(t *testing.T) {
	m := newMemberIndex("ou=people", "ou=groups")
	staff, admins := m.addGroup("cn=staff,ou=groups"), m.addGroup("cn=admins,ou=groups")
	for _, dn := range []string{"uid=cy,ou=people", "uid=ann,ou=people", "uid=bob,ou=people", "uid=ann,ou=people", "uid=ann",
		"ou=people"} {
		m.add(dn, staff)
	}
	m.add("uid=ann,ou=people", admins)
	m.add("cn=staff,ou=groups", admins)
	m.sort()
	for member, want := range map[string][]string{
		"uid=ann,ou=people":  {"cn=admins,ou=groups", "cn=staff,ou=groups", "cn=staff,ou=groups"},
		"uid=bob,ou=people":  {"cn=staff,ou=groups"},
		"cn=staff,ou=groups": {"cn=admins,ou=groups"},
		"uid=ann":            {"cn=staff,ou=groups"}, // not under a base: another DN
		"ou=people":          {"cn=staff,ou=groups"},
		"uid=an,ou=people":   nil,
		"uid=anna,ou=people": nil,
		"uid=bob":            nil,
		"":                   nil,
	} {
		got := m.groupsOf(member)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("groups of %q: %q, want %q", member, got, want)
		}
	}
}
