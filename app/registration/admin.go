package registration

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

// RegistrationFieldRep is a registration field as the admin API shows it.
type RegistrationFieldRep struct {
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

func toFieldRep(f *store.RegistrationField) RegistrationFieldRep {
	opts := f.Options
	if opts == nil {
		opts = []string{}
	}
	return RegistrationFieldRep{ID: f.ID, Key: f.Key, Label: f.Label, Type: f.Type, Required: f.Required,
		Pattern: f.Pattern, Options: opts, Enabled: f.Enabled, Order: f.Position}
}

// RegistrationFieldBody is what creating or replacing a field takes.
type RegistrationFieldBody struct {
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
func fieldFromBody(body *RegistrationFieldBody, f *store.RegistrationField) error {
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

// ListFields lists the realm's registration fields, disabled ones too.
func (s *Service) ListFields(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	fields, err := s.deps.Store.ListRegistrationFields(r.Context(), realm.ID, false)
	if err != nil {
		return err
	}
	return httpx.List(w, fields, toFieldRep)
}

// CreateField adds a field to the registration form.
func (s *Service) CreateField(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body RegistrationFieldBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	f := store.RegistrationField{ID: uuid.NewString(), RealmID: realm.ID, CreatedAt: s.deps.Now().UnixMilli()}
	if err := fieldFromBody(&body, &f); err != nil {
		return err
	}
	if err := s.deps.Store.CreateRegistrationField(r.Context(), &f); err != nil {
		return fieldConflict(err)
	}
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+f.ID, toFieldRep(&f))
}

// field loads the path's realm and the registration field it names.
func (s *Service) field(r *http.Request) (*store.Realm, *store.RegistrationField, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	f, err := httpx.ChildOf(r, realm.ID, "fieldId", "registration field", s.deps.Store.GetRegistrationField)
	return realm, f, err
}

// PutField replaces a field: what the body leaves out takes its default,
// as on create.
func (s *Service) PutField(w http.ResponseWriter, r *http.Request) error {
	_, f, err := s.field(r)
	if err != nil {
		return err
	}
	var body RegistrationFieldBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := fieldFromBody(&body, f); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateRegistrationField(r.Context(), f); err != nil {
		return fieldConflict(err)
	}
	return httpx.OK(w, toFieldRep(f))
}

// DeleteField removes a field from the registration form.
func (s *Service) DeleteField(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.field(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteRegistrationField(r.Context(), realm.ID, f.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// RegistrationSettingsRep is the realm's registration settings.
type RegistrationSettingsRep struct {
	Moderation bool `json:"moderation"`
}

// RegistrationSettingsBody is what PUT /registration/admin/settings takes.
type RegistrationSettingsBody struct {
	Moderation *bool `json:"moderation"`
}

// GetSettings answers the realm's registration settings.
func (s *Service) GetSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	on, err := s.deps.Store.RegistrationModeration(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.OK(w, RegistrationSettingsRep{Moderation: on})
}

// PutSettings changes the realm's registration settings.
func (s *Service) PutSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body RegistrationSettingsBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Moderation == nil {
		return apperr.Field("moderation", "is required")
	}
	if err := s.deps.Store.SetRegistrationModeration(r.Context(), realm.ID, *body.Moderation); err != nil {
		return err
	}
	return httpx.OK(w, RegistrationSettingsRep{Moderation: *body.Moderation})
}

// pendingUser is u with its status and registration attributes, as the
// admin API shows a pending user.
func (s *Service) pendingUser(r *http.Request, u *store.User, status string) (any, error) {
	attrs, err := s.deps.Store.UserAttributes(r.Context(), u.ID)
	if err != nil {
		return nil, err
	}
	return s.deps.PendingUserRep(u, status, attrs), nil
}

// ListPending lists the users awaiting approval, oldest first.
func (s *Service) ListPending(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	users, err := s.deps.Store.ListUsersByStatus(r.Context(), realm.ID, store.UserPending)
	if err != nil {
		return err
	}
	reps := make([]any, 0, len(users))
	for _, u := range users {
		rep, err := s.pendingUser(r, u, store.UserPending)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	return httpx.OK(w, reps)
}

// Approve makes a pending user active.
func (s *Service) Approve(w http.ResponseWriter, r *http.Request) error {
	return s.decide(w, r, store.UserActive)
}

// Reject keeps the user, as rejected: it cannot sign in, its username and
// email stay taken, and an administrator may delete it.
func (s *Service) Reject(w http.ResponseWriter, r *http.Request) error {
	return s.decide(w, r, store.UserRejected)
}

// decide moves a pending user to status; any other user is a 404, so a
// decision is never taken twice.
func (s *Service) decide(w http.ResponseWriter, r *http.Request, status string) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	id := mux.Vars(r)["userId"]
	err = s.deps.Store.ChangeUserStatus(r.Context(), realm.ID, id, store.UserPending, status)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("pending user " + id)
	} else if err != nil {
		return err
	}
	u, err := s.deps.Store.GetUser(r.Context(), realm.ID, id)
	if err != nil {
		return err
	}
	rep, err := s.pendingUser(r, u, status)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}
