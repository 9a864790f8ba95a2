// Package impersonation lets an administrator sign in as a user of a realm,
// as Keycloak's impersonation does: a short SSO session of the user, its
// cookie handed to the administrator's browser, which names the
// administrator in every token issued in it (RFC 8693 act) and in every
// login event recorded in it, and which the administrator ends, or which
// ends by itself at the realm's impersonationLifetime. docs/impersonation.md
// describes it.
package impersonation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// The bounds of a realm's impersonationLifetime, in seconds, and its
// default: Keycloak has no limit of its own, and a session meant for
// looking at what a user sees needs minutes, not hours.
const (
	DefaultLifetime = 900
	MinLifetime     = 60
	MaxLifetime     = 3600
)

// Login event detail keys that name the administrator acting in a session.
const (
	DetailImpersonator         = "impersonator"
	DetailImpersonatorUsername = "impersonator_username"
)

// SSO is what the hosted sign-in knows of SSO sessions, which an
// impersonation starts as a sign-in does.
type SSO interface {
	// NewSession is a new SSO session of u in realm, not yet stored, and
	// the browser cookie's value that names it.
	NewSession(r *http.Request, realm *store.Realm, u *store.User) (sess *store.Session, cookie string)
	// SetCookie gives the browser the cookie of sess, as a sign-in does.
	SetCookie(w http.ResponseWriter, realm *store.Realm, sess *store.Session, cookie string)
}

// Privileges says which admin permissions a user of a realm holds there by
// what they are: an organization's owner or admin, a service account's
// user. Impersonating them acts with those.
type Privileges interface {
	AdminPermissions(ctx context.Context, realm *store.Realm, u *store.User) (authz.Set, error)
}

// Deps is what impersonation uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// BaseURL is the server's external address, for the account page the
	// answer sends the browser to.
	BaseURL string
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// AdminRealm is the name of the realm of the administrators: its users
	// are never impersonated, and it is the impersonators' realm.
	AdminRealm string
	// Caller is the admin credential of the request.
	Caller func(r *http.Request) identity.Actor
	// CallerPermissions is what the caller's credential holds.
	CallerPermissions func(r *http.Request) authz.Set
	SSO               SSO
	Privileges        Privileges
	// LoginEvent records a login event of the realm.
	LoginEvent func(ctx context.Context, realm *store.Realm, e store.LoginEvent)
	// SessionsEnded tells the clients of ended sessions (back-channel
	// logout).
	SessionsEnded func(ctx context.Context, realm *store.Realm, ended []*store.Session)
}

// Service is impersonation: the admin API's handlers and the marking of
// login events.
type Service struct {
	deps Deps
	// any says whether an impersonation may be going on: until one has,
	// marking a login event reads nothing. Loaded once from the store.
	any     atomic.Bool
	anyOnce sync.Once
}

// New builds impersonation.
func New(d Deps) *Service { return &Service{deps: d} }

// StartRep is the answer to an impersonation, Keycloak's: the page the
// browser goes to as the user, and whether that is the administrator's own
// realm (never here: administrators have a realm of their own).
type StartRep struct {
	Redirect  string `json:"redirect"`
	SameRealm bool   `json:"sameRealm"`
}

// EventRep is what the admin event of an impersonation shows.
type EventRep struct {
	ImpersonationID      string `json:"impersonationId"`
	SessionID            string `json:"sessionId"`
	UserID               string `json:"userId"`
	ImpersonatorID       string `json:"impersonatorId"`
	ImpersonatorUsername string `json:"impersonatorUsername"`
	ImpersonatorRealm    string `json:"impersonatorRealm"`
	Started              int64  `json:"started"`
	Ends                 int64  `json:"ends"`
}

var (
	errDisabled = apperr.New(http.StatusForbidden, apperr.CodeImpersonationDisabled,
		"impersonation is off in this realm (impersonationEnabled)")
	errAdministrator = apperr.New(http.StatusForbidden, apperr.CodePrivilegedUser,
		"the users of the administrators' realm are never impersonated")
	errUserDisabled = apperr.New(http.StatusConflict, apperr.CodeUserDisabled, "the user is disabled")
)

// Impersonate answers POST /admin/realms/{realm}/users/{userId}/impersonate.
func (s *Service) Impersonate(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	if realm.Name == s.deps.AdminRealm {
		return errAdministrator
	}
	if !realm.ImpersonationEnabled {
		return errDisabled
	}
	ctx := r.Context()
	u, err := httpx.ChildOf(r, realm.ID, "userId", "user", s.deps.Store.GetUser)
	if err != nil {
		return err
	}
	if !u.Enabled {
		return errUserDisabled
	}
	held, err := s.deps.Privileges.AdminPermissions(ctx, realm, u)
	if err != nil {
		return err
	}
	caller := s.deps.CallerPermissions(r)
	for _, p := range authz.Names(held) {
		if !caller.Has(authz.Permission(p)) {
			return apperr.New(http.StatusForbidden, apperr.CodePrivilegedUser,
				"the user holds %s, which the caller lacks", p)
		}
	}
	m, err := s.start(w, r, realm, u)
	if err != nil {
		return err
	}
	httpx.NoteAudit(r, EventRep{ImpersonationID: m.ID, SessionID: m.SessionID, UserID: u.ID,
		ImpersonatorID: m.ImpersonatorID, ImpersonatorUsername: m.ImpersonatorUsername,
		ImpersonatorRealm: m.ImpersonatorRealm, Started: m.StartedAt, Ends: m.EndsAt})
	return httpx.OK(w, StartRep{Redirect: s.deps.BaseURL + "/realms/" + realm.Name + "/account"})
}

