package groups

import (
	"context"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// GroupRep is a group as a flat list shows it. Its path names it from the
// top of the tree, as Keycloak's does: "/parent/child".
type GroupRep struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ParentID    string `json:"parentId,omitempty"`
	Path        string `json:"path"`
}

// GroupTreeRep is a group with its subgroups, recursively.
type GroupTreeRep struct {
	GroupRep
	SubGroups []GroupTreeRep `json:"subGroups"`
}

// GroupDetailRep is a single group: its subtree and direct counts.
type GroupDetailRep struct {
	GroupTreeRep
	MemberCount int `json:"memberCount"`
	RoleCount   int `json:"roleCount"`
}

// tree indexes groups read in one query (a realm's, or some groups
// with their ancestors) to give paths and subgroups without a query per
// level. The set must hold the ancestors of every group asked about.
type tree struct {
	byID     map[string]*store.Group
	children map[string][]*store.Group // by parent ID, "" for the top level; in the store's name order
	paths    map[string]string
}

func newTree(groups []*store.Group) *tree {
	t := &tree{
		byID:     make(map[string]*store.Group, len(groups)),
		children: map[string][]*store.Group{},
		paths:    make(map[string]string, len(groups)),
	}
	for _, g := range groups {
		t.byID[g.ID] = g
		t.children[g.ParentID] = append(t.children[g.ParentID], g)
	}
	// Top down, breadth first: each path is its parent's plus its name.
	queue := append([]*store.Group(nil), t.children[""]...)
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		t.paths[g.ID] = t.paths[g.ParentID] + "/" + g.Name
		queue = append(queue, t.children[g.ID]...)
	}
	return t
}

func (t *tree) rep(g *store.Group) GroupRep {
	return GroupRep{ID: g.ID, Name: g.Name, Description: g.Description, ParentID: g.ParentID, Path: t.paths[g.ID]}
}

// subtree shows g with the subgroups keep accepts, recursively.
func (t *tree) subtree(g *store.Group, keep func(*store.Group) bool) GroupTreeRep {
	rep := GroupTreeRep{GroupRep: t.rep(g), SubGroups: []GroupTreeRep{}}
	for _, c := range t.children[g.ID] {
		if keep(c) {
			rep.SubGroups = append(rep.SubGroups, t.subtree(c, keep))
		}
	}
	return rep
}

// subtrees shows a page of the children of parentID ("" for the top level)
// that keep accepts, each with its subtree.
func (t *tree) subtrees(parentID string, keep func(*store.Group) bool, first, max int) []GroupTreeRep {
	var kept []*store.Group
	for _, g := range t.children[parentID] {
		if keep(g) {
			kept = append(kept, g)
		}
	}
	first = min(first, len(kept))
	kept = kept[first:]
	kept = kept[:min(max, len(kept))]
	reps := make([]GroupTreeRep, len(kept))
	for i, g := range kept {
		reps[i] = t.subtree(g, keep)
	}
	return reps
}

// matching is the set of groups whose name contains term, ignoring case,
// with their ancestors: what a search shows, so the tree keeps its shape.
func (t *tree) matching(term string) map[string]bool {
	term = strings.ToLower(term)
	shown := map[string]bool{}
	for _, g := range t.byID {
		if !strings.Contains(strings.ToLower(g.Name), term) {
			continue
		}
		for ; g != nil && !shown[g.ID]; g = t.byID[g.ParentID] {
			shown[g.ID] = true
		}
	}
	return shown
}

// groupFamilyRep reads g's ancestors and descendants, as st sees them, and
// shows g with its path and subtree.
func groupFamilyRep(ctx context.Context, st *store.Store, g *store.Group) (GroupTreeRep, error) {
	family, err := st.GroupFamily(ctx, g.RealmID, g.ID)
	if err != nil {
		return GroupTreeRep{}, err
	}
	t := newTree(family)
	stored, ok := t.byID[g.ID]
	if !ok { // deleted since the handler loaded it
		return GroupTreeRep{}, apperr.NotFound("group " + g.ID)
	}
	return t.subtree(stored, func(*store.Group) bool { return true }), nil
}

// Paths names each of groups by its path from the top of the tree, by ID:
// "/parent/child". groups must hold the ancestors of every group named.
func Paths(groups []*store.Group) map[string]string {
	return newTree(groups).paths
}
