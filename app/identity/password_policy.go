package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// A PasswordRule is one rule of a realm's password policy that a password
// can fail. Pages can map these to message keys; the API names them in
// English through PasswordPolicyError.
type PasswordRule string

const (
	RuleMinLength   PasswordRule = "minLength"
	RuleMaxLength   PasswordRule = "maxLength"
	RuleUppercase   PasswordRule = "uppercase"
	RuleLowercase   PasswordRule = "lowercase"
	RuleDigit       PasswordRule = "digits"
	RuleSpecial     PasswordRule = "specialChars"
	RuleNotUsername PasswordRule = "notUsername"
	RuleNotEmail    PasswordRule = "notEmail"
	RuleHistory     PasswordRule = "history"
)

// The server's bounds of a password's length, in characters: a realm may
// ask for more than MinPasswordLength, never for less.
const (
	MinPasswordLength = 8
	MaxPasswordLength = 256
)

// PasswordMinLength is the realm's minimum, never below the server's.
func PasswordMinLength(realm *store.Realm) int {
	return max(MinPasswordLength, realm.PasswordMinLength)
}

// unmetPasswordRules lists the realm's rules that password fails and that
// need nothing but the password: length and character classes.
//
// A special character is any character that is neither a letter, a digit
// nor white space: punctuation, symbols, marks.
func unmetPasswordRules(realm *store.Realm, password string) []PasswordRule {
	var unmet []PasswordRule
	switch n := utf8.RuneCountInString(password); {
	case n < PasswordMinLength(realm):
		unmet = append(unmet, RuleMinLength)
	case n > MaxPasswordLength:
		unmet = append(unmet, RuleMaxLength)
	}
	for _, c := range []struct {
		required bool
		rule     PasswordRule
		is       func(rune) bool
	}{
		{realm.PasswordRequireUppercase, RuleUppercase, unicode.IsUpper},
		{realm.PasswordRequireLowercase, RuleLowercase, unicode.IsLower},
		{realm.PasswordRequireDigits, RuleDigit, unicode.IsDigit},
		{realm.PasswordRequireSpecialChars, RuleSpecial, isSpecialChar},
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
func (c *Core) checkPasswordPolicy(ctx context.Context, realm *store.Realm, user *store.User, password string) error {
	unmet, err := c.unmetPasswordPolicy(ctx, realm, user, password)
	if err != nil {
		return err
	}
	return PasswordPolicyError(realm, unmet)
}

// unmetPasswordPolicy lists the rules of the realm's whole policy that
// password fails, for pages that show them in their own words.
func (c *Core) unmetPasswordPolicy(ctx context.Context, realm *store.Realm, user *store.User, password string) ([]PasswordRule, error) {
	unmet := UnmetUserPasswordRules(realm, user, password)
	if user != nil && user.ID != "" && realm.PasswordHistoryCount > 0 {
		reused, err := c.passwordReused(ctx, realm, user, password)
		if err != nil {
			return nil, err
		}
		if reused {
			unmet = append(unmet, RuleHistory)
		}
	}
	return unmet, nil
}

// UnmetUserPasswordRules is unmetPasswordRules with the rules that need
// the user's names too, but nothing stored: neither the username nor the
// email. user may be nil, or a user not yet created.
func UnmetUserPasswordRules(realm *store.Realm, user *store.User, password string) []PasswordRule {
	unmet := unmetPasswordRules(realm, password)
	if user == nil {
		return unmet
	}
	if user.Username != "" && strings.EqualFold(password, user.Username) {
		unmet = append(unmet, RuleNotUsername)
	}
	if user.Email != "" && strings.EqualFold(password, user.Email) {
		unmet = append(unmet, RuleNotEmail)
	}
	return unmet
}

// passwordReused says whether password is the user's current password or
// one of the previous ones the realm remembers: passwordHistoryCount in
// all. Each is an argon2 check, so the realm's count bounds the cost.
// Hashes of formats this server cannot check are skipped.
func (c *Core) passwordReused(ctx context.Context, realm *store.Realm, user *store.User, password string) (bool, error) {
	hashes, err := c.store.PasswordHistory(ctx, realm.ID, user.ID, realm.PasswordHistoryCount-1)
	if err != nil {
		return false, err
	}
	if user.PasswordHash != "" {
		hashes = append([]string{user.PasswordHash}, hashes...)
	}
	for _, h := range hashes {
		ok, err := c.VerifyPassword(ctx, h, password)
		if errors.Is(err, ErrBadHash) {
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

// PasswordRefused is a password the realm's policy refuses: to the API,
// the field error on "password" naming every unmet rule in English; to a
// page, the rules (Unmet), to name in the page's language.
type PasswordRefused struct {
	err   *apperr.Error
	unmet []PasswordRule
}

func (e *PasswordRefused) Error() string { return e.err.Error() }
func (e *PasswordRefused) Unwrap() error { return e.err }

// Unmet lists the rules the password fails.
func (e *PasswordRefused) Unmet() []PasswordRule { return e.unmet }

// PasswordPolicyError is the refusal naming every unmet rule, nil when
// there is none: "password: must be at least 12 characters; must contain
// an uppercase letter, a digit".
func PasswordPolicyError(realm *store.Realm, unmet []PasswordRule) error {
	if len(unmet) == 0 {
		return nil
	}
	var parts, contain, notBe []string
	for _, r := range unmet {
		switch r {
		case RuleMinLength:
			parts = append(parts, fmt.Sprintf("must be at least %d characters", PasswordMinLength(realm)))
		case RuleMaxLength:
			parts = append(parts, fmt.Sprintf("must be at most %d characters", MaxPasswordLength))
		case RuleUppercase:
			contain = append(contain, "an uppercase letter")
		case RuleLowercase:
			contain = append(contain, "a lowercase letter")
		case RuleDigit:
			contain = append(contain, "a digit")
		case RuleSpecial:
			contain = append(contain, "a special character")
		case RuleNotUsername:
			notBe = append(notBe, "the username")
		case RuleNotEmail:
			notBe = append(notBe, "the email address")
		case RuleHistory:
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
	return &PasswordRefused{err: apperr.Field("password", "%s", strings.Join(parts, "; ")), unmet: unmet}
}

// NewPasswordHash checks password against the realm's whole policy for
// user and hashes it. Everything slow happens here, before any
// transaction; SetPassword then stores the hash.
func (c *Core) NewPasswordHash(ctx context.Context, realm *store.Realm, user *store.User, password string) (string, error) {
	if err := c.checkPasswordPolicy(ctx, realm, user, password); err != nil {
		return "", err
	}
	return c.HashPassword(ctx, password)
}

// SetPassword makes hash (from NewPasswordHash) the user's password, on tx
// or on the store itself, and keeps the replaced hash in the user's
// history as far as the realm remembers passwords. temporary asks for a
// change at the next sign-in. Every flow that sets a password of an
// existing user goes through here, so the history sees every change.
// The password of a user linked to a directory entry is the
// directory's: setting one here is refused (a 400 naming the password).
func (c *Core) SetPassword(ctx context.Context, tx *store.Store, realm *store.Realm, userID, hash string, temporary bool) error {
	if c.federation != nil {
		linked, _, err := c.federation.UserFederation(ctx, tx, realm.ID, userID)
		if err != nil {
			return err
		}
		if linked {
			return ErrDirectoryPassword
		}
	}
	// The current password is one of the passwordHistoryCount remembered.
	keep := max(realm.PasswordHistoryCount-1, 0)
	return tx.ChangeUserPassword(ctx, realm.ID, userID, hash, c.now().UnixMilli(), temporary, keep)
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

// PasswordChangeRequired says whether user must choose a new password
// before a sign-in at now completes: an administrator asked for it, or
// the password is older than the realm's passwordMaxAgeDays. It is the one
// place that decides.
func PasswordChangeRequired(realm *store.Realm, user *store.User, now time.Time) bool {
	return user.RequirePasswordReset || passwordExpired(realm, user, now)
}

// EmailVerificationRequired says whether the realm holds user's sign-in
// until the email address is verified.
func EmailVerificationRequired(realm *store.Realm, user *store.User) bool {
	return realm.RequireEmailVerification && !user.EmailVerified
}
