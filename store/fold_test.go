package store

import (
	"path/filepath"
	"testing"
	"unicode"
)

func TestFoldCase(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"ÉMILE", "émile", true},
		{"Émile", "EMILE", false},
		{"STRAẞE", "straße", true},
		{"STRASSE", "straße", false},
		{"ΣΊΣΥΦΟΣ", "σίσυφος", true},
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ", true},
		{"ILKER", "ilker", true},
		{"ILKER", "ılker", false},
		{"İLKER", "ilker", false},
		{"İLKER", "i̇lker", false},
		{"KELVIN", "\u212Aelvin", true},
		{"ſtop", "STOP", true},
		{"ǅemal", "ǆemal", true},
		{"ǄEMAL", "ǆemal", true},
		{"ꭰ", "Ꭰ", true},
		{"Ⓐ", "ⓐ", true},
		{"plain ascii", "PLAIN ASCII", true},
		{"", "", true},
	} {
		if got := FoldCase(c.a) == FoldCase(c.b); got != c.same {
			t.Errorf("FoldCase(%q) = %q, FoldCase(%q) = %q: same %v, want %v", c.a, FoldCase(c.a), c.b, FoldCase(c.b), got, c.same)
		}
	}
	if got := FoldCase("ÉMILE ẞ Σ"); got != "émile ß σ" {
		t.Errorf("FoldCase folds to %q, want the lowercase forms", got)
	}
}

// Every letter of a case orbit folds to one letter of that orbit, and
// letters of different orbits never meet: simple folding's equivalence.
func TestFoldCaseOrbits(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		f := foldRune(r)
		if f != r && !inOrbit(r, f) {
			t.Fatalf("%U folds to %U, outside its orbit", r, f)
		}
		for x := unicode.SimpleFold(r); x != r; x = unicode.SimpleFold(x) {
			if foldRune(x) != f {
				t.Fatalf("%U folds to %U but %U of its orbit to %U", r, f, x, foldRune(x))
			}
		}
	}
}

// The rows written before the folded columns existed get them when the
// store opens: SCIM's filters on names find them.
func TestFoldNamesOnOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idenplane.db")
	s := storeTestOpen(t, path, storeTestKey)
	realm := &Realm{ID: "r1", Name: "acme", Enabled: true, CreatedAt: 1}
	if err := s.CreateRealm(testCtx, realm); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(testCtx, &User{ID: "u1", RealmID: "r1", Username: "emile", FirstName: "Émile", LastName: "STRAẞE",
		Enabled: true, CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateGroup(testCtx, &Group{ID: "g1", RealmID: "r1", Name: "ÉQUIPE", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	// As a database of the version before them holds these rows.
	if _, err := s.w.ExecContext(testCtx, "UPDATE users SET first_name_fold = NULL, last_name_fold = NULL"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(testCtx, "UPDATE realm_groups SET name_fold = NULL"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = storeTestOpen(t, path, storeTestKey)
	where := &Match{Op: MatchAnd, Subs: []*Match{{Op: MatchEq, Field: "first_name", Value: "émile"},
		{Op: MatchEq, Field: "last_name", Value: "straße"}}}
	if users, _, err := s.SearchSCIMUsers(testCtx, "r1", SCIMQuery{Where: where, Limit: 1}); err != nil || len(users) != 1 {
		t.Fatalf("users by folded names: %v %v", users, err)
	}
	if groups, _, err := s.SearchSCIMGroups(testCtx, "r1", SCIMQuery{Where: &Match{Op: MatchEq, Field: "displayname", Value: "équipe"}, Limit: 1}); err != nil || len(groups) != 1 {
		t.Fatalf("groups by folded name: %v %v", groups, err)
	}
}
