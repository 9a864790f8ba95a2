package groups

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// user loads the realm and the user named by {userId} in the path.
func (s *Service) user(r *http.Request) (*store.Realm, *store.User, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	u, err := httpx.ChildOf(r, realm.ID, "userId", "user", s.deps.Store.GetUser)
	return realm, u, err
}

// ListUserGroups answers the groups a user is a direct member of, each
// with its path.
func (s *Service) ListUserGroups(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	var reps []GroupRep
	err = s.deps.Store.ReadTx(r.Context(), func(tx *store.Store) error {
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
		t := newTree(ancestry)
		reps = make([]GroupRep, len(direct))
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

// MembershipRep is the spec's "user-group association".
type MembershipRep struct {
	UserID    string `json:"userId"`
	GroupID   string `json:"groupId"`
	GroupPath string `json:"groupPath"`
}

// membership loads the user and the group of a membership path; both must
// be of the realm in the path.
func (s *Service) membership(r *http.Request) (*store.Realm, *store.User, *store.Group, error) {
	realm, u, err := s.user(r)
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := httpx.ChildOf(r, realm.ID, "groupId", "group", s.deps.Store.GetGroup)
	if err != nil {
		return nil, nil, nil, err
	}
	return realm, u, g, nil
}

// changeMembership adds (join) or removes a user's membership of a group
// and answers with the association.
func (s *Service) changeMembership(w http.ResponseWriter, r *http.Request, join bool) error {
	realm, u, g, err := s.membership(r)
	if err != nil {
		return err
	}
	rep := MembershipRep{UserID: u.ID, GroupID: g.ID}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
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
		rep.GroupPath = newTree(ancestry).rep(g).Path
		return nil
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// JoinGroup makes the user a member of the group.
func (s *Service) JoinGroup(w http.ResponseWriter, r *http.Request) error {
	return s.changeMembership(w, r, true)
}

// LeaveGroup ends the user's membership of the group.
func (s *Service) LeaveGroup(w http.ResponseWriter, r *http.Request) error {
	return s.changeMembership(w, r, false)
}
