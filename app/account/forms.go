package account

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// What the account routes share: refused fields that answer an API caller
// in JSON and a browser next to the field, the throttled check of the
// current password, and the CSRF check of the pages' forms.

// The account pages' forms, for their CSRF tokens.
const (
	accountFormProfile      = "account-profile"
	accountFormPassword     = "account-password"
	accountFormDelete       = "account-delete"
	accountFormCancelDelete = "account-cancel-delete"
)

// invalid is a refused field of an account request: an API caller gets
// invalid_field described by the English text of key; a page shows key,
// in the page's language, at the field (fieldText).
func invalid(field, key string, args ...any) *apperr.Error {
	e := apperr.New(http.StatusBadRequest, apperr.CodeInvalidField, "").WithKey(key, args...)
	e.Field = field
	return e
}

// errEmailTaken is a new email address another account of the realm holds.
var errEmailTaken = apperr.Conflict("email", "").WithKey("account.error.emailTaken")

// passwordPolicyRefused is a new password the realm's policy refuses: an
// API caller is told every unmet rule in English; a page names them in its
// language (fieldText).
func (s *Service) passwordPolicyRefused(realm *store.Realm, unmet []identity.PasswordRule) *apperr.Error {
	e := apperr.New(http.StatusBadRequest, apperr.CodeInvalidField, "%s",
		signin.PasswordPolicyText(s.deps.Messages.Localizer(ui.DefaultLocale), realm, unmet)).WithCause(identity.PasswordPolicyError(realm, unmet))
	e.Field = "newPassword"
	return e
}

// fieldText is the message of a refused account field in the language of
// the page r will get: the unmet rules of the password policy, the
// error's message key, or its message.
func (s *Service) fieldText(r *http.Request, realm *store.Realm, e *apperr.Error) string {
	if text := s.deps.Pages.PasswordError(r, realm, e); text != "" {
		return text
	}
	if e.Key != "" {
		return s.pageText(r, e.Key, e.Args...)
	}
	return e.Message
}

// pageText is a message in the language of the page r will get. Form
// structs carry it where a message needs arguments; the templates pass
// text that is no key through unchanged.
func (s *Service) pageText(r *http.Request, key string, args ...any) string {
	return s.deps.Pages.Localizer(r).T(key, args...)
}

// checkCurrentPassword checks the password the caller typed to confirm a
// change. Failures count against the same per-user and per-address limits
// as the login form's, and against the realm's brute-force policy, so the
// account pages are no way around them; a locked user's password is
// refused as a wrong one.
func (s *Service) checkCurrentPassword(ctx context.Context, r *http.Request, c *Caller, password string) error {
	if password == "" {
		return invalid("currentPassword", "account.error.currentRequired")
	}
	err := s.deps.Identity.CheckUserPassword(ctx, c.Realm, c.User, password, s.deps.ClientIP(r))
	if errors.Is(err, identity.ErrBadCredentials) {
		s.accountLockedEvent(ctx, r, c, err, nil)
		return invalid("currentPassword", "account.error.currentWrong")
	}
	return signin.ThrottleRefusal(err, "too many wrong passwords; try again later", "account.error.throttled")
}

// accountLockedEvent records the refusal of a locked user's credential
// (err from the core's CheckUserPassword or CheckOneTimeCode) as the
// sign-in forms do: LOGIN_ERROR user_temporarily_disabled. Other
// refusals record nothing here.
func (s *Service) accountLockedEvent(ctx context.Context, r *http.Request, c *Caller, err error, details map[string]string) {
	if _, locked := identity.LockedOut(err); !locked {
		return
	}
	d := map[string]string{"username": c.User.Username}
	maps.Copy(d, details)
	s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventLoginError, UserID: c.User.ID, ClientID: c.ClientID,
		SessionID: c.SessionID(), IPAddress: s.deps.ClientIP(r), Error: "user_temporarily_disabled", Details: d})
}

// checkNewPassword applies what needs no stored password of the realm's
// policy (that of the admin API's reset-password, history aside) to a new
// password and its confirmation; changeAccountPassword checks the history
// once the current password is proven, so that it tells nothing of old
// passwords to whoever holds only a session.
func (s *Service) checkNewPassword(realm *store.Realm, user *store.User, current, password, confirmation string) error {
	if password == "" {
		return invalid("newPassword", "account.error.newRequired")
	}
	if unmet := identity.UnmetUserPasswordRules(realm, user, password); len(unmet) > 0 {
		return s.passwordPolicyRefused(realm, unmet)
	}
	if password == current {
		return invalid("newPassword", "account.error.passwordUnchanged")
	}
	if password != confirmation {
		return invalid("confirmation", "account.error.confirmMismatch")
	}
	return nil
}

// Form reads a browser's form post and checks its CSRF token,
// which is bound to the browser's SSO session.
func (s *Service) Form(r *http.Request, c *Caller, form string) error {
	if err := r.ParseForm(); err != nil {
		return errFormUnreadable
	}
	return s.deps.Pages.CheckCSRF(r, form, c.Session.ID)
}

// formValue is a posted field, nil when the form has no such field.
func formValue(r *http.Request, name string) *string {
	if !r.PostForm.Has(name) {
		return nil
	}
	v := r.PostForm.Get(name)
	return &v
}

// accountDate is a moment as the account pages show it.
func accountDate(ms int64) ui.AccountDate {
	t := time.UnixMilli(ms).UTC()
	return ui.AccountDate{Text: t.Format("2006-01-02 15:04 UTC"), RFC3339: t.Format(time.RFC3339)}
}

// accountRedirect sends a browser to an account page after a form post,
// with a notice of what was done, so that reloading does not post again.
func accountRedirect(w http.ResponseWriter, r *http.Request, realm *store.Realm, path, done string) error {
	to := Path(realm) + path
	if done != "" {
		to += "?done=" + done
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// accountGoTo is the page of a refusal that a browser is not shown (it
// asked for what is done already, in another tab, say): it goes on to an
// account page.
func accountGoTo(realm *store.Realm, path string) func(http.ResponseWriter, *http.Request, *apperr.Error) error {
	return func(w http.ResponseWriter, r *http.Request, _ *apperr.Error) error {
		return accountRedirect(w, r, realm, path, "")
	}
}

// accountNotices are the notices a page shows after a redirect, by the
// done parameter: only these, so a link cannot make a page say anything
// else.
var accountNotices = map[string]string{
	"profile":      "account.notice.profile",
	"email":        "account.notice.email",
	"email-unsent": "account.notice.emailUnsent",
	"password":     "account.notice.password",
	"scheduled":    "account.notice.deletionScheduled",
	"cancelled":    "account.notice.deletionCancelled",
}

func accountNotice(r *http.Request) string { return accountNotices[r.URL.Query().Get("done")] }

// errFormUnreadable is a form post whose body cannot be read.
var errFormUnreadable = apperr.New(http.StatusBadRequest, apperr.CodeInvalidRequest, "").WithKey("error.formUnreadable")

// set copies src to dst when the body gave it.
func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}
