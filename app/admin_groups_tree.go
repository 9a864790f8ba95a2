package app

import (
	"context"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// groupRep is a group as a flat list shows it. Its path names it from the
// top of the tree, as Keycloak's does: "/parent/child".
type groupRep struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ParentID    string `json:"parentId,omitempty"`
	Path        string `json:"path"`
}

// groupTreeRep is a group with its subgroups, recursively.
type groupTreeRep struct {
	groupRep
	SubGroups []groupTreeRep `json:"subGroups"`
}

// groupDetailRep is a single group: its subtree and direct counts.
type groupDetailRep struct {
	groupTreeRep
	MemberCount int `json:"memberCount"`
	RoleCount   int `json:"roleCount"`
}

// groupTree indexes groups read in one query (a realm's, or some groups
// with their ancestors) to give paths and subgroups without a query per
// level. The set must hold the ancestors of every group asked about.
type groupTree struct {
	byID     map[string]*store.Group
	children map[string][]*store.Group // by parent ID, "" for the top level; in the store's name order
	paths    map[string]string
}

func newGroupTree(groups []*store.Group) *groupTree {
	t := &groupTree{
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

func (t *groupTree) rep(g *store.Group) groupRep {
	return groupRep{ID: g.ID, Name: g.Name, Description: g.Description, ParentID: g.ParentID, Path: t.paths[g.ID]}
}

// tree shows g with the subgroups keep accepts, recursively.
func (t *groupTree) tree(g *store.Group, keep func(*store.Group) bool) groupTreeRep {
	rep := groupTreeRep{groupRep: t.rep(g), SubGroups: []groupTreeRep{}}
	for _, c := range t.children[g.ID] {
		if keep(c) {
			rep.SubGroups = append(rep.SubGroups, t.tree(c, keep))
		}
	}
	return rep
}

// subtrees shows a page of the children of parentID ("" for the top level)
// that keep accepts, each with its subtree.
func (t *groupTree) subtrees(parentID string, keep func(*store.Group) bool, first, max int) []groupTreeRep {
	var kept []*store.Group
	for _, g := range t.children[parentID] {
		if keep(g) {
			kept = append(kept, g)
		}
	}
	first = min(first, len(kept))
	kept = kept[first:]
	kept = kept[:min(max, len(kept))]
	reps := make([]groupTreeRep, len(kept))
	for i, g := range kept {
		reps[i] = t.tree(g, keep)
	}
	return reps
}

// matching is the set of groups whose name contains term, ignoring case,
// with their ancestors: what a search shows, so the tree keeps its shape.
func (t *groupTree) matching(term string) map[string]bool {
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
func groupFamilyRep(ctx context.Context, st *store.Store, g *store.Group) (groupTreeRep, error) {
	family, err := st.GroupFamily(ctx, g.RealmID, g.ID)
	if err != nil {
		return groupTreeRep{}, err
	}
	t := newGroupTree(family)
	stored, ok := t.byID[g.ID]
	if !ok { // deleted since the handler loaded it
		return groupTreeRep{}, apperr.NotFound("group " + g.ID)
	}
	return t.tree(stored, func(*store.Group) bool { return true }), nil
}
