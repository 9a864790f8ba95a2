package adminaccounts

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// AdminAccountRep is an admin account as the API shows it.
type AdminAccountRep struct {
	ID               string   `json:"id"`
	Username         string   `json:"username"`
	Email            string   `json:"email,omitempty"`
	FirstName        string   `json:"firstName,omitempty"`
	LastName         string   `json:"lastName,omitempty"`
	Enabled          bool     `json:"enabled"`
	Permissions      []string `json:"permissions"`
	Realm            string   `json:"realm,omitempty"`
	PasswordSet      bool     `json:"passwordSet"`
	TOTP             bool     `json:"totp"`
	Passkeys         int      `json:"passkeys"`
	CreatedTimestamp int64    `json:"createdTimestamp"`
	CreatedBy        string   `json:"createdBy"`
	// EnrolmentLink, in the answer to a creation without a password or to
	// a new link, is where the administrator chooses a password. It is
	// never shown again.
	EnrolmentLink      string `json:"enrolmentLink,omitempty"`
	EnrolmentExpiresAt int64  `json:"enrolmentExpiresAt,omitempty"`
}

func (s *Service) rep(ctx context.Context, sys *store.Realm, a *store.AdminAccount) (*AdminAccountRep, error) {
	u, err := s.deps.Store.GetUser(ctx, sys.ID, a.UserID)
	if err != nil {
		return nil, err
	}
	rep := &AdminAccountRep{ID: u.ID, Username: u.Username, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
		Enabled: u.Enabled, Permissions: a.Permissions, PasswordSet: u.PasswordHash != "", CreatedTimestamp: u.CreatedAt,
		CreatedBy: a.CreatedBy}
	if a.RealmID != "" {
		realm, err := s.deps.Store.GetRealmByID(ctx, a.RealmID)
		if err != nil {
			return nil, err
		}
		rep.Realm = realm.Name
	}
	totp, err := s.deps.Core.UserTOTP(ctx, sys, u.ID)
	if err != nil {
		return nil, err
	}
	rep.TOTP = totp != nil
	keys, err := s.deps.Store.WebAuthnCredentials(ctx, sys.ID, u.ID)
	if err != nil {
		return nil, err
	}
	rep.Passkeys = len(keys)
	return rep, nil
}

// List answers every admin account.
func (s *Service) List(w http.ResponseWriter, r *http.Request) error {
	sys, err := s.deps.SystemRealm(r.Context())
	if err != nil {
		return err
	}
	accounts, err := s.deps.Store.ListAdminAccounts(r.Context())
	if err != nil {
		return err
	}
	out := make([]*AdminAccountRep, 0, len(accounts))
	for _, a := range accounts {
		rep, err := s.rep(r.Context(), sys, a)
		if err != nil {
			return err
		}
		out = append(out, rep)
	}
	return httpx.OK(w, out)
}

// account loads the account of the path's {id}.
func (s *Service) account(r *http.Request) (*store.Realm, *store.AdminAccount, error) {
	sys, err := s.deps.SystemRealm(r.Context())
	if err != nil {
		return nil, nil, err
	}
	a, err := httpx.Child(r, "id", "admin account", s.deps.Store.GetAdminAccount)
	return sys, a, err
}

