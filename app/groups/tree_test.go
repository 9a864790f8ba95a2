package groups

import (
	"maps"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// A realm's tree, in the store's name order within each level.
var sample = []*store.Group{
	{ID: "s", Name: "sales"},
	{ID: "e", Name: "emea", ParentID: "s"},
	{ID: "f", Name: "france", ParentID: "e"},
	{ID: "u", Name: "us", ParentID: "s"},
	{ID: "o", Name: "ops"},
}

func TestPathsNameGroupsFromTheTop(t *testing.T) {
	want := map[string]string{"s": "/sales", "e": "/sales/emea", "f": "/sales/emea/france", "u": "/sales/us", "o": "/ops"}
	if got := Paths(sample); !maps.Equal(got, want) {
		t.Errorf("Paths = %v, want %v", got, want)
	}
}

func names(reps []GroupTreeRep) []string {
	var out []string
	for _, r := range reps {
		out = append(out, r.Path)
		out = append(out, names(r.SubGroups)...)
	}
	return out
}

func TestSubtreesPageAndSearch(t *testing.T) {
	all := func(*store.Group) bool { return true }
	tr := newTree(sample)
	shown := tr.matching("FRA")
	for _, tc := range []struct {
		name        string
		parent      string
		keep        func(*store.Group) bool
		first, max  int
		wantInOrder []string
	}{
		{"the whole tree", "", all, 0, allGroups, []string{"/sales", "/sales/emea", "/sales/emea/france", "/sales/us", "/ops"}},
		{"a page of the top level", "", all, 1, 1, []string{"/ops"}},
		{"past the end", "", all, 5, 1, nil},
		{"a group's children", "s", all, 0, 1, []string{"/sales/emea", "/sales/emea/france"}},
		{"a search keeps the ancestors of a match", "", func(g *store.Group) bool { return shown[g.ID] }, 0, allGroups,
			[]string{"/sales", "/sales/emea", "/sales/emea/france"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(tr.subtrees(tc.parent, tc.keep, tc.first, tc.max)); !slices.Equal(got, tc.wantInOrder) {
				t.Errorf("subtrees = %v, want %v", got, tc.wantInOrder)
			}
		})
	}
}
