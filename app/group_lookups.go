package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/groups"
	"github.com/idenplane/idenplane/store"
)

// What app's other files read of the groups module (app/groups): the
// group a path names, for the group role mappings, and groups' paths, for
// the groups claim of tokens (groupPaths).

// group loads the realm and the group named by {groupId} in the path.
func (a *App) group(r *http.Request) (*store.Realm, *store.Group, error) {
	return a.groups.Group(r)
}

// groupTree is groups' paths by ID, as groupPaths reads them.
type groupTree struct{ paths map[string]string }

func newGroupTree(gs []*store.Group) groupTree {
	return groupTree{paths: groups.Paths(gs)}
}
