package app

import (
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/store"
)

// Self-service registration. Per-address limits over the throttle's
// 15-minute window; register and resend count every attempt, verify-email
// only failed ones.
const (
	registerLimitPerIP     = 10
	resendLimitPerIP       = 10
	resendLimitPerEmail    = 3
	verifyEmailLimitPerIP  = 20
	maxAttributeValueChars = 1000
)

var telPattern = regexp.MustCompile(`^\+?[0-9 ()./-]{3,30}$`)

// registrationRoutes mounts the public registration endpoints on r and the
// administration ones through admin, which requires admin credentials.
func (a *App) registrationRoutes(r *mux.Router, admin routeAdder) {
	public := func(method, path string, h handlerFunc) {
		r.Handle(path, a.handle(h)).Methods(method)
	}
	public(http.MethodGet, "/realms/{realm}/registration/fields", a.registrationFormFields)
	public(http.MethodPost, "/realms/{realm}/registration/register", a.register)
	public(http.MethodPost, "/realms/{realm}/registration/verify-email", a.registrationVerifyEmail)
	public(http.MethodPost, "/realms/{realm}/registration/resend-verification", a.registrationResend)

	admin(http.MethodGet, "/realms/{realm}/registration/admin/fields", a.listRegistrationFields)
	admin(http.MethodPost, "/realms/{realm}/registration/admin/fields", a.createRegistrationField)
	admin(http.MethodPut, "/realms/{realm}/registration/admin/fields/{fieldId}", a.putRegistrationField)
	admin(http.MethodDelete, "/realms/{realm}/registration/admin/fields/{fieldId}", a.deleteRegistrationField)
	admin(http.MethodGet, "/realms/{realm}/registration/admin/settings", a.getRegistrationSettings)
	admin(http.MethodPut, "/realms/{realm}/registration/admin/settings", a.putRegistrationSettings)
	admin(http.MethodGet, "/realms/{realm}/registration/pending", a.listPendingRegistrations)
	admin(http.MethodPost, "/realms/{realm}/registration/approve/{userId}", a.approveRegistration)
	admin(http.MethodPost, "/realms/{realm}/registration/reject/{userId}", a.rejectRegistration)
}

// registrationRealm is the enabled realm of a public registration request.
func (a *App) registrationRealm(r *http.Request) (*store.Realm, error) {
	realm, err := a.realm(r)
	if err != nil {
		return nil, err
	}
	if !realm.Enabled {
		return nil, notFound("realm " + realm.Name)
	}
	return realm, nil
}

// registrationThrottled answers 429 when key has used its limit, and
// otherwise counts this attempt when count is set.
func (a *App) registrationThrottled(w http.ResponseWriter, limit int, count bool, keys ...string) error {
	var wait time.Duration
	for _, k := range keys {
		wait = max(wait, a.loginThrottle.wait(k, limit))
	}
	if wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		return errorf(http.StatusTooManyRequests, "too_many_requests", "too many attempts; try again later")
	}
	if count {
		for _, k := range keys {
			a.loginThrottle.fail(k)
		}
	}
	return nil
}

func registrationDisabled(realm *store.Realm) error {
	if !realm.RegistrationAllowed {
		return errorf(http.StatusForbidden, "registration_disabled", "realm %s does not allow registration", realm.Name)
	}
	return nil
}