// Get answers one account.
func (s *Service) Get(w http.ResponseWriter, r *http.Request) error {
	sys, a, err := s.account(r)
	if err != nil {
		return err
	}
	rep, err := s.rep(r.Context(), sys, a)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// AdminAccountCreate is the body that creates an account.
type AdminAccountCreate struct {
	Username    *string  `json:"username"`
	Email       string   `json:"email"`
	FirstName   string   `json:"firstName"`
	LastName    string   `json:"lastName"`
	Password    *string  `json:"password"`
	Permissions []string `json:"permissions"`
	Realm       string   `json:"realm"`
}

// NewAccount is an account to make: the CLI's and the API's.
type NewAccount struct {
	Username, Email, FirstName, LastName string
	Password                             *string  // nil: an enrolment link is made instead
	Permissions                          []string // nil: every permission
	Realm                                string   // the realm's name; "" for any
	CreatedBy                            string
}

// Create makes an account: {"username", "email"?, "firstName"?,
// "lastName"?, "password"?, "permissions"? (every one when left out),
// "realm"?}. Without a password the answer holds a one-time enrolment
// link.
func (s *Service) Create(w http.ResponseWriter, r *http.Request) error {
	var body AdminAccountCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Username == nil || *body.Username == "" {
		return apperr.Field("username", "is required")
	}
	if body.Permissions != nil && len(body.Permissions) == 0 {
		return apperr.Field("permissions", "must name at least one permission, or leave it out for every one")
	}
	na := NewAccount{Username: *body.Username, Email: body.Email, FirstName: body.FirstName, LastName: body.LastName,
		Password: body.Password, Permissions: body.Permissions, Realm: body.Realm}
	actor := s.deps.Caller(r)
	na.CreatedBy = actor.Type + ":" + actor.Name
	perms, realmID, err := s.checkGrant(r.Context(), na.Permissions, na.Realm)
	if err != nil {
		return err
	}
	if err := s.callerHolds(r, perms); err != nil {
		return err
	}
	rep, err := s.create(r.Context(), na, perms, realmID)
	if err != nil {
		return err
	}
	s.deps.Log.InfoContext(r.Context(), "admin account created", "account", rep.ID, "username", rep.Username, "by", na.CreatedBy)
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+rep.ID, rep)
}

// CreateAccount makes an account outside any request: the command line's
// `idenplane admin create`.
func (s *Service) CreateAccount(ctx context.Context, na NewAccount) (*AdminAccountRep, error) {
	perms, realmID, err := s.checkGrant(ctx, na.Permissions, na.Realm)
	if err != nil {
		return nil, err
	}
	return s.create(ctx, na, perms, realmID)
}

