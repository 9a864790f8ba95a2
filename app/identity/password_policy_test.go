package identity

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

func TestPasswordRules(t *testing.T) {
	all := &store.Realm{PasswordMinLength: 12, PasswordRequireUppercase: true, PasswordRequireLowercase: true,
		PasswordRequireDigits: true, PasswordRequireSpecialChars: true}
	for _, c := range []struct {
		name     string
		realm    *store.Realm
		password string
		want     string // the error's description; "" for none
	}{
		{"server minimum", &store.Realm{}, "short12", "password: must be at least 8 characters"},
		{"server minimum met", &store.Realm{}, "longer12", ""},
		{"realm minimum", &store.Realm{PasswordMinLength: 12}, "elevenchars", "password: must be at least 12 characters"},
		{"realm minimum counts characters, not bytes", &store.Realm{PasswordMinLength: 9}, "ääääääää", "password: must be at least 9 characters"},
		{"maximum", &store.Realm{}, strings.Repeat("a", MaxPasswordLength+1), "password: must be at most 256 characters"},
		{"uppercase", &store.Realm{PasswordRequireUppercase: true}, "lowercase only", "password: must contain an uppercase letter"},
		{"uppercase met, not ASCII", &store.Realm{PasswordRequireUppercase: true}, "éclair Ärger", ""},
		{"lowercase", &store.Realm{PasswordRequireLowercase: true}, "UPPERCASE 123", "password: must contain a lowercase letter"},
		{"digit", &store.Realm{PasswordRequireDigits: true}, "no digits here", "password: must contain a digit"},
		{"digit met", &store.Realm{PasswordRequireDigits: true}, "one digit: 1", ""},
		{"special", &store.Realm{PasswordRequireSpecialChars: true}, "Letters and 123", "password: must contain a special character"},
		{"special met by a symbol", &store.Realm{PasswordRequireSpecialChars: true}, "price20€", ""},
		{"special met by punctuation", &store.Realm{PasswordRequireSpecialChars: true}, "password-12", ""},
		{"two classes", &store.Realm{PasswordRequireUppercase: true, PasswordRequireDigits: true}, "lowercase only",
			"password: must contain an uppercase letter, a digit"},
		{"every rule", all, "abc", "password: must be at least 12 characters; must contain an uppercase letter, a digit, a special character"},
		{"every rule met", all, "Tr0ub4dor&3x", ""},
		{"only classes", all, "abcdefghijklm", "password: must contain an uppercase letter, a digit, a special character"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := PasswordPolicyError(c.realm, unmetPasswordRules(c.realm, c.password))
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Field != "password" || ae.Status != http.StatusBadRequest || ae.Message != c.want {
				t.Fatalf("error %#v, want %q", err, c.want)
			}
		})
	}
}

func TestPasswordNotUsernameOrEmail(t *testing.T) {
	core := New(Deps{})
	realm := &store.Realm{}
	user := &store.User{Username: "alice.liddell", Email: "alice@example.test"}
	for _, c := range []struct {
		password, want string
	}{
		{"alice.liddell", "password: must not be the username"},
		{"ALICE.Liddell", "password: must not be the username"},
		{"Alice@Example.Test", "password: must not be the email address"},
		{"alice.liddell!", ""},
		{"alice@example.test.", ""},
	} {
		err := core.checkPasswordPolicy(t.Context(), realm, user, c.password)
		if got := errDescription(err); got != c.want {
			t.Errorf("%q: %q, want %q", c.password, got, c.want)
		}
	}
	// A username that is the email address too: both rules named.
	both := &store.User{Username: "bob@example.test", Email: "bob@example.test"}
	err := core.checkPasswordPolicy(t.Context(), &store.Realm{PasswordRequireDigits: true}, both, "BOB@example.test")
	if got, want := errDescription(err), "password: must contain a digit; must not be the username or the email address"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func errDescription(err error) string {
	if err == nil {
		return ""
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

func TestPasswordExpired(t *testing.T) {
	day := 24 * time.Hour
	changed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	user := &store.User{PasswordHash: "$argon2id$…", PasswordChangedAt: changed.UnixMilli(), CreatedAt: changed.Add(-100 * day).UnixMilli()}
	for _, c := range []struct {
		name string
		days int
		user *store.User
		now  time.Time
		want bool
	}{
		{"no maximum age", 0, user, changed.Add(1000 * day), false},
		{"young", 30, user, changed.Add(30*day - time.Millisecond), false},
		{"just expired", 30, user, changed.Add(30 * day), true},
		{"old", 30, user, changed.Add(31 * day), true},
		{"no password", 30, &store.User{CreatedAt: user.CreatedAt}, changed.Add(31 * day), false},
		{"change time unknown: from creation", 30, &store.User{PasswordHash: "x", CreatedAt: user.CreatedAt}, changed, true},
	} {
		if got := passwordExpired(&store.Realm{PasswordMaxAgeDays: c.days}, c.user, c.now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
