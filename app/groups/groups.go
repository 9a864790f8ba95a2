// Package groups is the admin API of a realm's group tree and of users'
// memberships: groups with their subgroups, moves within the tree, members,
// and a user's groups. The rules of a group's name and description are the
// identity core's (identity.ValidateGroup), which SCIM and realm import
// obey too.
package groups

import (
	"context"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

const (
	defaultGroupPageSize = 100
	// allGroups is the page size when a tree listing names none: the tree
	// is shown whole, as Keycloak does.
	allGroups = math.MaxInt
)

// Deps is what the groups area uses.
type Deps struct {
	Store *store.Store
	Now   func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for the Location of a new
	// group.
	BaseURL string
	// UserRep is a user as the admin API shows one: the members of a group
	// are listed in the users' own representation, which is app's.
	UserRep func(*store.User) any
}

// Service is the groups area: the admin API's handlers.
type Service struct{ deps Deps }

// New builds the groups area.
func New(d Deps) *Service { return &Service{deps: d} }

// group loads the realm and the group named by {groupId} in the path.
func (s *Service) group(r *http.Request) (*store.Realm, *store.Group, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	g, err := httpx.ChildOf(r, realm.ID, "groupId", "group", s.deps.Store.GetGroup)
	return realm, g, err
}

// GroupBody is what both ways of placing a group take: an existing group's
// id to move it, or the fields of a new group.
type GroupBody struct {
	ID          *string `json:"id"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// GroupCreate is the body of POST .../groups, which may name the parent.
// It repeats GroupBody's fields rather than embed it: encoding/json would
// name a mistyped field "GroupBody.name".
type GroupCreate struct {
	ID          *string `json:"id"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
	ParentID    *string `json:"parentId"`
}

// GroupUpdate is what PUT and PATCH of a group change.
type GroupUpdate struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func groupConflict(err error, name string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && ce.Column == "name" {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "name",
			Message: "a group named " + name + " already exists at this level", Cause: err}
	}
	return err
}

// bodyGroup loads a group named by a request-body field: a malformed ID is
// a 400 and an unknown one a 404, both naming the field.
func bodyGroup(ctx context.Context, st *store.Store, realmID, field, id string) (*store.Group, error) {
	if uuid.Validate(id) != nil {
		return nil, apperr.Field(field, "must be a UUID")
	}
	g, err := st.GetGroup(ctx, realmID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &apperr.Error{Status: http.StatusNotFound, Code: apperr.CodeNotFound, Field: field,
			Message: field + ": group " + id + " not found", Cause: err}
	}
	return g, err
}

// CreateGroup creates a top-level group, or under parentId, or moves
// the group id names to the top level.
func (s *Service) CreateGroup(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body GroupCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	var parent *store.Group
	if body.ParentID != nil {
		if body.ID != nil {
			return apperr.Field("parentId", "cannot be given with id: to move a group under another, POST its id to .../groups/{parentId}/children")
		}
		if parent, err = bodyGroup(r.Context(), s.deps.Store, realm.ID, "parentId", *body.ParentID); err != nil {
			return err
		}
	}
	return s.placeGroup(w, r, realm, parent, GroupBody{ID: body.ID, Name: body.Name, Description: body.Description})
}

// CreateChildGroup creates a subgroup, or moves the group id names
// under this one.
func (s *Service) CreateChildGroup(w http.ResponseWriter, r *http.Request) error {
	realm, parent, err := s.group(r)
	if err != nil {
		return err
	}
	var body GroupBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	return s.placeGroup(w, r, realm, parent, body)
}

// placeGroup puts a group under parent (nil: at the top level): with an id
// it moves that existing group there, as Keycloak does; without, it creates
// a new one.
func (s *Service) placeGroup(w http.ResponseWriter, r *http.Request, realm *store.Realm, parent *store.Group, body GroupBody) error {
	var parentID string
	if parent != nil {
		parentID = parent.ID
	}
	if body.ID != nil {
		return s.moveGroup(w, r, realm, parentID, body)
	}
	if body.Name == nil {
		return apperr.Field("name", "is required")
	}
	g := store.Group{ID: uuid.NewString(), RealmID: realm.ID, ParentID: parentID, Name: *body.Name,
		CreatedAt: s.deps.Now().UnixMilli()}
	if body.Description != nil {
		g.Description = *body.Description
	}
	if err := identity.ValidateGroup(&g); err != nil {
		return err
	}
	var rep GroupTreeRep
	err := s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.CreateGroup(r.Context(), &g); err != nil {
			return groupConflict(err, g.Name)
		}
		var err error
		rep, err = groupFamilyRep(r.Context(), tx, &g)
		return err
	})
	if err != nil {
		return err
	}
	// Subgroups too live at .../groups/{id}, not under their parent's path.
	return httpx.Created(w, s.deps.BaseURL+"/admin/realms/"+realm.Name+"/groups/"+g.ID, rep)
}