func (s *Service) create(ctx context.Context, na NewAccount, perms []string, realmID string) (*AdminAccountRep, error) {
	sys, err := s.deps.SystemRealm(ctx)
	if err != nil {
		return nil, err
	}
	nu := identity.NewUser{Username: na.Username, Email: na.Email, FirstName: na.FirstName, LastName: na.LastName,
		EmailVerified: na.Email != ""}
	if na.Password != nil {
		hash, err := s.deps.Core.NewPasswordHash(ctx, sys, &store.User{Username: na.Username, Email: na.Email}, *na.Password)
		if err != nil {
			return nil, err
		}
		nu.PasswordHash = hash
	}
	var link string
	var expires int64
	var u *store.User
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if u, err = s.deps.Core.CreateUser(ctx, tx, sys, nu); err != nil {
			return err
		}
		a := &store.AdminAccount{UserID: u.ID, Permissions: perms, RealmID: realmID, CreatedAt: s.deps.Now().UnixMilli(),
			CreatedBy: na.CreatedBy}
		if err := tx.CreateAdminAccount(ctx, a); err != nil {
			return err
		}
		if na.Password == nil {
			link, expires, err = s.enrolment(ctx, tx, sys, u)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	a, err := s.deps.Store.GetAdminAccount(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	rep, err := s.rep(ctx, sys, a)
	if err != nil {
		return nil, err
	}
	rep.EnrolmentLink, rep.EnrolmentExpiresAt = link, expires
	return rep, nil
}

// enrolment makes u's one-time link to choose a password (voiding any
// earlier one), through tx.
func (s *Service) enrolment(ctx context.Context, tx *store.Store, sys *store.Realm, u *store.User) (string, int64, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", 0, err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := s.deps.Now()
	expires := now.Add(EnrolmentLifetime).UnixMilli()
	if err := tx.CreateActionToken(ctx, &store.ActionToken{Hash: store.HashToken(token), RealmID: sys.ID, UserID: u.ID,
		Kind: store.ActionResetPassword, Email: u.Email, CreatedAt: now.UnixMilli(), ExpiresAt: expires}); err != nil {
		return "", 0, err
	}
	link := s.deps.BaseURL + "/realms/" + url.PathEscape(sys.Name) + "/reset-password?" + url.Values{"token": {token}}.Encode()
	return link, expires, nil
}

// checkGrant checks what an account is to hold: known names (every one
// when nil), and for an account confined to a realm, no system permission.
// It answers the names to store and the realm's ID.
func (s *Service) checkGrant(ctx context.Context, names []string, realmName string) ([]string, string, error) {
	perms := []string{authz.AllName}
	if names != nil {
		var err error
		if perms, err = authz.ParseGrant(names); err != nil {
			return nil, "", apperr.Field("permissions", "%v", err)
		}
	}
	if realmName == "" {
		return perms, "", nil
	}
	realm, err := s.deps.Store.GetRealm(ctx, realmName)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", apperr.Field("realm", "no realm %q", realmName)
	} else if err != nil {
		return nil, "", err
	}
	sys, err := s.deps.SystemRealm(ctx)
	if err != nil {
		return nil, "", err
	}
	if realm.ID == sys.ID {
		return nil, "", apperr.Field("realm", "an account confined to the system realm would administer the administrators: give it %s instead", authz.SystemManage)
	}
	if err := authz.CheckConfined(perms); err != nil {
		return nil, "", apperr.Field("permissions", "%v: list the realm's permissions", err)
	}
	return perms, realm.ID, nil
}

// callerHolds refuses to grant what the caller does not hold: whoever
// signs in to the account acts with it.
func (s *Service) callerHolds(r *http.Request, perms []string) error {
	held := s.deps.CallerPermissions(r)
	want, err := authz.ParseStored(perms)
	if err != nil {
		return err
	}
	for _, p := range authz.Names(want) {
		if !held.Has(authz.Permission(p)) {
			return apperr.Forbidden("the account would hold the permission %s, which this credential lacks", p)
		}
	}
	return nil
}

// AdminAccountUpdate is the body of PUT: the fields it names change.
type AdminAccountUpdate struct {
	Enabled     *bool     `json:"enabled"`
	Permissions *[]string `json:"permissions"`
	Realm       *string   `json:"realm"`
}

// Update changes {"enabled"?, "permissions"?, "realm"? ("" for any)}. A
// disable ends the account's sessions and tokens; nobody disables or
// narrows their own account (another administrator does).
func (s *Service) Update(w http.ResponseWriter, r *http.Request) error {
	var body AdminAccountUpdate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	sys, a, err := s.account(r)
	if err != nil {
		return err
	}
	if s.deps.Caller(r).ID == a.UserID {
		return apperr.New(http.StatusConflict, apperr.CodeInvalidState,
			"an administrator does not change their own account: another administrator does, so nobody locks themselves out")
	}
	names, realmName := a.Permissions, ""
	if a.RealmID != "" {
		realm, err := s.deps.Store.GetRealmByID(ctx, a.RealmID)
		if err != nil {
			return err
		}
		realmName = realm.Name
	}
	if body.Permissions != nil {
		if len(*body.Permissions) == 0 {
			return apperr.Field("permissions", "must name at least one permission, or %q for every one", authz.AllName)
		}
		names = *body.Permissions
	}
	if body.Realm != nil {
		realmName = *body.Realm
	}
	perms, realmID, err := s.checkGrant(ctx, names, realmName)
	if err != nil {
		return err
	}
	// Changing an account someone else holds more than the caller would
	// hand out what the caller lacks.
	if err := s.callerHolds(r, a.Permissions); err != nil {
		return err
	}
	if err := s.callerHolds(r, perms); err != nil {
		return err
	}
	var ended []*store.Session
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		a.Permissions, a.RealmID = perms, realmID
		if err := tx.UpdateAdminAccount(ctx, a); err != nil {
			return err
		}
		if body.Enabled == nil {
			return nil
		}
		u, err := tx.GetUser(ctx, sys.ID, a.UserID)
		if err != nil {
			return err
		}
		if u.Enabled == *body.Enabled {
			return nil
		}
		u.Enabled = *body.Enabled
		ended, err = s.deps.Core.UpdateUser(ctx, tx, u)
		return err
	})
	if err != nil {
		return err
	}
	s.deps.SessionsEnded(ctx, sys, ended)
	rep, err := s.rep(ctx, sys, a)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// Delete removes an account and its user: its sessions and tokens end.
