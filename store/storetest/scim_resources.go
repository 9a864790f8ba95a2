package storetest

import (
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// scimResourceSuite is the conformance tests of what SCIM keeps of users
// and groups, and of its searches.
func scimResourceSuite() []subTest {
	return []subTest{
		{"SCIMUserSearch", testSCIMUserSearch},
		{"SCIMGroupSearch", testSCIMGroupSearch},
		{"SCIMAddressSearch", testSCIMAddressSearch},
		{"SCIMSubstringSearch", testSCIMSubstringSearch},
	}
}

// testSCIMSubstringSearch: co, sw and ew find exactly the users whose text
// holds the compared one, however the backend narrows them first (SQLite's
// trigram tables, PostgreSQL's trigram indexes): texts shorter than a
// trigram, letters FTS5 folds otherwise than FoldCase, case-exact values,
// quotes and LIKE's wildcards, and after every kind of write.
func testSCIMSubstringSearch(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	other := mustCreateRealm(t, s, testRealm("r2", "beta", 1))
	alice := testUser("u1", realm.ID, "alice", "alice@example.com")
	alice.LastName = "Müller-Straße"
	bob := testUser("u2", realm.ID, "bob", "")
	bob.LastName = "Dİnç" // dotted capital I, which folds to itself
	carol := testUser("u3", realm.ID, "carol", "carol@example.org")
	carol.LastName = "Ωmega¿s" // ¿ ends in the byte 0xbf, after which no byte of UTF-8 comes
	twin := testUser("u4", other.ID, "alice", "alice@example.com")
	twin.LastName = "Müller-Straße"
	for _, u := range []*store.User{alice, bob, carol, twin} {
		mustCreateUser(t, s, u)
	}
	put := func(realmID, id string, values ...store.SCIMValue) {
		t.Helper()
		if err := s.PutSCIMUser(testCtx, realmID, id, store.SCIMUser{ModifiedAt: 2, Data: `{}`}, values); err != nil {
			t.Fatal(err)
		}
	}
	value := func(attr, v string) store.SCIMValue {
		fold := store.FoldCase(v)
		if attr == "emails" {
			fold = strings.ToLower(v)
		}
		return store.SCIMValue{Attr: attr, Value: v, Fold: fold}
	}
	aliceValues := []store.SCIMValue{value("emails", "Alice.Work@Example.COM"), value("displayname", "ÄRGER ΟΔΌΣ"),
		value("externalid", `ID-Ab"c%_\x`)}
	put(realm.ID, "u1", aliceValues...)
	put(realm.ID, "u2", value("displayname", "Bob ς"), value("externalid", "id-ab"))
	put(other.ID, "u4", aliceValues...)

	has := func(attr string, sub *store.Match) *store.Match {
		return &store.Match{Op: store.MatchHas, Attr: attr, Subs: []*store.Match{sub}}
	}
	cmp := func(op, field string, v any) *store.Match { return &store.Match{Op: op, Field: field, Value: v} }
	emails := func(op, text string) *store.Match {
		m := has("emails", cmp(op, "fold", text))
		m.Also = "email"
		return m
	}
	cases := []struct {
		name  string
		where *store.Match
		want  string
	}{
		{"userName co", cmp(store.MatchCo, "username", "lic"), "alice"},
		{"userName co, short", cmp(store.MatchCo, "username", "o"), "bob carol"},
		{"userName co, none", cmp(store.MatchCo, "username", "lice@"), ""},
		{"userName sw", cmp(store.MatchSw, "username", "car"), "carol"},
		{"userName sw, short", cmp(store.MatchSw, "username", "b"), "bob"},
		{"userName sw, empty", cmp(store.MatchSw, "username", ""), "alice bob carol"},
		{"userName ew", cmp(store.MatchEw, "username", "rol"), "carol"},
		{"userName ew, short", cmp(store.MatchEw, "username", "e"), "alice"},
		{"userName sw, not", &store.Match{Op: store.MatchNot, Subs: []*store.Match{cmp(store.MatchSw, "username", "ali")}}, "bob carol"},
		{"userName co and co", &store.Match{Op: store.MatchAnd, Subs: []*store.Match{cmp(store.MatchCo, "username", "aro"),
			cmp(store.MatchCo, "username", "rol")}}, "carol"},
		{"userName co or co", &store.Match{Op: store.MatchOr, Subs: []*store.Match{cmp(store.MatchCo, "username", "aro"),
			cmp(store.MatchEw, "username", "bob")}}, "bob carol"},
		{"emails co, SCIM's and the users row's", emails(store.MatchCo, "@example."), "alice carol"},
		{"emails co, the users row's", emails(store.MatchCo, "example.org"), "carol"},
		{"emails co, SCIM's", emails(store.MatchCo, "e.work@"), "alice"},
		{"emails sw", emails(store.MatchSw, "alice.w"), "alice"},
		{"emails ew", emails(store.MatchEw, "e.com"), "alice"},
		{"emails ew, short", emails(store.MatchEw, "g"), "carol"},
		{"displayName co, folded", has("displayname", cmp(store.MatchCo, "fold", "οδόσ")), "alice"},
		{"displayName co, final sigma", has("displayname", cmp(store.MatchCo, "fold", "b σ")), "bob"},
		{"displayName sw", has("displayname", cmp(store.MatchSw, "fold", "ärg")), "alice"},
		{"displayName ew", has("displayname", cmp(store.MatchEw, "fold", "όσ")), "alice"},
		{"familyName co, ß", cmp(store.MatchCo, "last_name", "straße"), "alice"},
		{"familyName co, ss", cmp(store.MatchCo, "last_name", "strasse"), ""},
		{"familyName co, dotted I", cmp(store.MatchCo, "last_name", "di̇nç"), ""},
		{"familyName co, dotted I kept", cmp(store.MatchCo, "last_name", "dİnç"), "bob"},
		{"familyName sw", cmp(store.MatchSw, "last_name", "ωme"), "carol"},
		{"familyName sw, a text ending in 0xbf", cmp(store.MatchSw, "last_name", "ωmega¿"), "carol"},
		{"familyName ew", cmp(store.MatchEw, "last_name", "-straße"), "alice"},
		{"externalId co, as written", has("externalid", cmp(store.MatchCo, "value", `Ab"c%_\`)), "alice"},
		{"externalId co, other case", has("externalid", cmp(store.MatchCo, "value", `AB"C`)), ""},
		{"externalId co, lowercase", has("externalid", cmp(store.MatchCo, "value", "d-ab")), "bob"},
		{"externalId co, wildcards literal", has("externalid", cmp(store.MatchCo, "value", "%_x")), ""},
		{"externalId sw", has("externalid", cmp(store.MatchSw, "value", "ID-")), "alice"},
		{"externalId sw, other case", has("externalid", cmp(store.MatchSw, "value", "id-a")), "bob"},
		{"externalId ew", has("externalid", cmp(store.MatchEw, "value", `_\x`)), "alice"},
	}
	search := func(where *store.Match) (string, int) {
		t.Helper()
		users, total, err := s.SearchSCIMUsers(testCtx, realm.ID, store.SCIMQuery{Where: where, Limit: 10})
		if err != nil {
			t.Fatalf("search %+v: %v", where, err)
		}
		names := make([]string, len(users))
		for i, u := range users {
			names[i] = u.Username
		}
		return strings.Join(names, " "), total
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, total := search(tc.where); got != tc.want || total != len(strings.Fields(tc.want)) {
				t.Fatalf("%q (total %d), want %q", got, total, tc.want)
			}
		})
	}

	// Every write moves what the searches find: a rename, new SCIM
	// values, a deletion, and a user made anew in its place.
	alice.Username, alice.LastName = "alicia", "Weiß"
	if err := s.UpdateUser(testCtx, alice); err != nil {
		t.Fatal(err)
	}
	put(realm.ID, "u1", value("displayname", "Alicia"))
	if err := s.DeleteUser(testCtx, realm.ID, "u2"); err != nil {
		t.Fatal(err)
	}
	dave := testUser("u5", realm.ID, "dave", "dave@example.org")
	dave.LastName = "Dİnç"
	mustCreateUser(t, s, dave)
	for _, tc := range []struct {
		name  string
		where *store.Match
		want  string
	}{
		{"renamed", cmp(store.MatchCo, "username", "lic"), "alicia"},
		{"the old name", cmp(store.MatchCo, "username", "lice"), ""},
		{"the new family name", cmp(store.MatchEw, "last_name", "eiß"), "alicia"},
		{"the old family name", cmp(store.MatchCo, "last_name", "straße"), ""},
		{"replaced values", has("displayname", cmp(store.MatchCo, "fold", "οδό")), ""},
		{"new values", has("displayname", cmp(store.MatchSw, "fold", "alic")), "alicia"},
		{"a deleted user's values", has("externalid", cmp(store.MatchCo, "value", "d-ab")), ""},
		{"the user made after", cmp(store.MatchCo, "last_name", "dİnç"), "dave"},
		{"the user made after, by email", emails(store.MatchCo, "example.org"), "carol dave"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, total := search(tc.where); got != tc.want || total != len(strings.Fields(tc.want)) {
				t.Fatalf("%q (total %d), want %q", got, total, tc.want)
			}
		})
	}
}

func testSCIMAddressSearch(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	other := mustCreateRealm(t, s, testRealm("r2", "beta", 1))
	for _, u := range []*store.User{testUser("u1", realm.ID, "alice", ""), testUser("u2", realm.ID, "bob", ""),
		testUser("u3", other.ID, "alice", "")} {
		mustCreateUser(t, s, u)
	}
	put := func(realmID, id string, addresses ...store.SCIMAddress) {
		t.Helper()
		if err := s.PutSCIMUser(testCtx, realmID, id, store.SCIMUser{ModifiedAt: 1, Data: `{}`, Addresses: addresses}, nil); err != nil {
			t.Fatal(err)
		}
	}
	put(realm.ID, "u1", store.SCIMAddress{Type: "work", Locality: "paris", Country: "fr", Primary: true},
		store.SCIMAddress{Type: "home", Locality: "lyon", Country: "fr", PostalCode: "69_01"})
	put(realm.ID, "u2", store.SCIMAddress{Type: "work", Locality: "lyon", Country: "fr"})
	put(realm.ID, "u2", store.SCIMAddress{Type: "work", Locality: "london", Country: "gb"}) // replaces u2's
	put(other.ID, "u3", store.SCIMAddress{Type: "work", Locality: "paris", Country: "fr"})
	has := func(sub *store.Match) *store.Match {
		m := &store.Match{Op: store.MatchHas, Attr: "addresses"}
		if sub != nil {
			m.Subs = []*store.Match{sub}
		}
		return m
	}
	cmp := func(op, field string, v any) *store.Match { return &store.Match{Op: op, Field: field, Value: v} }
	and := func(subs ...*store.Match) *store.Match { return &store.Match{Op: store.MatchAnd, Subs: subs} }
	for _, tc := range []struct {
		name  string
		where *store.Match
		want  string
	}{
		{"any", has(nil), "alice bob"},
		{"one field", has(cmp(store.MatchEq, "country", "fr")), "alice"},
		{"two fields of one address", has(and(cmp(store.MatchEq, "type", "work"), cmp(store.MatchEq, "locality", "lyon"))), ""},
		{"two fields, another address", has(and(cmp(store.MatchEq, "type", "home"), cmp(store.MatchEq, "locality", "lyon"))), "alice"},
		{"primary", has(cmp(store.MatchEq, "primary", true)), "alice"},
		{"wildcards taken literally", has(cmp(store.MatchCo, "postalcode", "_")), "alice"},
		{"wildcards taken literally, no match", has(cmp(store.MatchSw, "postalcode", "6901")), ""},
		{"sw", has(cmp(store.MatchSw, "locality", "lo")), "bob"},
		{"not", &store.Match{Op: store.MatchNot, Subs: []*store.Match{has(cmp(store.MatchEq, "country", "gb"))}}, "alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			users, total, err := s.SearchSCIMUsers(testCtx, realm.ID, store.SCIMQuery{Where: tc.where, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			names := make([]string, len(users))
			for i, u := range users {
				names[i] = u.Username
			}
			if got := strings.Join(names, " "); got != tc.want || total != len(names) {
				t.Fatalf("%q (total %d), want %q", got, total, tc.want)
			}
		})
	}
	if _, _, err := s.SearchSCIMUsers(testCtx, realm.ID, store.SCIMQuery{Where: has(cmp(store.MatchEq, "fold", "x")), Limit: 1}); err == nil {
		t.Fatal("a field outside AddressFields was searched")
	}
}

