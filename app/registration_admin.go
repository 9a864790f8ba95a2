package app

import (
	"errors"
	"net/http"
	"slices"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxFieldPatternChars = 500
	maxFieldOptions      = 100
)

var (
	fieldKeyPattern   = validate.MustPattern(`^[a-z][a-z0-9_-]*$`, 1, 64)
	registrationTypes = []string{"text", "email", "tel", "number", "date", "checkbox", "select"}
	// builtinUserFields are names a field key may not take: the user's own fields.
	builtinUserFields = []string{"id", "username", "email", "password", "firstname", "first_name", "first-name",
		"lastname", "last_name", "last-name", "enabled", "emailverified", "email_verified", "email-verified",
		"status", "attributes", "createdtimestamp", "created_at", "credentials", "requirepasswordreset"}
)

type registrationFieldRep struct {
	ID       string   `json:"id"`
	Key      string   `json:"key"`
	Label    string   `json:"label"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Pattern  string   `json:"pattern"`
	Options  []string `json:"options"`
	Enabled  bool     `json:"enabled"`
	Order    int      `json:"order"`
}

func toRegistrationFieldRep(f *store.RegistrationField) registrationFieldRep {
	opts := f.Options
	if opts == nil {
		opts = []string{}
	}
	return registrationFieldRep{ID: f.ID, Key: f.Key, Label: f.Label, Type: f.Type, Required: f.Required,
		Pattern: f.Pattern, Options: opts, Enabled: f.Enabled, Order: f.Position}
}

type registrationFieldBody struct {
	Key      *string  `json:"key"`
	Label    *string  `json:"label"`
	Type     *string  `json:"type"`
	Required *bool    `json:"required"`
	Pattern  *string  `json:"pattern"`
	Options  []string `json:"options"`
	Enabled  *bool    `json:"enabled"`
	Order    *int     `json:"order"`
}

// fieldFromBody checks a field's representation and sets f from it: key,
// label and type are required; the rest default to optional, no pattern,
// no options, enabled, order 0.
func fieldFromBody(body *registrationFieldBody, f *store.RegistrationField) error {
	switch {
	case body.Key == nil:
		return apperr.Field("key", "is required")
	case !fieldKeyPattern.MatchString(*body.Key):
		return apperr.Field("key", "must be a lowercase slug: a letter, then letters, digits, - or _, at most 64")
	case slices.Contains(builtinUserFields, *body.Key):
		return apperr.Field("key", "is a user field's name")
	case body.Label == nil || *body.Label == "":
		return apperr.Field("label", "is required")
	case body.Type == nil:
		return apperr.Field("type", "is required")
	case !slices.Contains(registrationTypes, *body.Type):
		return apperr.Field("type", "must be one of text, email, tel, number, date, checkbox, select")
	}
	if err := validate.DisplayName("label", *body.Label, 255); err != nil {
		return err
	}
	f.Key, f.Label, f.Type = *body.Key, *body.Label, *body.Type
	f.Required, f.Pattern, f.Enabled, f.Position, f.Options = false, "", true, 0, []string{}
	set(&f.Required, body.Required)
	set(&f.Pattern, body.Pattern)
	set(&f.Enabled, body.Enabled)
	set(&f.Position, body.Order)
	if err := validate.Setting("pattern", f.Pattern, maxFieldPatternChars); err != nil {
		return err
	}
	if f.Pattern != "" {
		if _, err := compileFieldPattern(f.Pattern); err != nil {
			return apperr.Field("pattern", "is not a valid regular expression: %v", err)
		}
	}
	if f.Type != "select" {
		if len(body.Options) > 0 {
			return apperr.Field("options", "are for select fields only")
		}
		return nil
	}
	if len(body.Options) == 0 || len(body.Options) > maxFieldOptions {
		return apperr.Field("options", "must list 1 to %d options", maxFieldOptions)
	}
	for i, o := range body.Options {
		if o == "" || len([]rune(o)) > 255 {
			return apperr.Field("options", "must be 1 to 255 characters each")
		}
		if err := validate.DisplayName("options", o, 255); err != nil {
			return err
		}
		if slices.Contains(body.Options[:i], o) {
			return apperr.Field("options", "must not repeat %q", o)
		}
	}
	f.Options = body.Options
	return nil
}

func fieldConflict(err error) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "key",
			Message: "a registration field with this key already exists", Cause: err}
	}
	return err
}

func (a *App) listRegistrationFields(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	fields, err := a.store.ListRegistrationFields(r.Context(), realm.ID, false)
	if err != nil {
		return err
	}
	return httpx.List(w, fields, toRegistrationFieldRep)
}

func (a *App) createRegistrationField(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var body registrationFieldBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	f := store.RegistrationField{ID: uuid.NewString(), RealmID: realm.ID, CreatedAt: a.now().UnixMilli()}
	if err := fieldFromBody(&body, &f); err != nil {
		return err
	}
	if err := a.store.CreateRegistrationField(r.Context(), &f); err != nil {
		return fieldConflict(err)
	}
	return httpx.Created(w, a.childURL(r, f.ID), toRegistrationFieldRep(&f))
}

func (a *App) registrationField(r *http.Request) (*store.Realm, *store.RegistrationField, error) {
	return realmChild(a, r, "fieldId", "registration field", a.store.GetRegistrationField)
}

// putRegistrationField replaces a field: what the body leaves out takes
// its default, as on create.
func (a *App) putRegistrationField(w http.ResponseWriter, r *http.Request) error {
	_, f, err := a.registrationField(r)
	if err != nil {
		return err
	}
	var body registrationFieldBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := fieldFromBody(&body, f); err != nil {
		return err
	}
	if err := a.store.UpdateRegistrationField(r.Context(), f); err != nil {
		return fieldConflict(err)
	}
	return httpx.OK(w, toRegistrationFieldRep(f))
}

func (a *App) deleteRegistrationField(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := a.registrationField(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteRegistrationField(r.Context(), realm.ID, f.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

type registrationSettingsRep struct {
	Moderation bool `json:"moderation"`
}

// registrationSettingsBody is what PUT /registration/admin/settings takes.
type registrationSettingsBody struct {
	Moderation *bool `json:"moderation"`
}

func (a *App) getRegistrationSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	on, err := a.store.RegistrationModeration(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.OK(w, registrationSettingsRep{Moderation: on})
}

func (a *App) putRegistrationSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var body registrationSettingsBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Moderation == nil {
		return apperr.Field("moderation", "is required")
	}
	if err := a.store.SetRegistrationModeration(r.Context(), realm.ID, *body.Moderation); err != nil {
		return err
	}
	return httpx.OK(w, registrationSettingsRep{Moderation: *body.Moderation})
}

type pendingUserRep struct {
	userRep
	Status     string            `json:"status"`
	Attributes map[string]string `json:"attributes"`
}

func (a *App) pendingUserRep(r *http.Request, u *store.User, status string) (pendingUserRep, error) {
	attrs, err := a.store.UserAttributes(r.Context(), u.ID)
	return pendingUserRep{userRep: toUserRep(u), Status: status, Attributes: attrs}, err
}

// listPendingRegistrations lists the users awaiting approval, oldest first.
func (a *App) listPendingRegistrations(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	users, err := a.store.ListUsersByStatus(r.Context(), realm.ID, store.UserPending)
	if err != nil {
		return err
	}
	reps := make([]pendingUserRep, 0, len(users))
	for _, u := range users {
		rep, err := a.pendingUserRep(r, u, store.UserPending)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	return httpx.OK(w, reps)
}

func (a *App) approveRegistration(w http.ResponseWriter, r *http.Request) error {
	return a.decideRegistration(w, r, store.UserActive)
}

// rejectRegistration keeps the user, as rejected: it cannot sign in, its
// username and email stay taken, and an administrator may delete it.
func (a *App) rejectRegistration(w http.ResponseWriter, r *http.Request) error {
	return a.decideRegistration(w, r, store.UserRejected)
}

// decideRegistration moves a pending user to status; any other user is a
// 404, so a decision is never taken twice.
func (a *App) decideRegistration(w http.ResponseWriter, r *http.Request, status string) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	id := mux.Vars(r)["userId"]
	err = a.store.ChangeUserStatus(r.Context(), realm.ID, id, store.UserPending, status)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("pending user " + id)
	} else if err != nil {
		return err
	}
	u, err := a.store.GetUser(r.Context(), realm.ID, id)
	if err != nil {
		return err
	}
	rep, err := a.pendingUserRep(r, u, status)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}