func (s *Service) Delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sys, a, err := s.account(r)
	if err != nil {
		return err
	}
	if s.deps.Caller(r).ID == a.UserID {
		return apperr.New(http.StatusConflict, apperr.CodeInvalidState, "an administrator does not delete their own account: another administrator does")
	}
	if err := s.callerHolds(r, a.Permissions); err != nil {
		return err
	}
	var ended []*store.Session
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		u, err := tx.GetUser(ctx, sys.ID, a.UserID)
		if err != nil {
			return err
		}
		if ended, err = s.deps.Core.EndUserAccess(ctx, tx, sys.ID, u.ID); err != nil {
			return err
		}
		return s.deps.Core.DeleteUser(ctx, tx, sys, u)
	})
	if err != nil {
		return err
	}
	s.deps.SessionsEnded(ctx, sys, ended)
	return httpx.NoContent(w)
}

// AdminSessionRep is one sign-in session of an administrator.
type AdminSessionRep struct {
	ID         string   `json:"id"`
	IPAddress  string   `json:"ipAddress"`
	Start      int64    `json:"start"`
	LastAccess int64    `json:"lastAccess"`
	Expires    int64    `json:"expires"`
	AMR        []string `json:"amr"`
}

// Sessions lists the account's live sign-in sessions.
func (s *Service) Sessions(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sys, a, err := s.account(r)
	if err != nil {
		return err
	}
	sessions, err := s.deps.Store.ListUserSessions(ctx, sys.ID, a.UserID, s.deps.Now().UnixMilli())
	if err != nil {
		return err
	}
	out := []AdminSessionRep{}
	for _, ss := range sessions {
		if ss.Kind != store.SessionSSO {
			continue
		}
		out = append(out, AdminSessionRep{ID: ss.ID, IPAddress: ss.IPAddress, Start: ss.StartedAt, LastAccess: ss.LastAccessAt,
			Expires: ss.ExpiresAt, AMR: ss.AMR})
	}
	return httpx.OK(w, out)
}

// EndSessions ends every session of the account, and the tokens of each.
func (s *Service) EndSessions(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sys, a, err := s.account(r)
	if err != nil {
		return err
	}
	var ended []*store.Session
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		ended, err = s.deps.Core.EndUserAccess(ctx, tx, sys.ID, a.UserID)
		return err
	})
	if err != nil {
		return err
	}
	s.deps.SessionsEnded(ctx, sys, ended)
	return httpx.NoContent(w)
}

// Enrol makes a new one-time enrolment link (the earlier one stops
// working), for an administrator who lost theirs or their password.
func (s *Service) Enrol(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sys, a, err := s.account(r)
	if err != nil {
		return err
	}
	if err := s.callerHolds(r, a.Permissions); err != nil {
		return err
	}
	u, err := s.deps.Store.GetUser(ctx, sys.ID, a.UserID)
	if err != nil {
		return err
	}
	if !u.Enabled {
		return apperr.New(http.StatusConflict, apperr.CodeInvalidState, "the account is disabled: enable it first")
	}
	link, expires, err := s.enrolment(ctx, s.deps.Store, sys, u)
	if err != nil {
		return err
	}
	return httpx.OK(w, Enrolment{Link: link, ExpiresAt: expires})
}

// Enrolment is a new one-time enrolment link and when it stops working
// (Unix milliseconds).
type Enrolment struct {
	Link      string `json:"enrolmentLink"`
	ExpiresAt int64  `json:"enrolmentExpiresAt"`
}