// moveGroup gives the group named by body.id the parent parentID (""
// for the top level). A move takes the id alone: renaming is PUT's work.
func (s *Service) moveGroup(w http.ResponseWriter, r *http.Request, realm *store.Realm, parentID string, body GroupBody) error {
	switch {
	case body.Name != nil:
		return apperr.Field("name", "cannot be given with id: a move keeps the name; rename with PUT")
	case body.Description != nil:
		return apperr.Field("description", "cannot be given with id: a move keeps the description; change it with PUT")
	}
	var rep GroupTreeRep
	err := s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		g, err := bodyGroup(r.Context(), tx, realm.ID, "id", *body.ID)
		if err != nil {
			return err
		}
		err = tx.MoveGroup(r.Context(), realm.ID, g.ID, parentID)
		if errors.Is(err, store.ErrCycle) {
			return apperr.Field("id", "moving group %s under group %s would create a cycle: the new parent is the group itself or one of its subgroups", g.ID, parentID)
		}
		if err != nil {
			return groupConflict(err, g.Name)
		}
		rep, err = groupFamilyRep(r.Context(), tx, g)
		return err
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// ListGroups answers the realm's tree, or the part a search shows.
func (s *Service) ListGroups(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	first, max, err := httpx.FirstMax(q, allGroups)
	if err != nil {
		return err
	}
	groups, err := s.deps.Store.ListGroups(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	t := newTree(groups)
	keep := func(*store.Group) bool { return true }
	if search := q.Get("search"); search != "" {
		shown := t.matching(search)
		keep = func(g *store.Group) bool { return shown[g.ID] }
	}
	return httpx.OK(w, t.subtrees("", keep, first, max))
}

// GetGroup answers a group with its subtree and direct counts.
func (s *Service) GetGroup(w http.ResponseWriter, r *http.Request) error {
	_, g, err := s.group(r)
	if err != nil {
		return err
	}
	var rep GroupDetailRep
	err = s.deps.Store.ReadTx(r.Context(), func(tx *store.Store) error {
		var err error
		if rep.GroupTreeRep, err = groupFamilyRep(r.Context(), tx, g); err != nil {
			return err
		}
		rep.MemberCount, rep.RoleCount, err = tx.GroupCounts(r.Context(), g.ID)
		return err
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// ListChildGroups answers a page of a group's subgroups.
func (s *Service) ListChildGroups(w http.ResponseWriter, r *http.Request) error {
	realm, g, err := s.group(r)
	if err != nil {
		return err
	}
	first, max, err := httpx.FirstMax(r.URL.Query(), defaultGroupPageSize)
	if err != nil {
		return err
	}
	family, err := s.deps.Store.GroupFamily(r.Context(), realm.ID, g.ID)
	if err != nil {
		return err
	}
	t := newTree(family)
	return httpx.OK(w, t.subtrees(g.ID, func(*store.Group) bool { return true }, first, max))
}

// UpdateGroup answers PUT and PATCH: it changes a group's name and
// description; its place in the tree changes only by a move.
func (s *Service) UpdateGroup(w http.ResponseWriter, r *http.Request) error {
	_, g, err := s.group(r)
	if err != nil {
		return err
	}
	// name has no default: null keeps the stored one.
	current := GroupUpdate{Name: g.Name, Description: g.Description}
	upd, err := httpx.ReadUpdate[GroupUpdate](r, current, map[string]any{"name": g.Name, "description": nil})
	if err != nil {
		return err
	}
	g.Name, g.Description = upd.Name, upd.Description
	if err := identity.ValidateGroup(g); err != nil {
		return err
	}
	var rep GroupTreeRep
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.UpdateGroup(r.Context(), g); err != nil {
			return groupConflict(err, g.Name)
		}
		var err error
		rep, err = groupFamilyRep(r.Context(), tx, g)
		return err
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// DeleteGroup answers with the group as it was, subgroups included: the
// spec's "deleted group".
func (s *Service) DeleteGroup(w http.ResponseWriter, r *http.Request) error {
	realm, g, err := s.group(r)
	if err != nil {
		return err
	}
	var rep GroupTreeRep
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		var err error
		if rep, err = groupFamilyRep(r.Context(), tx, g); err != nil {
			return err
		}
		return tx.DeleteGroup(r.Context(), realm.ID, g.ID)
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// ListGroupMembers answers a page of a group's direct members.
func (s *Service) ListGroupMembers(w http.ResponseWriter, r *http.Request) error {
	_, g, err := s.group(r)
	if err != nil {
		return err
	}
	return httpx.ListPage(w, r, defaultGroupPageSize, func(first, max int) ([]*store.User, error) {
		return s.deps.Store.ListGroupMembers(r.Context(), g.ID, first, max)
	}, s.deps.UserRep)
}