func testSCIMUserSearch(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	other := mustCreateRealm(t, s, testRealm("r2", "beta", 1))
	for _, u := range []*store.User{testUser("u1", realm.ID, "alice", "alice@example.com"),
		testUser("u2", realm.ID, "bob", "bob@example.org"), testUser("u3", realm.ID, "carol", ""),
		testUser("u4", other.ID, "alice", "alice@example.com")} {
		mustCreateUser(t, s, u)
	}
	put := func(realmID, id string, modified int64, values ...store.SCIMValue) {
		t.Helper()
		if err := s.PutSCIMUser(testCtx, realmID, id, store.SCIMUser{ModifiedAt: modified, Data: `{"x":1}`}, values); err != nil {
			t.Fatal(err)
		}
	}
	put(realm.ID, "u1", 10, store.SCIMValue{Attr: "externalid", Value: "A-1", Fold: "a-1"},
		store.SCIMValue{Attr: "emails", Value: "Alice@Home.test", Fold: "alice@home.test", Type: "home"})
	put(realm.ID, "u2", 5, store.SCIMValue{Attr: "externalid", Value: "b_%", Fold: "b_%"})
	put(realm.ID, "u2", 20, store.SCIMValue{Attr: "title", Value: "Boss", Fold: "boss"}) // replaces u2's values
	put(other.ID, "u4", 10, store.SCIMValue{Attr: "externalid", Value: "A-1", Fold: "a-1"})

	has := func(attr string, sub *store.Match) *store.Match {
		m := &store.Match{Op: store.MatchHas, Attr: attr}
		if sub != nil {
			m.Subs = []*store.Match{sub}
		}
		return m
	}
	cmp := func(op, field string, v any) *store.Match { return &store.Match{Op: op, Field: field, Value: v} }
	search := func(q store.SCIMQuery) (string, int) {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 10
		}
		users, total, err := s.SearchSCIMUsers(testCtx, realm.ID, q)
		if err != nil {
			t.Fatalf("search %+v: %v", q.Where, err)
		}
		names := make([]string, len(users))
		for i, u := range users {
			names[i] = u.Username
		}
		return strings.Join(names, " "), total
	}
	emails := has("emails", cmp(store.MatchCo, "fold", "home"))
	emails.Also = "email"
	for _, tc := range []struct {
		name  string
		where *store.Match
		want  string
	}{
		{"all", nil, "alice bob carol"},
		{"username", cmp(store.MatchEq, "username", "bob"), "bob"},
		{"exact value", has("externalid", cmp(store.MatchEq, "value", "A-1")), "alice"},
		{"exact value, other case", has("externalid", cmp(store.MatchEq, "value", "a-1")), ""},
		{"wildcards taken literally", has("externalid", cmp(store.MatchCo, "value", "_%")), ""},
		{"replaced values are gone", has("externalid", cmp(store.MatchEq, "value", "b_%")), ""},
		{"present", has("title", nil), "bob"},
		{"not present", &store.Match{Op: store.MatchNot, Subs: []*store.Match{has("title", nil)}}, "alice carol"},
		{"the users row's email too", emails, "alice"},
		{"sw on a folded column", cmp(store.MatchSw, "username", "ca"), "carol"},
		{"ew exact", has("externalid", cmp(store.MatchEw, "value", "-1")), "alice"},
		{"modified", cmp(store.MatchGt, "modified", int64(15)), "bob carol"},
		{"and with a value", &store.Match{Op: store.MatchAnd, Subs: []*store.Match{has("externalid", nil),
			cmp(store.MatchNe, "username", "bob")}}, "alice"},
		{"or", &store.Match{Op: store.MatchOr, Subs: []*store.Match{has("title", nil), cmp(store.MatchEq, "email", "")}}, "bob carol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, total := search(store.SCIMQuery{Where: tc.where})
			if got != tc.want || total != len(strings.Fields(tc.want)) {
				t.Fatalf("%q (total %d), want %q", got, total, tc.want)
			}
		})
	}
	if got, total := search(store.SCIMQuery{SortAttr: "title", Desc: true, Offset: 1, Limit: 1}); got != "alice" || total != 3 {
		t.Fatalf("sorted by title, descending, second: %q of %d", got, total)
	}
	if got, _ := search(store.SCIMQuery{SortField: "modified"}); got != "alice bob carol" {
		t.Fatalf("sorted by modification: %q", got)
	}
	data, err := s.SCIMUsers(testCtx, realm.ID, []string{"u1", "u3", "u4"})
	if err != nil || len(data) != 1 || data["u1"].ModifiedAt != 10 {
		t.Fatalf("SCIM users %+v %v", data, err)
	}
	if _, _, err := s.SearchSCIMUsers(testCtx, realm.ID, store.SCIMQuery{Where: cmp(store.MatchEq, "password_hash", "x"), Limit: 1}); err == nil {
		t.Fatal("a field outside UserFields was searched")
	}
}

