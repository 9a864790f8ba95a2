package orgs

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The roles of a member. An owner and an admin manage the organization's
// members and invitations; an organization keeps at least one owner once
// it has one.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

var roles = []string{RoleOwner, RoleAdmin, RoleMember}

// MemberRep is a member as the API shows it: the user's main fields and
// the role.
type MemberRep struct {
	ID              string `json:"id"`
	Username        string `json:"username"`
	Email           string `json:"email,omitempty"`
	FirstName       string `json:"firstName,omitempty"`
	LastName        string `json:"lastName,omitempty"`
	Enabled         bool   `json:"enabled"`
	Role            string `json:"role"`
	JoinedTimestamp int64  `json:"joinedTimestamp"`
}

func toMemberRep(m *store.OrgMember) MemberRep {
	u := m.User
	return MemberRep{ID: u.ID, Username: u.Username, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
		Enabled: u.Enabled, Role: m.Role, JoinedTimestamp: m.JoinedAt}
}

// MemberAdd is the body of POST .../members.
type MemberAdd struct {
	UserID *string `json:"userId"`
	Role   *string `json:"role"`
}

// MemberUpdate is the body of PUT .../members/{userId}.
type MemberUpdate struct {
	Role *string `json:"role"`
}

func checkRole(role *string, def string) (string, error) {
	if role == nil {
		return def, nil
	}
	if !slices.Contains(roles, *role) {
		return "", apperr.Field("role", "must be owner, admin or member")
	}
	return *role, nil
}

// errOwnersOnly refuses an organization admin who is not an owner a
// change to the owner role: owners are made and unmade by owners.
var errOwnersOnly = apperr.Forbidden("only an owner may give or take the owner role, or remove an owner")

// mayTouchOwner says whether the caller may give, take or remove the owner
// role: an admin credential or an owner.
func (s *Service) mayTouchOwner(r *http.Request) bool {
	role := s.deps.CallerRole(r)
	return role == "" || role == RoleOwner
}

// checkRoleGrant refuses the owner or admin role to a caller that does
// not hold organizations:read: the role reads the organization's members
// and invitations, so giving it grants that permission, and a caller
// invites an address it reads as readily as another's.
func (s *Service) checkRoleGrant(r *http.Request, role string) error {
	if (role == RoleOwner || role == RoleAdmin) && !s.deps.CallerPermissions(r).Has(authz.OrgsRead) {
		return apperr.Forbidden("the %s role holds the permission %s: it cannot be given by a caller that does not hold it",
			role, authz.OrgsRead)
	}
	return nil
}

// errLastOwner refuses a change that would leave an organization without
// an owner.
func errLastOwner() error {
	return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeLastOwner, Field: "role",
		Message: "the organization's last owner cannot leave or stop being an owner: make another member owner first"}
}

// ListMembers answers a page of an organization's members by username.
func (s *Service) ListMembers(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	return httpx.ListPage(w, r, defaultPageSize, func(first, max int) ([]*store.OrgMember, error) {
		return s.deps.Store.ListOrgMembers(r.Context(), o.ID, first, max)
	}, toMemberRep)
}

// errInviteOnly refuses an organization's owner or admin the direct
// addition of a user: they are ordinary users of the realm, so the user
// they would add must consent, by accepting an invitation.
var errInviteOnly = apperr.Forbidden("an owner or admin of an organization invites users; only an administrator adds them directly")

// AddMember answers POST .../members: an existing user of the realm joins
// with a role (member unless the body names one). Only an admin
// credential adds directly; the organization's own owners and admins
// invite.
func (s *Service) AddMember(w http.ResponseWriter, r *http.Request) error {
	if s.deps.CallerRole(r) != "" {
		return errInviteOnly
	}
	realm, o, err := s.organization(r)
	if err != nil {
		return err
	}
	var body MemberAdd
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.UserID == nil {
		return apperr.Field("userId", "is required")
	}
	role, err := checkRole(body.Role, RoleMember)
	if err != nil {
		return err
	}
	if err := s.checkRoleGrant(r, role); err != nil {
		return err
	}
	u, err := bodyUser(r.Context(), s.deps.Store, realm.ID, *body.UserID)
	if err != nil {
		return err
	}
	pending, err := s.join(r.Context(), s.deps.Store, realm, o, u, role, "admin")
	if err != nil {
		return err
	}
	pending.Wake()
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+u.ID,
		toMemberRep(&store.OrgMember{User: u, Role: role, JoinedAt: s.deps.Now().UnixMilli()}))
}

