package app

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
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

// accountInvalid is a refused field of an account request. An API caller
// gets it as fieldError's JSON (409 conflict for a value another account
// holds) described by the English text of its message; a page shows the
// message, in the page's language, at the field.
type accountInvalid struct {
	field    string
	key      string // message key
	args     []any
	conflict bool
	// A new password the realm's policy refuses: the rules it fails
	// are the message (passwordPolicyText), not key.
	policy *store.Realm
	unmet  []identity.PasswordRule
}

func (e *accountInvalid) Error() string { return e.field + ": " + e.key }

// text is the message in l's language.
func (e *accountInvalid) text(l *ui.Localizer) string {
	if len(e.unmet) > 0 {
		return passwordPolicyText(l, e.policy, e.unmet)
	}
	return l.T(e.key, e.args...)
}

func invalid(field, key string, args ...any) *accountInvalid {
	return &accountInvalid{field: field, key: key, args: args}
}

// apiError is the JSON answer to e.
func (a *App) accountAPIError(e *accountInvalid) *apperr.Error {
	text := e.text(a.messages.Localizer(ui.DefaultLocale))
	if e.conflict {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: e.field, Message: text}
	}
	return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidField, Field: e.field, Message: text}
}

// invalidText is e's message in the language of the page r will get.
func (a *App) invalidText(r *http.Request, e *accountInvalid) string {
	return e.text(a.messages.Localizer(a.pageLocale(r)))
}

// pageText is a message in the language of the page r will get. Form
// structs carry it where a message needs arguments; the templates pass
// text that is no key through unchanged.
func (a *App) pageText(r *http.Request, key string, args ...any) string {
	return a.messages.Localizer(a.pageLocale(r)).T(key, args...)
}

// accountThrottled: too many wrong current passwords for this user or
// address.
func (a *App) accountThrottled(w http.ResponseWriter, wait time.Duration) *apperr.Error {
	httpx.RetryAfter(w, wait)
	return apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many wrong passwords; try again later")
}

// checkCurrentPassword checks the password the caller typed to confirm a
// change. Failures count against the same per-user and per-address limits
// as the login form's, and against the realm's brute-force policy, so the
// account pages are no way around them; a locked user's password is
// refused as a wrong one.
func (a *App) checkCurrentPassword(ctx context.Context, r *http.Request, c *accountCaller, password string) error {
	if password == "" {
		return invalid("currentPassword", "account.error.currentRequired")
	}
	err := a.id.CheckUserPassword(ctx, c.realm, c.user, password, a.clientIP(r))
	if errors.Is(err, identity.ErrBadCredentials) {
		a.accountLockedEvent(ctx, r, c, err, nil)
		return invalid("currentPassword", "account.error.currentWrong")
	}
	return err
}

// accountLockedEvent records the refusal of a locked user's credential
// (err from the core's CheckUserPassword or CheckOneTimeCode) as the
// sign-in forms do: LOGIN_ERROR user_temporarily_disabled. Other
// refusals record nothing here.
func (a *App) accountLockedEvent(ctx context.Context, r *http.Request, c *accountCaller, err error, details map[string]string) {
	if _, locked := identity.LockedOut(err); !locked {
		return
	}
	d := map[string]string{"username": c.user.Username}
	maps.Copy(d, details)
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: "LOGIN_ERROR", UserID: c.user.ID, ClientID: c.clientID,
		SessionID: accountSessionID(c), IPAddress: a.clientIP(r), Error: "user_temporarily_disabled", Details: d})
}

// checkNewPassword applies what needs no stored password of the realm's
// policy (that of the admin API's reset-password, history aside) to a new
// password and its confirmation; changeAccountPassword checks the history
// once the current password is proven, so that it tells nothing of old
// passwords to whoever holds only a session.
func checkNewPassword(realm *store.Realm, user *store.User, current, password, confirmation string) error {
	if password == "" {
		return invalid("newPassword", "account.error.newRequired")
	}
	if unmet := identity.UnmetUserPasswordRules(realm, user, password); len(unmet) > 0 {
		return &accountInvalid{field: "newPassword", policy: realm, unmet: unmet}
	}
	if password == current {
		return invalid("newPassword", "account.error.passwordUnchanged")
	}
	if password != confirmation {
		return invalid("confirmation", "account.error.confirmMismatch")
	}
	return nil
}

// accountForm reads a browser's form post and checks its CSRF token,
// which is bound to the browser's SSO session.
func (a *App) accountForm(r *http.Request, c *accountCaller, form string) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	return a.checkCSRF(r, form, c.session.ID)
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
	to := accountPath(realm) + path
	if done != "" {
		to += "?done=" + done
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
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
