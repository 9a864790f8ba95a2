package registration

import (
	"context"
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The one way a person registers, behind both the public API and the
// hosted register page: limits, validation, the password policy, the
// admin-defined fields as attributes, moderation, the REGISTER event and
// the verification mail.

// RegisterLimitPerAccount caps, per quarter hour, the registrations that
// name one username or one email address, valid ones only: what a
// conflict tells, and the mails an address gets, stay few.
const RegisterLimitPerAccount = 3

// Registration is what a person asks to be registered with.
type Registration struct {
	Username, Email, FirstName, LastName string
	Password                             string
	// Confirm, when set (the page's form), must repeat Password.
	Confirm    *string
	Attributes map[string]string // by field key
	// Locale is the language the request asks for, "" when none: the
	// verification mail's unless the new user chose one.
	Locale string
}

// FieldProblem is one invalid field: the API's error, whose Field names
// the field, and the message key the page shows beside it, or for a
// password the policy refuses, the rules it fails.
type FieldProblem struct {
	Key   string
	Err   *apperr.Error
	Unmet []identity.PasswordRule
}

func problem(key, field, format string, args ...any) FieldProblem {
	return FieldProblem{Key: key, Err: apperr.Field(field, format, args...)}
}

// Invalid lists every invalid field of a registration, so a page can mark
// them all. As an error it is its first problem: the API answers one
// field at a time.
type Invalid []FieldProblem

func (p Invalid) Error() string { return p[0].Err.Error() }
func (p Invalid) Unwrap() error { return p[0].Err }

// Registered is the outcome of a registration.
type Registered struct {
	User   *store.User
	Status string // store.UserActive, or store.UserPending under moderation
	Attrs  map[string]string
	Mailed bool // a verification mail was queued
}

// RegisterUser registers reg, with the realm's enabled fields, from address ip: counted against the
// address's limit, then checked, then counted against its username's and
// email's, then created with its attributes, pending when the realm
// moderates, with a verification mail queued when the realm can send it.
// A limit reached is a *identity.ThrottledError; invalid fields, taken ones
// included, an Invalid.
func (s *Service) RegisterUser(ctx context.Context, realm *store.Realm, fields []*store.RegistrationField, reg Registration, ip string) (*Registered, error) {
	ipKey := "register:" + realm.ID + ":ip:" + ip
	if wait := s.deps.Throttle.Wait(ipKey, RegisterLimitPerIP); wait > 0 {
		return nil, &identity.ThrottledError{Wait: wait}
	}
	s.deps.Throttle.Fail(ipKey)
	schema, err := s.Attributes(ctx, realm, fields) // attributes.go
	if err != nil {
		return nil, err
	}
	u, attrs, custom, problems := checkRegistration(realm, fields, schema, reg)
	if len(problems) > 0 {
		return nil, problems
	}
	accountKeys := []string{"register:" + realm.ID + ":username:" + u.Username}
	if u.Email != "" {
		accountKeys = append(accountKeys, "register:"+realm.ID+":email:"+u.Email)
	}
	var wait time.Duration
	for _, k := range accountKeys {
		wait = max(wait, s.deps.Throttle.Wait(k, RegisterLimitPerAccount))
	}
	if wait > 0 {
		return nil, &identity.ThrottledError{Wait: wait}
	}
	for _, k := range accountKeys {
		s.deps.Throttle.Fail(k)
	}

	moderation, err := s.deps.Store.RegistrationModeration(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	// The policy passed in checkRegistration; a new user has no history.
	if u.PasswordHash, err = s.deps.Identity.NewPasswordHash(ctx, realm, &store.User{Username: u.Username, Email: u.Email}, reg.Password); err != nil {
		return nil, err
	}
	u.CreatedAt = s.deps.Now().UnixMilli()
	u.PasswordChangedAt = u.CreatedAt
	var v Verification
	if s.deps.Mail.CanSend(realm) && u.Email != "" {
		if v, err = s.deps.Mail.NewUserVerification(realm, u, custom, attrs, reg.Locale); err != nil {
			return nil, err
		}
	}
	status := store.UserActive
	if moderation {
		status = store.UserPending
	}
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if _, err := s.deps.Identity.CreateUser(ctx, tx, realm, identity.NewUserFrom(u)); err != nil {
			return err
		}
		if moderation {
			if err := tx.ChangeUserStatus(ctx, realm.ID, u.ID, store.UserActive, store.UserPending); err != nil {
				return err
			}
		}
		if err := tx.SetUserAttributes(ctx, u.ID, attrs); err != nil {
			return err
		}
		if err := s.deps.Identity.SetUserAttributes(ctx, tx, u, schema, custom); err != nil {
			return err
		}
		if v != nil {
			return v.Queue(ctx, tx)
		}
		return nil
	})
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventRegisterError, IPAddress: ip, Error: ae.Field + "_in_use",
			Details: map[string]string{"username": u.Username, "email": u.Email}})
		key := "register.error.usernameTaken"
		if ae.Field == "email" {
			key = "register.error.emailTaken"
		}
		return nil, Invalid{{Key: key, Err: ae}}
	} else if err != nil {
		return nil, err
	}
	if v != nil {
		s.deps.Mail.Wake()
	}
	s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventRegister, UserID: u.ID, IPAddress: ip,
		Details: map[string]string{"username": u.Username, "email": u.Email, "status": status}})
	for name, vals := range custom {
		attrs[name] = vals[0]
	}
	return &Registered{User: u, Status: status, Attrs: attrs, Mailed: v != nil}, nil
}