type registrationFormField struct {
	Key      string   `json:"key"`
	Label    string   `json:"label"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Pattern  string   `json:"pattern,omitempty"`
	Options  []string `json:"options,omitempty"`
}

// registrationFormFields lists the realm's enabled extra fields in order.
func (a *App) registrationFormFields(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.registrationRealm(r)
	if err != nil {
		return err
	}
	if err := registrationDisabled(realm); err != nil {
		return err
	}
	fields, err := a.store.ListRegistrationFields(r.Context(), realm.ID, true)
	if err != nil {
		return err
	}
	reps := make([]registrationFormField, 0, len(fields))
	for _, f := range fields {
		reps = append(reps, registrationFormField{Key: f.Key, Label: f.Label, Type: f.Type, Required: f.Required,
			Pattern: f.Pattern, Options: f.Options})
	}
	writeJSON(w, http.StatusOK, reps)
	return nil
}

type registerBody struct {
	Username   *string           `json:"username"`
	Email      *string           `json:"email"`
	Password   *string           `json:"password"`
	FirstName  *string           `json:"firstName"`
	LastName   *string           `json:"lastName"`
	Attributes map[string]string `json:"attributes"`
}

type registrationResult struct {
	User                  userRep           `json:"user"`
	Status                string            `json:"status"`
	Attributes            map[string]string `json:"attributes"`
	ApprovalPending       bool              `json:"approvalPending"`
	VerificationEmailSent bool              `json:"verificationEmailSent"`
}

// checkAttributes validates the attributes of a registration against the
// realm's enabled fields and returns what to store: the non-empty values.
func checkAttributes(fields []*store.RegistrationField, attrs map[string]string) (map[string]string, error) {
	byKey := map[string]*store.RegistrationField{}
	for _, f := range fields {
		byKey[f.Key] = f
	}
	for k := range attrs {
		if byKey[k] == nil {
			return nil, fieldError("attributes."+k, "is not a registration field")
		}
	}
	out := map[string]string{}
	for _, f := range fields {
		name := "attributes." + f.Key
		v := strings.TrimSpace(attrs[f.Key])
		if f.Type == "checkbox" && v == "false" {
			v = ""
		}
		if v == "" {
			if f.Required {
				return nil, fieldError(name, "is required")
			}
			continue
		}
		if utf8.RuneCountInString(v) > maxAttributeValueChars {
			return nil, fieldError(name, "must be at most %d characters", maxAttributeValueChars)
		}
		if err := checkFieldValue(f, name, v); err != nil {
			return nil, err
		}
		if f.Pattern != "" {
			if re, err := compileFieldPattern(f.Pattern); err != nil || !re.MatchString(v) {
				return nil, fieldError(name, "does not have the expected format")
			}
		}
		out[f.Key] = v
	}
	return out, nil
}

func checkFieldValue(f *store.RegistrationField, name, v string) error {
	switch f.Type {
	case "email":
		if _, err := normalizeEmail(v); err != nil {
			return fieldError(name, "must be an email address")
		}
	case "tel":
		if !telPattern.MatchString(v) {
			return fieldError(name, "must be a telephone number")
		}
	case "number":
		if n, err := strconv.ParseFloat(v, 64); err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return fieldError(name, "must be a number")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return fieldError(name, "must be a date as YYYY-MM-DD")
		}
	case "checkbox":
		if v != "true" {
			return fieldError(name, "must be true or false")
		}
	case "select":
		for _, o := range f.Options {
			if v == o {
				return nil
			}
		}
		return fieldError(name, "must be one of the field's options")
	}
	return nil
}

// compileFieldPattern compiles a field's pattern to match whole values, as
// an HTML pattern attribute does.
func compileFieldPattern(p string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + p + `)$`)
}

// register creates a user from the public form: active, or pending when
// the realm moderates registrations, and mails a verification link.
func (a *App) register(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.registrationRealm(r)
	if err != nil {
		return err
	}
	if err := a.registrationThrottled(w, registerLimitPerIP, true, "register:"+realm.ID+":ip:"+clientIP(r)); err != nil {
		return err
	}
	if err := registrationDisabled(realm); err != nil {
		return err
	}
	var body registerBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.Username == nil {
		return fieldError("username", "is required")
	}
	if body.Password == nil {
		return fieldError("password", "is required")
	}
	u := store.User{ID: uuid.NewString(), RealmID: realm.ID, Enabled: true, CreatedAt: a.now().UnixMilli()}
	set(&u.Username, body.Username)
	set(&u.Email, body.Email)
	set(&u.FirstName, body.FirstName)
	set(&u.LastName, body.LastName)
	if err := validateUser(&u); err != nil {
		return err
	}
	if err := checkPassword(realm, *body.Password); err != nil {
		return err
	}
	fields, err := a.store.ListRegistrationFields(r.Context(), realm.ID, true)
	if err != nil {
		return err
	}
	attrs, err := checkAttributes(fields, body.Attributes)
	if err != nil {
		return err
	}
	moderation, err := a.store.RegistrationModeration(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	if u.PasswordHash, err = a.hashPassword(r.Context(), *body.Password); err != nil {
		return err
	}
	u.PasswordChangedAt = u.CreatedAt
	var v *verification
	if _, err := mailSender(realm, false); err == nil && u.Email != "" {
		if v, err = a.newVerification(realm, &u); err != nil {
			return err
		}
	}
	status := store.UserActive
	if moderation {
		status = store.UserPending
	}
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.CreateUser(r.Context(), &u); err != nil {
			return userConflict(err)
		}
		if moderation {
			if err := tx.ChangeUserStatus(r.Context(), realm.ID, u.ID, store.UserActive, store.UserPending); err != nil {
				return err
			}
		}
		if err := tx.SetUserAttributes(r.Context(), u.ID, attrs); err != nil {
			return err
		}
		if v != nil {
			return v.queue(r.Context(), tx)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if v != nil {
		a.wakeMailer()
	}
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: "REGISTER", UserID: u.ID, IPAddress: clientIP(r),
		Details: map[string]string{"username": u.Username, "email": u.Email, "status": status}})
	writeJSON(w, http.StatusCreated, registrationResult{User: toUserRep(&u), Status: status, Attributes: attrs,
		ApprovalPending: moderation, VerificationEmailSent: v != nil})
	return nil
}

// registrationVerifyEmail uses a verify-email token once and marks its
// user's address verified.
func (a *App) registrationVerifyEmail(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.registrationRealm(r)
	if err != nil {
		return err
	}
	ipKey := "verify-email:" + realm.ID + ":ip:" + clientIP(r)
	if err := a.registrationThrottled(w, verifyEmailLimitPerIP, false, ipKey); err != nil {
		return err
	}
	var body struct {
		Token *string `json:"token"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.Token == nil || *body.Token == "" {
		return fieldError("token", "is required")
	}
	var tok *store.ActionToken
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		var err error
		if tok, err = tx.ConsumeActionToken(r.Context(), realm.ID, store.HashToken(*body.Token), store.ActionVerifyEmail,
			a.now().UnixMilli()); err != nil {
			return err
		}
		return tx.MarkEmailVerified(r.Context(), realm.ID, tok.UserID, tok.Email)
	})
	if errors.Is(err, store.ErrNotFound) {
		a.loginThrottle.fail(ipKey)
		return errorf(http.StatusBadRequest, "invalid_token", "the link is invalid, used or expired")
	} else if err != nil {
		return err
	}
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: "VERIFY_EMAIL", UserID: tok.UserID, IPAddress: clientIP(r),
		Details: map[string]string{"email": tok.Email}})
	writeJSON(w, http.StatusOK, map[string]any{"emailVerified": true, "email": tok.Email})
	return nil
}