// start stores the impersonation's session and record, gives the browser
// the session's cookie and records the IMPERSONATE event.
func (s *Service) start(w http.ResponseWriter, r *http.Request, realm *store.Realm, u *store.User) (*store.Impersonation, error) {
	ctx := r.Context()
	actor := s.deps.Caller(r)
	who := actor.ID
	if who == "" {
		who = actor.Name // the bootstrap key has no ID of its own
	}
	now := s.deps.Now().UnixMilli()
	lifetime := realm.ImpersonationLifetime
	if lifetime <= 0 {
		lifetime = DefaultLifetime
	}
	sess, cookie := s.deps.SSO.NewSession(r, realm, u)
	// Nobody authenticated as the user: the session says no method.
	sess.AMR = []string{}
	sess.Impersonator = &store.Impersonator{ID: who, Username: actor.Name, EndsAt: now + int64(lifetime)*1000}
	sess.ExpiresAt = min(sess.ExpiresAt, sess.Impersonator.EndsAt)
	m := &store.Impersonation{ID: uuid.NewString(), RealmID: realm.ID, UserID: u.ID, ImpersonatorID: who,
		ImpersonatorUsername: actor.Name, ImpersonatorRealm: s.deps.AdminRealm, SessionID: sess.ID,
		StartedAt: now, EndsAt: sess.Impersonator.EndsAt}
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateSession(ctx, sess); err != nil {
			return err
		}
		return tx.CreateImpersonation(ctx, m)
	})
	if err != nil {
		return nil, fmt.Errorf("start impersonation of %s: %w", u.ID, err)
	}
	s.any.Store(true)
	s.deps.SSO.SetCookie(w, realm, sess, cookie)
	s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventImpersonate, UserID: u.ID, SessionID: sess.ID,
		IPAddress: actor.IP, Details: marks(m.ImpersonatorID, m.ImpersonatorUsername)})
	return m, nil
}

// EndBody names what impersonation/end ends: one session, or every
// impersonation of a user going on.
type EndBody struct {
	SessionID string `json:"sessionId,omitempty"`
	UserID    string `json:"userId,omitempty"`
}

// End answers POST /admin/realms/{realm}/impersonation/end: the sessions
// end with their refresh tokens, and the access tokens issued in them stop
// standing.
func (s *Service) End(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body EndBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if (body.SessionID == "") == (body.UserID == "") {
		return apperr.Field("sessionId", "give sessionId or userId, not both")
	}
	ctx := r.Context()
	now := s.deps.Now().UnixMilli()
	active, err := s.deps.Store.ActiveImpersonations(ctx, realm.ID, body.UserID, body.SessionID, now)
	if err != nil {
		return err
	}
	if len(active) == 0 {
		return apperr.NotFound("active impersonation")
	}
	for _, m := range active {
		var ended []*store.Session
		err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
			if err := tx.EndImpersonation(ctx, realm.ID, m.ID, now); err != nil {
				return err
			}
			var err error
			ended, err = tx.DeleteSession(ctx, realm.ID, m.SessionID, store.SessionSSO, now)
			if errors.Is(err, store.ErrNotFound) {
				return nil // ended already: logged out, or the user's sessions ended
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("end impersonation %s: %w", m.ID, err)
		}
		s.deps.SessionsEnded(ctx, realm, ended)
		s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventImpersonateEnd, UserID: m.UserID,
			SessionID: m.SessionID, IPAddress: s.deps.Caller(r).IP,
			Details: marks(m.ImpersonatorID, m.ImpersonatorUsername)})
	}
	return httpx.NoContent(w)
}

func marks(id, username string) map[string]string {
	return map[string]string{DetailImpersonator: id, DetailImpersonatorUsername: username}
}

// Mark names the impersonator in a login event recorded in an
// impersonation's session.
func (s *Service) Mark(ctx context.Context, e *store.LoginEvent) {
	if e.SessionID == "" || !s.mayBeOn(ctx) {
		return
	}
	if _, ok := e.Details[DetailImpersonator]; ok {
		return
	}
	m, err := s.deps.Store.ImpersonationOfSession(ctx, e.SessionID)
	if errors.Is(err, store.ErrNotFound) {
		return
	} else if err != nil {
		s.deps.Log.ErrorContext(ctx, "login event not marked: impersonation lookup failed", "session", e.SessionID, "err", err)
		return
	}
	d := marks(m.ImpersonatorID, m.ImpersonatorUsername)
	maps.Copy(d, e.Details)
	e.Details = d
}

// mayBeOn says whether an impersonation may be going on: one was started
// since the start, or the store holds one not yet over.
func (s *Service) mayBeOn(ctx context.Context) bool {
	s.anyOnce.Do(func() {
		found, err := s.deps.Store.AnyImpersonationSince(ctx, s.deps.Now().UnixMilli())
		if err != nil {
			s.deps.Log.ErrorContext(ctx, "impersonations not read; login events are checked for them", "err", err)
			found = true
		}
		if found {
			s.any.Store(true)
		}
	})
	return s.any.Load()
}

// CheckLifetime checks a realm's impersonationLifetime.
func CheckLifetime(seconds int) error {
	if seconds < MinLifetime || seconds > MaxLifetime {
		return apperr.Field("impersonationLifetime", "must be between %d and %d seconds", MinLifetime, MaxLifetime)
	}
	return nil
}