// checkRegistration checks every field of reg against the realm's rules,
// enabled fields and custom attributes taken at registration. Without
// problems it returns the user to create, normalised, the attributes to
// store and the custom attributes' values.
func checkRegistration(realm *store.Realm, fields []*store.RegistrationField, schema []*store.CustomAttribute, reg Registration) (*store.User, map[string]string, map[string][]string, Invalid) {
	var problems Invalid
	u := &store.User{ID: uuid.NewString(), RealmID: realm.ID, Enabled: true, Username: reg.Username, Email: reg.Email,
		FirstName: reg.FirstName, LastName: reg.LastName}
	switch {
	case strings.TrimSpace(reg.Username) == "":
		problems = append(problems, problem("register.error.usernameRequired", "username", "is required"))
	default:
		// The user rules of the admin API, one field at a time.
		if err := identity.ValidateUser(&store.User{Username: reg.Username}); err != nil {
			problems = append(problems, FieldProblem{Key: "register.error.username", Err: asAPIError(err)})
		}
	}
	switch {
	case reg.Email == "" && realm.RequireEmailVerification:
		problems = append(problems, problem("register.error.emailRequired", "email", "is required"))
	case reg.Email != "":
		if _, err := validate.NormalizeEmail(reg.Email); err != nil {
			problems = append(problems, FieldProblem{Key: "register.error.email", Err: asAPIError(err)})
		}
	}
	for _, f := range []struct{ name, value string }{{"firstName", reg.FirstName}, {"lastName", reg.LastName}} {
		if err := validate.PersonName(f.name, f.value, 255); err != nil {
			problems = append(problems, FieldProblem{Key: "register.error.name", Err: asAPIError(err)})
		}
	}
	switch {
	case reg.Password == "":
		problems = append(problems, problem("password.error.required", "password", "is required"))
	default:
		// A new user has no history: the rest of the policy is all there is.
		unmet := identity.UnmetUserPasswordRules(realm, &store.User{Username: reg.Username, Email: reg.Email}, reg.Password)
		if err := identity.PasswordPolicyError(realm, unmet); err != nil {
			problems = append(problems, FieldProblem{Err: asAPIError(err), Unmet: unmet})
		}
	}
	if reg.Confirm != nil && *reg.Confirm != reg.Password {
		problems = append(problems, problem("password.error.mismatch", "confirm", "does not match the password"))
	}
	fieldValues, custom := splitRegistrationValues(schema, reg.Attributes)
	attrs, attrProblems := checkAttributes(fields, fieldValues)
	problems = append(problems, attrProblems...)
	problems = append(problems, checkCustomAttributes(schema, custom)...)
	if len(problems) > 0 {
		return nil, nil, nil, problems
	}
	if err := identity.ValidateUser(u); err != nil { // normalises; the checks above passed
		return nil, nil, nil, Invalid{{Key: "register.error.username", Err: asAPIError(err)}}
	}
	return u, attrs, custom, nil
}

// asAPIError is err as the field error the validators return.
func asAPIError(err error) *apperr.Error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae
	}
	return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidField, Message: err.Error(), Cause: err}
}

// checkAttributes validates the attributes of a registration against the
// realm's enabled fields and returns what to store: the non-empty values.
func checkAttributes(fields []*store.RegistrationField, attrs map[string]string) (map[string]string, Invalid) {
	var problems Invalid
	byKey := map[string]*store.RegistrationField{}
	for _, f := range fields {
		byKey[f.Key] = f
	}
	for k := range attrs {
		if byKey[k] == nil {
			problems = append(problems, problem("register.error.unknownField", "attributes."+k, "is not a registration field"))
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
				problems = append(problems, problem("register.error.required", name, "is required"))
			}
			continue
		}
		if utf8.RuneCountInString(v) > maxAttributeValueChars {
			problems = append(problems, problem("register.error.tooLong", name, "must be at most %d characters", maxAttributeValueChars))
			continue
		}
		if err := validate.DisplayName(name, v, maxAttributeValueChars); err != nil {
			problems = append(problems, FieldProblem{Key: "register.error.format", Err: asAPIError(err)})
			continue
		}
		if p, ok := checkFieldValue(f, name, v); !ok {
			problems = append(problems, p)
			continue
		}
		if f.Pattern != "" {
			if re, err := compileFieldPattern(f.Pattern); err != nil || !re.MatchString(v) {
				problems = append(problems, problem("register.error.format", name, "does not have the expected format"))
				continue
			}
		}
		out[f.Key] = v
	}
	return out, problems
}

// checkFieldValue checks v against the type of field f, named name.
func checkFieldValue(f *store.RegistrationField, name, v string) (FieldProblem, bool) {
	switch f.Type {
	case "email":
		if _, err := validate.NormalizeEmail(v); err != nil {
			return problem("register.error.email", name, "must be an email address"), false
		}
	case "tel":
		if !telPattern.MatchString(v) {
			return problem("register.error.tel", name, "must be a telephone number"), false
		}
	case "number":
		if n, err := strconv.ParseFloat(v, 64); err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return problem("register.error.number", name, "must be a number"), false
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return problem("register.error.date", name, "must be a date as YYYY-MM-DD"), false
		}
	case "checkbox":
		if v != "true" {
			return problem("register.error.checkbox", name, "must be true or false"), false
		}
	case "select":
		for _, o := range f.Options {
			if v == o {
				return FieldProblem{}, true
			}
		}
		return problem("register.error.option", name, "must be one of the field's options"), false
	}
	return FieldProblem{}, true
}

// compileFieldPattern compiles a field's pattern to match whole values, as
// an HTML pattern attribute does.
func compileFieldPattern(p string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + p + `)$`)
}
