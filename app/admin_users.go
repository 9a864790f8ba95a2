package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
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
	// Attributes are the values of the realm's custom attributes, in the
	// answers about one user (admin_user_attributes.go).
	Attributes map[string][]string `json:"attributes,omitempty"`
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
	// Credentials is Keycloak's way of giving the first password, so that
	// its scripts work unchanged: one {"type": "password", "value",
	// "temporary"?}. A realm import's users have credentials of their own
	// (userImport), which take the name's place.
	Credentials []keycloakCredential `json:"credentials"`
	// Attributes are custom attribute values (admin_user_attributes.go).
	Attributes json.RawMessage `json:"attributes"`
}

type keycloakCredential struct {
	Type      string `json:"type"`
	Value     string `json:"value"`
	Temporary bool   `json:"temporary"`
}

// credentialsPassword takes the first password from a Keycloak
// credentials array into body's password, a temporary one asking for a
// change at the next sign-in.
func (body *userCreate) credentialsPassword() error {
	switch {
	case body.Credentials == nil:
		return nil
	case body.Password != nil:
		return apperr.Field("credentials", "give the password in password or in credentials, not both")
	case len(body.Credentials) != 1:
		return apperr.Field("credentials", "must hold exactly one credential, of type password")
	}
	c := body.Credentials[0]
	if c.Type != "password" {
		return apperr.Field("credentials[0].type", "only password is set here; second factors are enrolled by their user")
	}
	if c.Value == "" {
		return apperr.Field("credentials[0].value", "is required")
	}
	body.Password = &c.Value
	if c.Temporary {
		temporary := true
		body.RequirePasswordReset = &temporary
	}
	return nil
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
	if err := body.credentialsPassword(); err != nil {
		return err
	}
	nu := identity.NewUser{Password: body.Password}
	set(&nu.Username, body.Username)
	set(&nu.Email, body.Email)
	set(&nu.FirstName, body.FirstName)
	set(&nu.LastName, body.LastName)
	set(&nu.EmailVerified, body.EmailVerified)
	set(&nu.RequirePasswordReset, body.RequirePasswordReset)
	nu.Disabled = body.Enabled != nil && !*body.Enabled
	values, err := userAttributeValues(body.Attributes)
	if err != nil {
		return err
	}
	var u *store.User
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if u, err = a.id.CreateUser(r.Context(), tx, realm, nu); err != nil {
			return err
		}
		return a.setUserAttributes(r.Context(), tx, realm.ID, u, values)
	})
	if err != nil {
		return err
	}
	rep, err := a.withAttributes(r.Context(), realm.ID, u)
	if err != nil {
		return err
	}
	w.Header().Set("Location", a.cfg.BaseURL+r.URL.Path+"/"+u.ID)
	httpx.WriteJSON(w, http.StatusCreated, rep)
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
	// cached until the next write to users (or the lookup cache's lifetime).
	key := fmt.Sprintf("%s\x00%q\x00%q\x00%q\x00%t\x00", realm.ID, f.Search, f.Username, f.Email, f.Exact)
	if f.Enabled != nil {
		key += strconv.FormatBool(*f.Enabled)
	}
	total, err := store.Cached(a.store, a.cache.userCounts, key, func() (int, error) {
		return a.store.CountUsers(r.Context(), realm.ID, f)
	})
	if err != nil {
		return err
	}
	reps := make([]userRep, len(users))
	for i, u := range users {
		reps[i] = toUserRep(u)
	}
	return httpx.OK(w, userPage{Total: total, Users: reps})
}

// userPage is a page of the users a search finds, with how many it finds.
type userPage struct {
	Total int       `json:"total"`
	Users []userRep `json:"users"`
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
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	rep, err := a.withAttributes(r.Context(), realm.ID, u)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, rep)
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
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	body, rawAttrs, err := splitAttributes(body) // admin_user_attributes.go
	if err != nil {
		return err
	}
	values, err := userAttributeValues(rawAttrs)
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
	var ended []*store.Session
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if ended, err = a.id.UpdateUser(r.Context(), tx, u); err != nil {
			return err
		}
		return a.setUserAttributes(r.Context(), tx, realm.ID, u, values)
	})
	if err != nil {
		return err
	}
	a.backchannelLogout(r.Context(), realm, ended)
	rep, err := a.withAttributes(r.Context(), realm.ID, u)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, rep)
	return nil
}

func (a *App) deleteUser(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	if err := a.id.DeleteUser(r.Context(), a.store, realm, u); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// passwordReset is the body of PUT .../reset-password.
type passwordReset struct {
	Password  *string `json:"password"`
	Temporary *bool   `json:"temporary"` // as in Keycloak: the user must change it at next login
}

func (a *App) resetPassword(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	var body passwordReset
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Password == nil {
		return apperr.Field("password", "is required")
	}
	hash, err := a.id.NewPasswordHash(r.Context(), realm, u, *body.Password)
	if err != nil {
		return err
	}
	temporary := body.Temporary != nil && *body.Temporary
	// An admin's reset logs the user out everywhere, as in Keycloak: whoever
	// held the old password holds no session or token of it.
	var ended []*store.Session
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if err := a.id.SetPassword(r.Context(), tx, realm, u.ID, hash, temporary); err != nil {
			return err
		}
		ended, err = a.id.EndUserAccess(r.Context(), tx, realm.ID, u.ID)
		return err
	})
	if err != nil {
		return err
	}
	a.backchannelLogout(r.Context(), realm, ended)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
