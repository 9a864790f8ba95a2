package orgs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// How long an invitation works when the request does not say, and the
// bounds of what it may say (seconds).
const (
	defaultInvitationLifetime = 7 * 24 * time.Hour
	minInvitationLifetime     = 5 * time.Minute
	maxInvitationLifetime     = 30 * 24 * time.Hour
)

// InvitationMail is what the invitation mail says.
type InvitationMail struct {
	To           string
	Organization string // the organization's name
	Role         string
	Link         string // the hosted page that accepts it
	Expires      time.Time
}

// InvitationRep is an invitation as the API shows it: never its token,
// but in the answer of its creation, once, the link the mail carries, for
// an administrator to hand over another way.
type InvitationRep struct {
	ID               string `json:"id"`
	Email            string `json:"email"`
	Role             string `json:"role"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
	ExpiresTimestamp int64  `json:"expiresTimestamp"`
	Link             string `json:"link,omitempty"`
}

func toInvitationRep(inv *store.OrgInvitation) InvitationRep {
	return InvitationRep{ID: inv.ID, Email: inv.Email, Role: inv.Role, CreatedTimestamp: inv.CreatedAt, ExpiresTimestamp: inv.ExpiresAt}
}

// InvitationCreate is the body of POST .../invitations.
type InvitationCreate struct {
	Email     *string `json:"email"`
	Role      *string `json:"role"`
	ExpiresIn *int64  `json:"expiresIn"` // seconds
}

// InvitationPath is the path of the hosted page an invitation's mail links
// to, under the realm's issuer. The token is in the path, not the query,
// so that the page is where a browser sent to sign in first comes back to.
func InvitationPath(slug, token string) string {
	return "/account/organizations/" + slug + "/invitations/" + token
}

// ListInvitations answers a page of an organization's pending invitations,
// newest first.
func (s *Service) ListInvitations(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	return httpx.ListPage(w, r, defaultPageSize, func(first, max int) ([]*store.OrgInvitation, error) {
		return s.deps.Store.PendingOrgInvitations(r.Context(), o.ID, now, first, max)
	}, toInvitationRep)
}

// CreateInvitation answers POST .../invitations: a single-use token with an
// expiry, mailed to the address through the realm's mail sender in the
// transaction that stores the invitation.
func (s *Service) CreateInvitation(w http.ResponseWriter, r *http.Request) error {
	realm, o, err := s.organization(r)
	if err != nil {
		return err
	}
	var body InvitationCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Email == nil {
		return apperr.Field("email", "is required")
	}
	email, err := validate.NormalizeEmail(*body.Email)
	if err != nil {
		return err
	}
	role, err := checkRole(body.Role, RoleMember)
	if err != nil {
		return err
	}
	if role == RoleOwner && !s.mayTouchOwner(r) {
		return errOwnersOnly
	}
	if err := s.checkRoleGrant(r, role); err != nil {
		return err
	}
	lifetime := defaultInvitationLifetime
	if body.ExpiresIn != nil {
		lifetime = time.Duration(*body.ExpiresIn) * time.Second
		if lifetime < minInvitationLifetime || lifetime > maxInvitationLifetime {
			return apperr.Field("expiresIn", "must be between %d and %d seconds", int(minInvitationLifetime.Seconds()), int(maxInvitationLifetime.Seconds()))
		}
	}
	if !o.Enabled {
		return apperr.Invalid("organization %s is disabled: enable it before inviting", o.Slug)
	}
	token := newToken()
	now := s.deps.Now()
	inv := &store.OrgInvitation{ID: uuid.NewString(), OrgID: o.ID, Email: email, Role: role,
		TokenHash: store.HashToken(token), CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(lifetime).UnixMilli()}
	link := s.deps.Issuer(realm) + InvitationPath(o.Slug, token)
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		u, err := tx.GetUserByEmail(r.Context(), realm.ID, email)
		if err == nil {
			if _, err := tx.GetOrgMember(r.Context(), o.ID, u.ID); err == nil {
				return apperr.Conflict("email", "%s is already a member of %s", email, o.Slug)
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := tx.CreateOrgInvitation(r.Context(), inv); err != nil {
			return err
		}
		return s.deps.SendInvitation(r.Context(), tx, realm, InvitationMail{To: email, Organization: o.Name, Role: role,
			Link: link, Expires: now.Add(lifetime)})
	})
	if err != nil {
		return err
	}
	s.deps.MailQueued()
	out := toInvitationRep(inv)
	out.Link = link
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+inv.ID, out)
}

// RevokeInvitation answers DELETE .../invitations/{invitationId}: an
// invitation not used yet is deleted, and its link no longer works.
func (s *Service) RevokeInvitation(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	id := mux.Vars(r)["invitationId"]
	if err := s.deps.Store.DeleteOrgInvitation(r.Context(), o.ID, id); errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("pending invitation " + id)
	} else if err != nil {
		return err
	}
	return httpx.NoContent(w)
}

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails: crypto/rand panics rather than return an error
	return base64.RawURLEncoding.EncodeToString(b)
}

// The refusals of an invitation's token. They say which it is: a person
// holding an old mail needs to know to ask for a new one.
func errInvitation(why string) error {
	return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidToken, Field: "token",
		Message: "this invitation " + why}
}

var (
	errInvitationUnknown = errInvitation("is unknown: check the link, or ask for a new invitation")
	errInvitationUsed    = errInvitation("has already been used")
	errInvitationExpired = errInvitation("has expired: ask for a new invitation")
	errInvitationEmail   = &apperr.Error{Status: http.StatusForbidden, Code: apperr.CodeForbidden,
		Message: "this invitation is for another email address: sign in with the account it was sent to"}
)

// Invitation is a live invitation of the realm's organization slug, for a
// page to show before it is accepted: unknown, used and expired tokens are
// refused, each with its own message.
func (s *Service) Invitation(ctx context.Context, realm *store.Realm, slug, token string) (*store.Organization, *store.OrgInvitation, error) {
	return s.liveInvitation(ctx, s.deps.Store, realm, slug, token)
}

func (s *Service) liveInvitation(ctx context.Context, st *store.Store, realm *store.Realm, slug, token string) (*store.Organization, *store.OrgInvitation, error) {
	if token == "" || len(token) > 256 {
		return nil, nil, errInvitationUnknown
	}
	inv, err := st.OrgInvitationByToken(ctx, store.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errInvitationUnknown
	} else if err != nil {
		return nil, nil, err
	}
	o, err := st.GetOrganizationByID(ctx, realm.ID, inv.OrgID)
	if errors.Is(err, store.ErrNotFound) || err == nil && o.Slug != slug {
		return nil, nil, errInvitationUnknown
	} else if err != nil {
		return nil, nil, err
	}
	switch {
	case inv.UsedAt != 0:
		return nil, nil, errInvitationUsed
	case inv.ExpiresAt <= s.deps.Now().UnixMilli():
		return nil, nil, errInvitationExpired
	case !o.Enabled:
		return nil, nil, apperr.Forbidden("organization %s is disabled", o.Slug)
	}
	return o, inv, nil
}

// Accept uses an invitation for a signed-in user whose email is the one it
// was sent to: they join with its role, and the token is spent, in one
// transaction.
func (s *Service) Accept(ctx context.Context, realm *store.Realm, u *store.User, slug, token string) (*store.Organization, *store.OrgMember, error) {
	var o *store.Organization
	var m *store.OrgMember
	var pending bus.Pending
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		var inv *store.OrgInvitation
		var err error
		if o, inv, err = s.liveInvitation(ctx, tx, realm, slug, token); err != nil {
			return err
		}
		if !strings.EqualFold(u.Email, inv.Email) {
			return errInvitationEmail
		}
		if pending, err = s.join(ctx, tx, realm, o, u, inv.Role, "invitation"); err != nil {
			return err
		}
		if err := tx.UseOrgInvitation(ctx, inv.ID, u.ID, s.deps.Now().UnixMilli()); errors.Is(err, store.ErrNotFound) {
			return errInvitationUsed
		} else if err != nil {
			return err
		}
		m = &store.OrgMember{User: u, Role: inv.Role, JoinedAt: s.deps.Now().UnixMilli()}
		return nil
	})
	if err == nil {
		pending.Wake()
	}
	return o, m, err
}

// AcceptInvitation answers POST .../invitations/{token}/accept for the user
// whose access token the request carries.
func (s *Service) AcceptInvitation(w http.ResponseWriter, r *http.Request, realm *store.Realm, u *store.User) error {
	vars := mux.Vars(r)
	_, m, err := s.Accept(r.Context(), realm, u, vars["slug"], vars["token"])
	if err != nil {
		return err
	}
	return httpx.OK(w, toMemberRep(m))
}