func testSCIMGroupSearch(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	mustCreateUser(t, s, testUser("u1", realm.ID, "alice", ""))
	for _, g := range []*store.Group{{ID: "g1", RealmID: realm.ID, Name: "Staff", CreatedAt: 1},
		{ID: "g2", RealmID: realm.ID, Name: "Ops", CreatedAt: 2}, {ID: "g3", RealmID: realm.ID, ParentID: "g2", Name: "Staff", CreatedAt: 3}} {
		if err := s.CreateGroup(testCtx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutSCIMGroup(testCtx, realm.ID, "g2", store.SCIMGroup{ExternalID: "X", ModifiedAt: 9}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(testCtx, "g3", "u1"); err != nil {
		t.Fatal(err)
	}
	search := func(where *store.Match) string {
		t.Helper()
		groups, total, err := s.SearchSCIMGroups(testCtx, realm.ID, store.SCIMQuery{Where: where, Limit: 10})
		if err != nil || total != len(groups) {
			t.Fatalf("search: %d of %d, %v", len(groups), total, err)
		}
		ids := make([]string, len(groups))
		for i, g := range groups {
			ids[i] = g.ID
		}
		return strings.Join(ids, " ")
	}
	mustEqual(t, "all, by name", search(nil), "g2 g1 g3")
	mustEqual(t, "by name", search(&store.Match{Op: store.MatchEq, Field: "displayname", Value: "staff"}), "g1 g3")
	mustEqual(t, "by externalId", search(&store.Match{Op: store.MatchEq, Field: "externalid", Value: "X"}), "g2")
	mustEqual(t, "by member", search(&store.Match{Op: store.MatchHas, Attr: "members",
		Subs: []*store.Match{{Op: store.MatchEq, Field: "value", Value: "u1"}}}), "g3")
	got, err := s.SCIMGroupOf(testCtx, "g1")
	mustEqual(t, "a group SCIM never wrote", got, store.SCIMGroup{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ClearGroupMembers(testCtx, "g3"); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "members after clearing", search(&store.Match{Op: store.MatchHas, Attr: "members"}), "")
	found, err := s.RealmUsersExist(testCtx, realm.ID, []string{"u1", "nope"})
	if err != nil || !found["u1"] || found["nope"] {
		t.Fatalf("users found %v %v", found, err)
	}
}
