package app

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxGroupNameLength        = 255
	maxGroupDescriptionLength = 255
	defaultGroupPageSize      = 100
	// allGroups is the page size when a tree listing names none: the tree
	// is shown whole, as Keycloak does.
	allGroups = math.MaxInt
)

// group loads the realm and the group named by {groupId} in the path.
func (a *App) group(r *http.Request) (*store.Realm, *store.Group, error) {
	return realmChild(a, r, "groupId", "group", a.store.GetGroup)
}

// groupBody is what both ways of placing a group take: an existing group's
// id to move it, or the fields of a new group.
type groupBody struct {
	ID          *string `json:"id"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// groupCreate is the body of POST .../groups, which may name the parent.
// It repeats groupBody's fields rather than embed it: encoding/json would
// name a mistyped field "groupBody.name".
type groupCreate struct {
	ID          *string `json:"id"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
	ParentID    *string `json:"parentId"`
}

// groupUpdate is what PUT and PATCH of a group change.
type groupUpdate struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// validateGroup checks and normalizes the fields of a group about to be
// stored. '/' is refused because it separates the names of a path.
func validateGroup(g *store.Group) error {
	if err := validate.Identifier("name", g.Name, maxGroupNameLength); err != nil {
		return err
	}
	g.Name = strings.TrimSpace(g.Name)
	if g.Name == "" {
		return apperr.Field("name", "must not be empty")
	}
	if strings.Contains(g.Name, "/") {
		return apperr.Field("name", "must not contain '/'")
	}
	return validate.Text("description", g.Description, maxGroupDescriptionLength)
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

func (a *App) createGroup(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var body groupCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	var parent *store.Group
	if body.ParentID != nil {
		if body.ID != nil {
			return apperr.Field("parentId", "cannot be given with id: to move a group under another, POST its id to .../groups/{parentId}/children")
		}
		if parent, err = bodyGroup(r.Context(), a.store, realm.ID, "parentId", *body.ParentID); err != nil {
			return err
		}
	}
	return a.placeGroup(w, r, realm, parent, groupBody{ID: body.ID, Name: body.Name, Description: body.Description})
}

func (a *App) createChildGroup(w http.ResponseWriter, r *http.Request) error {
	realm, parent, err := a.group(r)
	if err != nil {
		return err
	}
	var body groupBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	return a.placeGroup(w, r, realm, parent, body)
}

// placeGroup puts a group under parent (nil: at the top level): with an id
// it moves that existing group there, as Keycloak does; without, it creates
// a new one.
func (a *App) placeGroup(w http.ResponseWriter, r *http.Request, realm *store.Realm, parent *store.Group, body groupBody) error {
	var parentID string
	if parent != nil {
		parentID = parent.ID
	}
	if body.ID != nil {
		return a.moveGroup(w, r, realm, parentID, body)
	}
	if body.Name == nil {
		return apperr.Field("name", "is required")
	}
	g := store.Group{ID: uuid.NewString(), RealmID: realm.ID, ParentID: parentID, CreatedAt: a.now().UnixMilli()}
	set(&g.Name, body.Name)
	set(&g.Description, body.Description)
	if err := validateGroup(&g); err != nil {
		return err
	}
	var rep groupTreeRep
	err := a.store.Tx(r.Context(), func(tx *store.Store) error {
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
	return httpx.Created(w, a.cfg.BaseURL+"/admin/realms/"+realm.Name+"/groups/"+g.ID, rep)
}

// moveGroup gives the group named by body.id the parent parentID (""
// for the top level). A move takes the id alone: renaming is PUT's work.
func (a *App) moveGroup(w http.ResponseWriter, r *http.Request, realm *store.Realm, parentID string, body groupBody) error {
	switch {
	case body.Name != nil:
		return apperr.Field("name", "cannot be given with id: a move keeps the name; rename with PUT")
	case body.Description != nil:
		return apperr.Field("description", "cannot be given with id: a move keeps the description; change it with PUT")
	}
	var rep groupTreeRep
	err := a.store.Tx(r.Context(), func(tx *store.Store) error {
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

func (a *App) listGroups(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	first, max, err := httpx.FirstMax(q, allGroups)
	if err != nil {
		return err
	}
	groups, err := a.store.ListGroups(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	t := newGroupTree(groups)
	keep := func(*store.Group) bool { return true }
	if search := q.Get("search"); search != "" {
		shown := t.matching(search)
		keep = func(g *store.Group) bool { return shown[g.ID] }
	}
	return httpx.OK(w, t.subtrees("", keep, first, max))
}

func (a *App) getGroup(w http.ResponseWriter, r *http.Request) error {
	_, g, err := a.group(r)
	if err != nil {
		return err
	}
	var rep groupDetailRep
	err = a.store.ReadTx(r.Context(), func(tx *store.Store) error {
		var err error
		if rep.groupTreeRep, err = groupFamilyRep(r.Context(), tx, g); err != nil {
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

func (a *App) listChildGroups(w http.ResponseWriter, r *http.Request) error {
	realm, g, err := a.group(r)
	if err != nil {
		return err
	}
	first, max, err := httpx.FirstMax(r.URL.Query(), defaultGroupPageSize)
	if err != nil {
		return err
	}
	family, err := a.store.GroupFamily(r.Context(), realm.ID, g.ID)
	if err != nil {
		return err
	}
	t := newGroupTree(family)
	return httpx.OK(w, t.subtrees(g.ID, func(*store.Group) bool { return true }, first, max))
}

// updateGroup answers PUT and PATCH: it changes a group's name and
// description; its place in the tree changes only by a move.
func (a *App) updateGroup(w http.ResponseWriter, r *http.Request) error {
	_, g, err := a.group(r)
	if err != nil {
		return err
	}
	// name has no default: null keeps the stored one.
	current := groupUpdate{Name: g.Name, Description: g.Description}
	upd, err := httpx.ReadUpdate[groupUpdate](r, current, map[string]any{"name": g.Name, "description": nil})
	if err != nil {
		return err
	}
	g.Name, g.Description = upd.Name, upd.Description
	if err := validateGroup(g); err != nil {
		return err
	}
	var rep groupTreeRep
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
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

// deleteGroup answers with the group as it was, subgroups included: the
// spec's "deleted group".
func (a *App) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	realm, g, err := a.group(r)
	if err != nil {
		return err
	}
	var rep groupTreeRep
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
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

func (a *App) listGroupMembers(w http.ResponseWriter, r *http.Request) error {
	_, g, err := a.group(r)
	if err != nil {
		return err
	}
	return httpx.ListPage(w, r, defaultGroupPageSize, func(first, max int) ([]*store.User, error) {
		return a.store.ListGroupMembers(r.Context(), g.ID, first, max)
	}, toUserRep)
}

func (a *App) listUserGroups(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	var reps []groupRep
	err = a.store.ReadTx(r.Context(), func(tx *store.Store) error {
		direct, err := tx.ListUserGroups(r.Context(), u.ID)
		if err != nil {
			return err
		}
		ids := make([]string, len(direct))
		for i, g := range direct {
			ids[i] = g.ID
		}
		ancestry, err := tx.GroupAncestry(r.Context(), realm.ID, ids...)
		if err != nil {
			return err
		}
		t := newGroupTree(ancestry)
		reps = make([]groupRep, len(direct))
		for i, g := range direct {
			reps[i] = t.rep(g)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, reps)
}

// membershipRep is the spec's "user-group association".
type membershipRep struct {
	UserID    string `json:"userId"`
	GroupID   string `json:"groupId"`
	GroupPath string `json:"groupPath"`
}

// membership loads the user and the group of a membership path; both must
// be of the realm in the path.
func (a *App) membership(r *http.Request) (*store.Realm, *store.User, *store.Group, error) {
	realm, u, err := a.user(r)
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := pathChild(r, "groupId", "group", realm.ID, a.store.GetGroup)
	if err != nil {
		return nil, nil, nil, err
	}
	return realm, u, g, nil
}

// changeMembership adds (join) or removes a user's membership of a group
// and answers with the association.
func (a *App) changeMembership(w http.ResponseWriter, r *http.Request, join bool) error {
	realm, u, g, err := a.membership(r)
	if err != nil {
		return err
	}
	rep := membershipRep{UserID: u.ID, GroupID: g.ID}
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if join {
			if err := tx.AddGroupMember(r.Context(), g.ID, u.ID); err != nil {
				return err
			}
		} else {
			err := tx.RemoveGroupMember(r.Context(), g.ID, u.ID)
			if errors.Is(err, store.ErrNotFound) {
				return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "user %s is not a member of group %s", u.ID, g.ID)
			}
			if err != nil {
				return err
			}
		}
		ancestry, err := tx.GroupAncestry(r.Context(), realm.ID, g.ID)
		if err != nil {
			return err
		}
		rep.GroupPath = newGroupTree(ancestry).rep(g).Path
		return nil
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

func (a *App) joinGroup(w http.ResponseWriter, r *http.Request) error {
	return a.changeMembership(w, r, true)
}

func (a *App) leaveGroup(w http.ResponseWriter, r *http.Request) error {
	return a.changeMembership(w, r, false)
}
