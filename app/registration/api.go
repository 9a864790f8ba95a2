package registration

import (
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Self-service registration. Per-address limits over the throttle's
// 15-minute window; register and resend count every attempt, verify-email
// only failed ones.
const (
	RegisterLimitPerIP     = 10
	ResendLimitPerIP       = 10
	ResendLimitPerEmail    = 3
	VerifyEmailLimitPerIP  = 20
	maxAttributeValueChars = 1000
)

var telPattern = regexp.MustCompile(`^\+?[0-9 ()./-]{3,30}$`)

// enabledRealm is the enabled realm of a public registration request.
func (s *Service) enabledRealm(r *http.Request) (*store.Realm, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, err
	}
	if !realm.Enabled {
		return nil, apperr.NotFound("realm " + realm.Name)
	}
	return realm, nil
}

// throttled answers 429 when key has used its limit, and otherwise counts
// this attempt when count is set.
func (s *Service) throttled(w http.ResponseWriter, limit int, count bool, keys ...string) error {
	var wait time.Duration
	for _, k := range keys {
		wait = max(wait, s.deps.Throttle.Wait(k, limit))
	}
	if wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		return apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many attempts; try again later")
	}
	if count {
		for _, k := range keys {
			s.deps.Throttle.Fail(k)
		}
	}
	return nil
}

func registrationDisabled(realm *store.Realm) error {
	if !realm.RegistrationAllowed {
		return apperr.New(http.StatusForbidden, apperr.CodeRegistrationDisabled, "realm %s does not allow registration", realm.Name)
	}
	return nil
}

