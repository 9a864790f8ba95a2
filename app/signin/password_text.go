package signin

import (
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The realm's password policy as the pages say it: the rules are the
// identity core's (identity.PasswordRule); their words are here.

// Message keys of the rules, for pages. A rule a password lacks is named
// in one sentence, "The password needs {0}.", with the others it lacks; a
// rule it breaks has a sentence of its own.
var (
	passwordNeedKeys = map[identity.PasswordRule]string{
		identity.RuleMinLength: "password.rule.minLength",
		identity.RuleUppercase: "password.rule.uppercase",
		identity.RuleLowercase: "password.rule.lowercase",
		identity.RuleDigit:     "password.rule.digits",
		identity.RuleSpecial:   "password.rule.specialChars",
	}
	passwordBreakKeys = map[identity.PasswordRule]string{
		identity.RuleMaxLength:   "password.error.maxLength",
		identity.RuleNotUsername: "password.error.notUsername",
		identity.RuleNotEmail:    "password.error.notEmail",
		identity.RuleHistory:     "password.error.history",
	}
)

// PasswordPolicyText says in l's language what the password fails of the
// realm's policy, naming every unmet rule: "The password needs at least
// 12 characters, an uppercase letter. The password must not be your
// username."
func PasswordPolicyText(l *ui.Localizer, realm *store.Realm, unmet []identity.PasswordRule) string {
	var needs, sentences []string
	for _, rule := range unmet {
		switch rule {
		case identity.RuleMinLength:
			needs = append(needs, l.T(passwordNeedKeys[rule], identity.PasswordMinLength(realm)))
		case identity.RuleMaxLength:
			sentences = append(sentences, l.T(passwordBreakKeys[rule], identity.MaxPasswordLength))
		case identity.RuleHistory:
			if realm.PasswordHistoryCount > 1 {
				sentences = append(sentences, l.T("password.error.historyN", realm.PasswordHistoryCount))
			} else {
				sentences = append(sentences, l.T(passwordBreakKeys[rule]))
			}
		default:
			if key, ok := passwordNeedKeys[rule]; ok {
				needs = append(needs, l.T(key))
			} else {
				sentences = append(sentences, l.T(passwordBreakKeys[rule]))
			}
		}
	}
	if len(needs) > 0 {
		sentences = append([]string{l.T("password.error.needs", strings.Join(needs, ", "))}, sentences...)
	}
	return strings.Join(sentences, " ")
}

// PasswordText is PasswordPolicyText in the language of the page r gets;
// "" when no rule is unmet.
func (p *Pages) PasswordText(r *http.Request, realm *store.Realm, unmet []identity.PasswordRule) string {
	if len(unmet) == 0 {
		return ""
	}
	return PasswordPolicyText(p.Localizer(r), realm, unmet)
}

// PasswordError is the message a page shows at its password field for err
// from NewPasswordHash: the unmet rules in the page's language; "" when
// err is no refusal by the policy.
func (p *Pages) PasswordError(r *http.Request, realm *store.Realm, err error) string {
	var refused *identity.PasswordRefused
	if !errors.As(err, &refused) {
		return ""
	}
	return p.PasswordText(r, realm, refused.Unmet())
}

// CheckNewPassword checks a new password a page asked user for, typed
// twice: the realm's policy in the page's language, the confirmation,
// and, without a history (which would refuse it), the current password
// again, since a change asked for must change it. It answers the new
// password's hash, or the form's field errors with hash ""; err is the
// server's.
func (p *Pages) CheckNewPassword(r *http.Request, core *identity.Core, realm *store.Realm, user *store.User,
	password, confirm string) (hash string, form ui.ChangePasswordForm, err error) {
	if password == "" {
		form.PasswordError = "password.error.required"
	} else {
		// What needs no stored password first; the history with the hash.
		form.PasswordError = p.PasswordText(r, realm, identity.UnmetUserPasswordRules(realm, user, password))
	}
	if password != confirm {
		form.ConfirmError = "password.error.mismatch"
	}
	if form.PasswordError == "" && form.ConfirmError == "" && realm.PasswordHistoryCount == 0 && user.PasswordHash != "" {
		same, err := core.VerifyPassword(r.Context(), user.PasswordHash, password)
		if err != nil && !errors.Is(err, identity.ErrBadHash) {
			return "", form, err
		}
		if same {
			form.PasswordError = "password.error.sameAsCurrent"
		}
	}
	if form.PasswordError != "" || form.ConfirmError != "" {
		return "", form, nil
	}
	hash, err = core.NewPasswordHash(r.Context(), realm, user, password)
	if msg := p.PasswordError(r, realm, err); msg != "" {
		form.PasswordError = msg
		return "", form, nil
	}
	return hash, form, err
}
