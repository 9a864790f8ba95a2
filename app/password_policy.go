package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// A passwordRule is one rule of a realm's password policy that a password
// can fail. Pages can map these to message keys; the API names them in
// English through passwordPolicyError.
type passwordRule string

const (
	ruleMinLength   passwordRule = "minLength"
	ruleMaxLength   passwordRule = "maxLength"
	ruleUppercase   passwordRule = "uppercase"
	ruleLowercase   passwordRule = "lowercase"
	ruleDigit       passwordRule = "digits"
	ruleSpecial     passwordRule = "specialChars"
	ruleNotUsername passwordRule = "notUsername"
	ruleNotEmail    passwordRule = "notEmail"
	ruleHistory     passwordRule = "history"
)

// passwordMinLength is the realm's minimum, never below the server's.
func passwordMinLength(realm *store.Realm) int {
	return max(minPasswordLength, realm.PasswordMinLength)
}

// unmetPasswordRules lists the realm's rules that password fails and that
// need nothing but the password: length and character classes.
//
// A special character is any character that is neither a letter, a digit
// nor white space: punctuation, symbols, marks.
func unmetPasswordRules(realm *store.Realm, password string) []passwordRule {
	var unmet []passwordRule
	switch n := utf8.RuneCountInString(password); {
	case n < passwordMinLength(realm):
		unmet = append(unmet, ruleMinLength)
	case n > maxPasswordLength:
		unmet = append(unmet, ruleMaxLength)
	}
	for _, c := range []struct {
		required bool
		rule     passwordRule
		is       func(rune) bool
	}{
		{realm.PasswordRequireUppercase, ruleUppercase, unicode.IsUpper},
		{realm.PasswordRequireLowercase, ruleLowercase, unicode.IsLower},
		{realm.PasswordRequireDigits, ruleDigit, unicode.IsDigit},
		{realm.PasswordRequireSpecialChars, ruleSpecial, isSpecialChar},
	} {
		if c.required && !strings.ContainsFunc(password, c.is) {
			unmet = append(unmet, c.rule)
		}
	}
	return unmet
}

func isSpecialChar(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsSpace(r)
}

// checkPasswordPolicy applies the realm's whole password policy to a new
// password of user: the rules needing nothing but the password
// (unmetPasswordRules), neither the username nor
// the email (in any case), and, for an existing user (ID set), none of the
// last passwordHistoryCount passwords, the current one included. A new
// user needs only Username and Email set. The error is a field error on
// "password" naming every rule the password fails.
func (a *App) checkPasswordPolicy(ctx context.Context, realm *store.Realm, user *store.User, password string) error {
	unmet, err := a.unmetPasswordPolicy(ctx, realm, user, password)
	if err != nil {
		return err
	}
	return passwordPolicyError(realm, unmet)
}

// unmetPasswordPolicy lists the rules of the realm's whole policy that
// password fails, for pages that show them in their own words.
func (a *App) unmetPasswordPolicy(ctx context.Context, realm *store.Realm, user *store.User, password string) ([]passwordRule, error) {
	unmet := unmetUserPasswordRules(realm, user, password)
	if user != nil && user.ID != "" && realm.PasswordHistoryCount > 0 {
		reused, err := a.passwordReused(ctx, realm, user, password)
		if err != nil {
			return nil, err
		}
		if reused {
			unmet = append(unmet, ruleHistory)
		}
	}
	return unmet, nil
}

// unmetUserPasswordRules is unmetPasswordRules with the rules that need
// the user's names too, but nothing stored: neither the username nor the
// email. user may be nil, or a user not yet created.
func unmetUserPasswordRules(realm *store.Realm, user *store.User, password string) []passwordRule {
	unmet := unmetPasswordRules(realm, password)
	if user == nil {
		return unmet
	}
	if user.Username != "" && strings.EqualFold(password, user.Username) {
		unmet = append(unmet, ruleNotUsername)
	}
	if user.Email != "" && strings.EqualFold(password, user.Email) {
		unmet = append(unmet, ruleNotEmail)
	}
	return unmet
}