// RegistrationFormField is an enabled extra field as the form shows it.
type RegistrationFormField struct {
	Key      string   `json:"key"`
	Label    string   `json:"label"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Pattern  string   `json:"pattern,omitempty"`
	Options  []string `json:"options,omitempty"`
}

// FormFields lists the realm's enabled extra fields in order.
func (s *Service) FormFields(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.enabledRealm(r)
	if err != nil {
		return err
	}
	if err := registrationDisabled(realm); err != nil {
		return err
	}
	fields, err := s.deps.Store.ListRegistrationFields(r.Context(), realm.ID, true)
	if err != nil {
		return err
	}
	reps := make([]RegistrationFormField, 0, len(fields))
	for _, f := range fields {
		reps = append(reps, RegistrationFormField{Key: f.Key, Label: f.Label, Type: f.Type, Required: f.Required,
			Pattern: f.Pattern, Options: f.Options})
	}
	httpx.WriteJSON(w, http.StatusOK, reps)
	return nil
}

// RegisterBody is what POST /registration/register takes.
type RegisterBody struct {
	Username   *string           `json:"username"`
	Email      *string           `json:"email"`
	Password   *string           `json:"password"`
	FirstName  *string           `json:"firstName"`
	LastName   *string           `json:"lastName"`
	Attributes map[string]string `json:"attributes"`
}

// RegistrationResult answers a registration; U is the admin API's
// representation of a user (the module answers with any, which holds it,
// and the API's document names it).
type RegistrationResult[U any] struct {
	User                  U                 `json:"user"`
	Status                string            `json:"status"`
	Attributes            map[string]string `json:"attributes"`
	ApprovalPending       bool              `json:"approvalPending"`
	VerificationEmailSent bool              `json:"verificationEmailSent"`
}

// Register creates a user from the public API: see RegisterUser.
func (s *Service) Register(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.enabledRealm(r)
	if err != nil {
		return err
	}
	if err := registrationDisabled(realm); err != nil {
		return err
	}
	var body RegisterBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	reg := Registration{Attributes: body.Attributes, Locale: signin.RequestLocale(s.deps.Messages, r)}
	set(&reg.Username, body.Username)
	set(&reg.Email, body.Email)
	set(&reg.FirstName, body.FirstName)
	set(&reg.LastName, body.LastName)
	set(&reg.Password, body.Password)
	fields, err := s.deps.Store.ListRegistrationFields(r.Context(), realm.ID, true)
	if err != nil {
		return err
	}
	done, err := s.RegisterUser(r.Context(), realm, fields, reg, s.deps.ClientIP(r))
	var throttled *identity.ThrottledError
	if errors.As(err, &throttled) {
		httpx.RetryAfter(w, throttled.Wait)
		return apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many attempts; try again later")
	} else if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, RegistrationResult[any]{User: s.deps.UserRep(done.User), Status: done.Status,
		Attributes: done.Attrs, ApprovalPending: done.Status == store.UserPending, VerificationEmailSent: done.Mailed})
	return nil
}

// VerifyEmailBody is what POST /registration/verify-email takes: the
// token of the mailed link.
type VerifyEmailBody struct {
	Token *string `json:"token"`
}

// EmailVerifiedRep answers a used verify-email token.
type EmailVerifiedRep struct {
	EmailVerified bool   `json:"emailVerified"`
	Email         string `json:"email"`
}

// VerifyEmail uses a verify-email token once and marks its user's address
// verified.
func (s *Service) VerifyEmail(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.enabledRealm(r)
	if err != nil {
		return err
	}
	ipKey := "verify-email:" + realm.ID + ":ip:" + s.deps.ClientIP(r)
	if err := s.throttled(w, VerifyEmailLimitPerIP, false, ipKey); err != nil {
		return err
	}
	var body VerifyEmailBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Token == nil || *body.Token == "" {
		return apperr.Field("token", "is required")
	}
	var tok *store.ActionToken
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		var err error
		if tok, err = tx.ConsumeActionToken(r.Context(), realm.ID, store.HashToken(*body.Token), store.ActionVerifyEmail,
			s.deps.Now().UnixMilli()); err != nil {
			return err
		}
		return tx.MarkEmailVerified(r.Context(), realm.ID, tok.UserID, tok.Email)
	})
	if errors.Is(err, store.ErrNotFound) {
		s.deps.Throttle.Fail(ipKey)
		return apperr.New(http.StatusBadRequest, apperr.CodeInvalidToken, "the link is invalid, used or expired")
	} else if err != nil {
		return err
	}
	s.deps.LoginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventVerifyEmail, UserID: tok.UserID, IPAddress: s.deps.ClientIP(r),
		Details: map[string]string{"email": tok.Email}})
	httpx.WriteJSON(w, http.StatusOK, EmailVerifiedRep{EmailVerified: true, Email: tok.Email})
	return nil
}

// ResendVerificationBody is what POST /registration/resend-verification
// takes.
type ResendVerificationBody struct {
	Email *string `json:"email"`
}

// ResendRep answers every resend alike, so that it tells nothing of which
// addresses have an account.
type ResendRep struct {
	Message string `json:"message"`
}

const resendMessage = "if an unverified account has this email address, a verification email is on its way"

// Resend mails a new verification link to an unverified account's
// address. Its answer is the same whether or not there is one.
func (s *Service) Resend(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.enabledRealm(r)
	if err != nil {
		return err
	}
	var body ResendVerificationBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Email == nil || *body.Email == "" {
		return apperr.Field("email", "is required")
	}
	email, err := validate.NormalizeEmail(*body.Email)
	if err != nil {
		return apperr.Field("email", "must be an email address")
	}
	if err := s.throttled(w, ResendLimitPerIP, true, "resend:"+realm.ID+":ip:"+s.deps.ClientIP(r)); err != nil {
		return err
	}
	if err := s.throttled(w, ResendLimitPerEmail, true, "resend:"+realm.ID+":email:"+email); err != nil {
		return err
	}
	users, _, err := s.deps.Store.ListUsers(r.Context(), realm.ID, store.UserFilter{Email: email, Exact: true, Limit: 1})
	if err != nil {
		return err
	}
	if len(users) == 1 && !users[0].EmailVerified && s.deps.Mail.CanSend(realm) {
		status, err := s.deps.Store.UserStatus(r.Context(), realm.ID, users[0].ID)
		if err != nil {
			return err
		}
		if status != store.UserRejected {
			v, err := s.deps.Mail.UserVerification(r.Context(), realm, users[0], r)
			if err != nil {
				return err
			}
			if err := s.deps.Store.Tx(r.Context(), func(tx *store.Store) error { return v.Queue(r.Context(), tx) }); err != nil {
				return err
			}
			s.deps.Mail.Wake()
			s.deps.LoginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventSendVerifyEmail, UserID: users[0].ID,
				IPAddress: s.deps.ClientIP(r), Details: map[string]string{"email": email}})
		}
	}
	httpx.WriteJSON(w, http.StatusAccepted, ResendRep{Message: resendMessage})
	return nil
}
