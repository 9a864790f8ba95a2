package app

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
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
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

// registrationRealm is the enabled realm of a public registration request.
func (a *App) registrationRealm(r *http.Request) (*store.Realm, error) {
	realm, err := a.realm(r)
	if err != nil {
		return nil, err
	}
	if !realm.Enabled {
		return nil, apperr.NotFound("realm " + realm.Name)
	}
	return realm, nil
}

// registrationThrottled answers 429 when key has used its limit, and
// otherwise counts this attempt when count is set.
func (a *App) registrationThrottled(w http.ResponseWriter, limit int, count bool, keys ...string) error {
	var wait time.Duration
	for _, k := range keys {
		wait = max(wait, a.loginThrottle.Wait(k, limit))
	}
	if wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		return apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many attempts; try again later")
	}
	if count {
		for _, k := range keys {
			a.loginThrottle.Fail(k)
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
	httpx.WriteJSON(w, http.StatusOK, reps)
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

// register creates a user from the public API: see registerUser.
func (a *App) register(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.registrationRealm(r)
	if err != nil {
		return err
	}
	if err := registrationDisabled(realm); err != nil {
		return err
	}
	var body registerBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	reg := registration{Attributes: body.Attributes, Locale: signin.RequestLocale(a.messages, r)}
	set(&reg.Username, body.Username)
	set(&reg.Email, body.Email)
	set(&reg.FirstName, body.FirstName)
	set(&reg.LastName, body.LastName)
	set(&reg.Password, body.Password)
	fields, err := a.store.ListRegistrationFields(r.Context(), realm.ID, true)
	if err != nil {
		return err
	}
	done, err := a.registerUser(r.Context(), realm, fields, reg, a.clientIP(r))
	var throttled *identity.ThrottledError
	if errors.As(err, &throttled) {
		httpx.RetryAfter(w, throttled.Wait)
		return apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many attempts; try again later")
	} else if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, registrationResult{User: toUserRep(done.user), Status: done.status,
		Attributes: done.attrs, ApprovalPending: done.status == store.UserPending, VerificationEmailSent: done.mailed})
	return nil
}

// verifyEmailBody is what POST /registration/verify-email takes: the
// token of the mailed link.
type verifyEmailBody struct {
	Token *string `json:"token"`
}

// emailVerifiedRep answers a used verify-email token.
type emailVerifiedRep struct {
	EmailVerified bool   `json:"emailVerified"`
	Email         string `json:"email"`
}

// registrationVerifyEmail uses a verify-email token once and marks its
// user's address verified.
func (a *App) registrationVerifyEmail(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.registrationRealm(r)
	if err != nil {
		return err
	}
	ipKey := "verify-email:" + realm.ID + ":ip:" + a.clientIP(r)
	if err := a.registrationThrottled(w, verifyEmailLimitPerIP, false, ipKey); err != nil {
		return err
	}
	var body verifyEmailBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Token == nil || *body.Token == "" {
		return apperr.Field("token", "is required")
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
		a.loginThrottle.Fail(ipKey)
		return apperr.New(http.StatusBadRequest, apperr.CodeInvalidToken, "the link is invalid, used or expired")
	} else if err != nil {
		return err
	}
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventVerifyEmail, UserID: tok.UserID, IPAddress: a.clientIP(r),
		Details: map[string]string{"email": tok.Email}})
	httpx.WriteJSON(w, http.StatusOK, emailVerifiedRep{EmailVerified: true, Email: tok.Email})
	return nil
}

// resendVerificationBody is what POST /registration/resend-verification
// takes.
type resendVerificationBody struct {
	Email *string `json:"email"`
}

// resendRep answers every resend alike, so that it tells nothing of which
// addresses have an account.
type resendRep struct {
	Message string `json:"message"`
}

const resendMessage = "if an unverified account has this email address, a verification email is on its way"

// registrationResend mails a new verification link to an unverified
// account's address. Its answer is the same whether or not there is one.
func (a *App) registrationResend(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.registrationRealm(r)
	if err != nil {
		return err
	}
	var body resendVerificationBody
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
	if err := a.registrationThrottled(w, resendLimitPerIP, true, "resend:"+realm.ID+":ip:"+a.clientIP(r)); err != nil {
		return err
	}
	if err := a.registrationThrottled(w, resendLimitPerEmail, true, "resend:"+realm.ID+":email:"+email); err != nil {
		return err
	}
	users, _, err := a.store.ListUsers(r.Context(), realm.ID, store.UserFilter{Email: email, Exact: true, Limit: 1})
	if err != nil {
		return err
	}
	if _, noSender := mail.Sender(realm, false); len(users) == 1 && !users[0].EmailVerified && noSender == nil {
		status, err := a.store.UserStatus(r.Context(), realm.ID, users[0].ID)
		if err != nil {
			return err
		}
		if status != store.UserRejected {
			l, err := mail.Languages{Store: a.store, Messages: a.messages}.Localizer(r.Context(), realm, users[0], r)
			if err != nil {
				return err
			}
			v, err := a.newVerification(l, realm, users[0])
			if err != nil {
				return err
			}
			if err := a.store.Tx(r.Context(), func(tx *store.Store) error { return v.queue(r.Context(), tx) }); err != nil {
				return err
			}
			a.mail.Wake()
			a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventSendVerifyEmail, UserID: users[0].ID,
				IPAddress: a.clientIP(r), Details: map[string]string{"email": email}})
		}
	}
	httpx.WriteJSON(w, http.StatusAccepted, resendRep{Message: resendMessage})
	return nil
}