const resendMessage = "if an unverified account has this email address, a verification email is on its way"

// registrationResend mails a new verification link to an unverified
// account's address. Its answer is the same whether or not there is one.
func (a *App) registrationResend(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.registrationRealm(r)
	if err != nil {
		return err
	}
	var body struct {
		Email *string `json:"email"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.Email == nil || *body.Email == "" {
		return fieldError("email", "is required")
	}
	email, err := normalizeEmail(*body.Email)
	if err != nil {
		return fieldError("email", "must be an email address")
	}
	if err := a.registrationThrottled(w, resendLimitPerIP, true, "resend:"+realm.ID+":ip:"+clientIP(r)); err != nil {
		return err
	}
	if err := a.registrationThrottled(w, resendLimitPerEmail, true, "resend:"+realm.ID+":email:"+email); err != nil {
		return err
	}
	users, _, err := a.store.ListUsers(r.Context(), realm.ID, store.UserFilter{Email: email, Exact: true, Limit: 1})
	if err != nil {
		return err
	}
	if _, noSender := mailSender(realm, false); len(users) == 1 && !users[0].EmailVerified && noSender == nil {
		status, err := a.store.UserStatus(r.Context(), realm.ID, users[0].ID)
		if err != nil {
			return err
		}
		if status != store.UserRejected {
			v, err := a.newVerification(realm, users[0])
			if err != nil {
				return err
			}
			if err := a.store.Tx(r.Context(), func(tx *store.Store) error { return v.queue(r.Context(), tx) }); err != nil {
				return err
			}
			a.wakeMailer()
			a.loginEvent(r.Context(), realm, store.LoginEvent{Type: "SEND_VERIFY_EMAIL", UserID: users[0].ID,
				IPAddress: clientIP(r), Details: map[string]string{"email": email}})
		}
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"message": resendMessage})
	return nil
}