// passwordReused says whether password is the user's current password or
// one of the previous ones the realm remembers: passwordHistoryCount in
// all. Each is an argon2 check, so the realm's count bounds the cost.
// Hashes of formats this server cannot check are skipped.
func (a *App) passwordReused(ctx context.Context, realm *store.Realm, user *store.User, password string) (bool, error) {
	hashes, err := a.store.PasswordHistory(ctx, realm.ID, user.ID, realm.PasswordHistoryCount-1)
	if err != nil {
		return false, err
	}
	if user.PasswordHash != "" {
		hashes = append([]string{user.PasswordHash}, hashes...)
	}
	for _, h := range hashes {
		ok, err := a.verifyPassword(ctx, h, password)
		if errors.Is(err, errBadHash) {
			continue
		} else if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// passwordRefused is a password the realm's policy refuses: to the API,
// the field error on "password" naming every unmet rule in English; to a
// page, the rules, to name in the page's language (passwordPolicyText).
type passwordRefused struct {
	err   *apperr.Error
	unmet []passwordRule
}

func (e *passwordRefused) Error() string { return e.err.Error() }
func (e *passwordRefused) Unwrap() error { return e.err }

// passwordPolicyError is the refusal naming every unmet rule, nil when
// there is none: "password: must be at least 12 characters; must contain
// an uppercase letter, a digit".
func passwordPolicyError(realm *store.Realm, unmet []passwordRule) error {
	if len(unmet) == 0 {
		return nil
	}
	var parts, contain, notBe []string
	for _, r := range unmet {
		switch r {
		case ruleMinLength:
			parts = append(parts, fmt.Sprintf("must be at least %d characters", passwordMinLength(realm)))
		case ruleMaxLength:
			parts = append(parts, fmt.Sprintf("must be at most %d characters", maxPasswordLength))
		case ruleUppercase:
			contain = append(contain, "an uppercase letter")
		case ruleLowercase:
			contain = append(contain, "a lowercase letter")
		case ruleDigit:
			contain = append(contain, "a digit")
		case ruleSpecial:
			contain = append(contain, "a special character")
		case ruleNotUsername:
			notBe = append(notBe, "the username")
		case ruleNotEmail:
			notBe = append(notBe, "the email address")
		case ruleHistory:
			if realm.PasswordHistoryCount == 1 {
				notBe = append(notBe, "the current password")
			} else {
				notBe = append(notBe, fmt.Sprintf("one of the last %d passwords", realm.PasswordHistoryCount))
			}
		}
	}
	if len(contain) > 0 {
		parts = append(parts, "must contain "+strings.Join(contain, ", "))
	}
	if len(notBe) > 0 {
		parts = append(parts, "must not be "+strings.Join(notBe, " or "))
	}
	return &passwordRefused{err: apperr.Field("password", "%s", strings.Join(parts, "; ")), unmet: unmet}
}

// Message keys of the rules, for pages. A rule a password lacks is named
// in one sentence, "The password needs {0}.", with the others it lacks; a
// rule it breaks has a sentence of its own.
var (
	passwordNeedKeys = map[passwordRule]string{
		ruleMinLength: "password.rule.minLength",
		ruleUppercase: "password.rule.uppercase",
		ruleLowercase: "password.rule.lowercase",
		ruleDigit:     "password.rule.digits",
		ruleSpecial:   "password.rule.specialChars",
	}
	passwordBreakKeys = map[passwordRule]string{
		ruleMaxLength:   "password.error.maxLength",
		ruleNotUsername: "password.error.notUsername",
		ruleNotEmail:    "password.error.notEmail",
		ruleHistory:     "password.error.history",
	}
)

// passwordPolicyText says in l's language what the password fails of the
// realm's policy, naming every unmet rule: "The password needs at least
// 12 characters, an uppercase letter. The password must not be your
// username."
func passwordPolicyText(l *ui.Localizer, realm *store.Realm, unmet []passwordRule) string {
	var needs, sentences []string
	for _, rule := range unmet {
		switch rule {
		case ruleMinLength:
			needs = append(needs, l.T(passwordNeedKeys[rule], passwordMinLength(realm)))
		case ruleMaxLength:
			sentences = append(sentences, l.T(passwordBreakKeys[rule], maxPasswordLength))
		case ruleHistory:
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

// pagePasswordText is passwordPolicyText in the language of the page r
// gets; "" when no rule is unmet.
func (a *App) pagePasswordText(r *http.Request, realm *store.Realm, unmet []passwordRule) string {
	if len(unmet) == 0 {
		return ""
	}
	return passwordPolicyText(a.messages.Localizer(a.pageLocale(r)), realm, unmet)
}

// pagePasswordError is the message a page shows at its password field for
// err from newPasswordHash: the unmet rules in the page's language; ""
// when err is no refusal by the policy.
func (a *App) pagePasswordError(r *http.Request, realm *store.Realm, err error) string {
	var refused *passwordRefused
	if !errors.As(err, &refused) {
		return ""
	}
	return a.pagePasswordText(r, realm, refused.unmet)
}

// newPasswordHash checks password against the realm's whole policy for
// user and hashes it. Everything slow happens here, before any
// transaction; setPassword then stores the hash.
func (a *App) newPasswordHash(ctx context.Context, realm *store.Realm, user *store.User, password string) (string, error) {
	if err := a.checkPasswordPolicy(ctx, realm, user, password); err != nil {
		return "", err
	}
	return a.hashPassword(ctx, password)
}

// setPassword makes hash (from newPasswordHash) the user's password, on tx
// or on the store itself, and keeps the replaced hash in the user's
// history as far as the realm remembers passwords. temporary asks for a
// change at the next sign-in. Every flow that sets a password of an
// existing user goes through here, so the history sees every change.
func (a *App) setPassword(ctx context.Context, tx *store.Store, realm *store.Realm, userID, hash string, temporary bool) error {
	// The current password is one of the passwordHistoryCount remembered.
	keep := max(realm.PasswordHistoryCount-1, 0)
	return tx.ChangeUserPassword(ctx, realm.ID, userID, hash, a.now().UnixMilli(), temporary, keep)
}

// passwordExpired says whether the user's password is older than the
// realm's passwordMaxAgeDays at now, so that the sign-in must ask for a
// new one. A user without a password has none to expire. A password whose
// change time is unknown (an import without one) counts from the user's
// creation.
func passwordExpired(realm *store.Realm, user *store.User, now time.Time) bool {
	if realm.PasswordMaxAgeDays <= 0 || user.PasswordHash == "" {
		return false
	}
	changed := user.PasswordChangedAt
	if changed == 0 {
		changed = user.CreatedAt
	}
	maxAge := time.Duration(realm.PasswordMaxAgeDays) * 24 * time.Hour
	return !now.Before(time.UnixMilli(changed).Add(maxAge))
}
