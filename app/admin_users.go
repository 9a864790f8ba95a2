package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	minUsernameLength = 2
	maxUsernameLength = 255
	minPasswordLength = 8
	maxPasswordLength = 256
)

type userRep struct {
	ID                   string `json:"id"`
	Username             string `json:"username"`
	Email                string `json:"email,omitempty"`
	FirstName            string `json:"firstName,omitempty"`
	LastName             string `json:"lastName,omitempty"`
	Enabled              bool   `json:"enabled"`
	EmailVerified        bool   `json:"emailVerified"`
	RequirePasswordReset bool   `json:"requirePasswordReset"`
	CreatedTimestamp     int64  `json:"createdTimestamp"`
}

func toUserRep(u *store.User) userRep {
	return userRep{ID: u.ID, Username: u.Username, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
		Enabled: u.Enabled, EmailVerified: u.EmailVerified, RequirePasswordReset: u.RequirePasswordReset,
		CreatedTimestamp: u.CreatedAt}
}

type userCreate struct {
	Username             *string `json:"username"`
	Email                *string `json:"email"`
	FirstName            *string `json:"firstName"`
	LastName             *string `json:"lastName"`
	Enabled              *bool   `json:"enabled"`
	EmailVerified        *bool   `json:"emailVerified"`
	RequirePasswordReset *bool   `json:"requirePasswordReset"`
	Password             *string `json:"password"`
}

// validateUser checks and normalizes the fields of a user about to be stored.
func validateUser(u *store.User) error {
	if err := validate.Identifier("username", u.Username, maxUsernameLength); err != nil {
		return err
	}
	u.Username = strings.ToLower(strings.TrimSpace(u.Username))
	if utf8.RuneCountInString(u.Username) < minUsernameLength {
		return apperr.Field("username", "must be at least %d characters", minUsernameLength)
	}
	if strings.ContainsFunc(u.Username, unicode.IsSpace) {
		return apperr.Field("username", "must not contain spaces")
	}
	if u.Email != "" {
		email, err := validate.NormalizeEmail(u.Email)
		if err != nil {
			return err
		}
		u.Email = email
	}
	if err := validate.PersonName("firstName", u.FirstName, 255); err != nil {
		return err
	}
	return validate.PersonName("lastName", u.LastName, 255)
}

func userConflict(err error) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && (ce.Column == "username" || ce.Column == "email") {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: ce.Column,
			Message: "a user with this " + ce.Column + " already exists", Cause: err}
	}
	return err
}

func (a *App) createUser(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var body userCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Username == nil {
		return apperr.Field("username", "is required")
	}
	u := store.User{ID: uuid.NewString(), RealmID: realm.ID, Enabled: true, CreatedAt: a.now().UnixMilli()}
	set(&u.Username, body.Username)
	set(&u.Email, body.Email)
	set(&u.FirstName, body.FirstName)
	set(&u.LastName, body.LastName)
	set(&u.Enabled, body.Enabled)
	set(&u.EmailVerified, body.EmailVerified)
	set(&u.RequirePasswordReset, body.RequirePasswordReset)
	if err := validateUser(&u); err != nil {
		return err
	}
	if body.Password != nil {
		// u has no ID for the policy yet: a new user has no history.
		policyUser := u
		policyUser.ID = ""
		if u.PasswordHash, err = a.newPasswordHash(r.Context(), realm, &policyUser, *body.Password); err != nil {
			return err
		}
		u.PasswordChangedAt = u.CreatedAt
	}
	if err := a.store.CreateUser(r.Context(), &u); err != nil {
		return userConflict(err)
	}
	w.Header().Set("Location", a.cfg.BaseURL+r.URL.Path+"/"+u.ID)
	httpx.WriteJSON(w, http.StatusCreated, toUserRep(&u))
	return nil
}