// join adds a user to an organization, and publishes it
// (organization.member.added) in the same transaction: st's, when it is
// one. Already a member is a 409. The caller wakes what it answers once
// its transaction has committed.
func (s *Service) join(ctx context.Context, st *store.Store, realm *store.Realm, o *store.Organization, u *store.User, role, via string) (bus.Pending, error) {
	var pending bus.Pending
	err := st.Tx(ctx, func(tx *store.Store) error {
		err := tx.AddOrgMember(ctx, o.ID, u.ID, role, s.deps.Now().UnixMilli())
		if errors.Is(err, store.ErrConflict) {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "userId",
				Message: "user " + u.Username + " is already a member of " + o.Slug, Cause: err}
		} else if err != nil {
			return err
		}
		pending, err = s.deps.Bus.Queue(ctx, tx, realm, bus.OrganizationMemberAdded, Membership{Organization: o.Slug,
			OrganizationID: o.ID, UserID: u.ID, Username: u.Username, Role: role, Via: via})
		return err
	})
	return pending, err
}

// Membership is the data of the organization.member events.
type Membership struct {
	Organization   string `json:"organization"` // its slug
	OrganizationID string `json:"organizationId"`
	UserID         string `json:"userId"`
	Username       string `json:"username,omitempty"`
	Role           string `json:"role,omitempty"`
	// Via is how a member joined: "admin", "invitation" or "sso".
	Via string `json:"via,omitempty"`
}

// bodyUser loads the user a body's userId names: a malformed ID is a 400,
// an unknown one (or another realm's) a 404, both at userId. A service
// account is no one's member.
func bodyUser(ctx context.Context, st *store.Store, realmID, id string) (*store.User, error) {
	if uuid.Validate(id) != nil {
		return nil, apperr.Field("userId", "must be a UUID")
	}
	u, err := st.GetUser(ctx, realmID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &apperr.Error{Status: http.StatusNotFound, Code: apperr.CodeNotFound, Field: "userId",
			Message: "userId: user " + id + " not found", Cause: err}
	}
	if err == nil && u.ServiceAccountClientID != "" {
		return nil, apperr.Field("userId", "is a client's service account, which cannot join an organization")
	}
	return u, err
}

// member loads the realm, the organization and the member the path names.
func (s *Service) member(ctx context.Context, st *store.Store, o *store.Organization, userID string) (*store.OrgMember, error) {
	m, err := st.GetOrgMember(ctx, o.ID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.NotFound("member " + userID + " of organization " + o.Slug)
	}
	return m, err
}

// keepsOwner refuses taking the owner role from m when it is the
// organization's last owner.
func keepsOwner(ctx context.Context, st *store.Store, o *store.Organization, m *store.OrgMember) error {
	if m.Role != RoleOwner {
		return nil
	}
	n, err := st.CountOrgMembers(ctx, o.ID, RoleOwner)
	if err != nil {
		return err
	}
	if n <= 1 {
		return errLastOwner()
	}
	return nil
}

// UpdateMember answers PUT .../members/{userId}: the member's new role.
func (s *Service) UpdateMember(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	var body MemberUpdate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Role == nil {
		return apperr.Field("role", "is required")
	}
	role, err := checkRole(body.Role, "")
	if err != nil {
		return err
	}
	if err := s.checkRoleGrant(r, role); err != nil {
		return err
	}
	var m *store.OrgMember
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if m, err = s.member(r.Context(), tx, o, mux.Vars(r)["userId"]); err != nil {
			return err
		}
		if (role == RoleOwner) != (m.Role == RoleOwner) && !s.mayTouchOwner(r) {
			return errOwnersOnly
		}
		if role != RoleOwner {
			if err := keepsOwner(r.Context(), tx, o, m); err != nil {
				return err
			}
		}
		m.Role = role
		return tx.SetOrgMemberRole(r.Context(), o.ID, m.User.ID, role)
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, toMemberRep(m))
}

// RemoveMember answers DELETE .../members/{userId}: the user leaves the
// organization and stays a user of the realm.
func (s *Service) RemoveMember(w http.ResponseWriter, r *http.Request) error {
	realm, o, err := s.organization(r)
	if err != nil {
		return err
	}
	var pending bus.Pending
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		m, err := s.member(r.Context(), tx, o, mux.Vars(r)["userId"])
		if err != nil {
			return err
		}
		if m.Role == RoleOwner && !s.mayTouchOwner(r) {
			return errOwnersOnly
		}
		if err := keepsOwner(r.Context(), tx, o, m); err != nil {
			return err
		}
		if err := tx.RemoveOrgMember(r.Context(), o.ID, m.User.ID); err != nil {
			return err
		}
		pending, err = s.deps.Bus.Queue(r.Context(), tx, realm, bus.OrganizationMemberRemoved, Membership{Organization: o.Slug,
			OrganizationID: o.ID, UserID: m.User.ID, Username: m.User.Username, Role: m.Role})
		return err
	})
	if err != nil {
		return err
	}
	pending.Wake()
	return httpx.NoContent(w)
}