func (a *App) listUsers(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.UserFilter{Search: q.Get("search"), Username: q.Get("username"), Email: q.Get("email"), Limit: httpx.DefaultPageSize}
	if f.Skip, err = httpx.IntParam(q.Get("skip"), "skip", 0, 0, 1<<31-1); err != nil {
		return err
	}
	if f.Limit, err = httpx.IntParam(q.Get("limit"), "limit", httpx.DefaultPageSize, 1, httpx.MaxPageSize); err != nil {
		return err
	}
	if f.Exact, err = httpx.BoolParam(q.Get("exact"), "exact"); err != nil {
		return err
	}
	if v := q.Get("enabled"); v != "" {
		enabled, err := httpx.BoolParam(v, "enabled")
		if err != nil {
			return err
		}
		f.Enabled = &enabled
	}
	f.NoTotal = true
	users, _, err := a.store.ListUsers(r.Context(), realm.ID, f)
	if err != nil {
		return err
	}
	// Counting a large realm costs more than its page; the count is
	// cached until the next write to users (or cacheTTL).
	key := fmt.Sprintf("%s\x00%q\x00%q\x00%q\x00%t\x00", realm.ID, f.Search, f.Username, f.Email, f.Exact)
	if f.Enabled != nil {
		key += strconv.FormatBool(*f.Enabled)
	}
	total, err := cached(a.store, a.cache.userCounts, key, func() (int, error) {
		return a.store.CountUsers(r.Context(), realm.ID, f)
	})
	if err != nil {
		return err
	}
	reps := make([]userRep, len(users))
	for i, u := range users {
		reps[i] = toUserRep(u)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"total": total, "users": reps})
	return nil
}

// user loads the realm and the user named in the path.
func (a *App) user(r *http.Request) (*store.Realm, *store.User, error) {
	realm, err := a.realm(r)
	if err != nil {
		return nil, nil, err
	}
	id := mux.Vars(r)["userId"]
	u, err := a.store.GetUser(r.Context(), realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apperr.NotFound("user " + id)
	}
	return realm, u, err
}

func (a *App) getUser(w http.ResponseWriter, r *http.Request) error {
	_, u, err := a.user(r)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toUserRep(u))
	return nil
}

type userUpdate struct {
	Username             string `json:"username"`
	Email                string `json:"email"`
	FirstName            string `json:"firstName"`
	LastName             string `json:"lastName"`
	Enabled              bool   `json:"enabled"`
	EmailVerified        bool   `json:"emailVerified"`
	RequirePasswordReset bool   `json:"requirePasswordReset"`
}

func userUpdateDefaults(u *store.User) map[string]any {
	// username has no default: null keeps the stored one, and so fails no check.
	return map[string]any{"username": u.Username, "email": nil, "firstName": nil, "lastName": nil,
		"enabled": true, "emailVerified": false, "requirePasswordReset": false}
}

func (a *App) putUser(w http.ResponseWriter, r *http.Request) error { return a.updateUser(w, r, false) }
func (a *App) patchUser(w http.ResponseWriter, r *http.Request) error {
	return a.updateUser(w, r, true)
}

func (a *App) updateUser(w http.ResponseWriter, r *http.Request, merge bool) error {
	_, u, err := a.user(r)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	defaults := userUpdateDefaults(u)
	current, err := httpx.AsJSONMap(toUserRep(u), defaults)
	if err != nil {
		return err
	}
	var upd userUpdate
	if err := httpx.Update(body, current, defaults, merge, &upd); err != nil {
		return err
	}
	u.Username, u.Email, u.FirstName, u.LastName = upd.Username, upd.Email, upd.FirstName, upd.LastName
	u.Enabled, u.EmailVerified, u.RequirePasswordReset = upd.Enabled, upd.EmailVerified, upd.RequirePasswordReset
	if err := validateUser(u); err != nil {
		return err
	}
	if err := a.store.UpdateUser(r.Context(), u); err != nil {
		return userConflict(err)
	}
	httpx.WriteJSON(w, http.StatusOK, toUserRep(u))
	return nil
}

func (a *App) deleteUser(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	if err := removeUser(r.Context(), a.store, realm, u); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// removeUser deletes a person; what hangs off them (sessions and tokens,
// consents, memberships, attributes, a scheduled deletion) goes by
// cascade. The admin API and the account deletion job both delete here.
func removeUser(ctx context.Context, st *store.Store, realm *store.Realm, u *store.User) error {
	if u.ServiceAccountClientID != "" {
		return apperr.Invalid("user %s is a client's service account: remove client_credentials from the client instead", u.Username)
	}
	return st.DeleteUser(ctx, realm.ID, u.ID)
}

func (a *App) resetPassword(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	var body struct {
		Password  *string `json:"password"`
		Temporary *bool   `json:"temporary"` // as in Keycloak: the user must change it at next login
	}
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Password == nil {
		return apperr.Field("password", "is required")
	}
	hash, err := a.newPasswordHash(r.Context(), realm, u, *body.Password)
	if err != nil {
		return err
	}
	temporary := body.Temporary != nil && *body.Temporary
	if err := a.setPassword(r.Context(), a.store, realm, u.ID, hash, temporary); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
