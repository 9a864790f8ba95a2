package signin

import (
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The messages name each rule, in English and in German.
func TestPasswordPolicyText(t *testing.T) {
	c, err := ui.LoadCatalogues()
	if err != nil {
		t.Fatal(err)
	}
	realm := &store.Realm{PasswordMinLength: 12, PasswordHistoryCount: 1}
	all := []identity.PasswordRule{identity.RuleMinLength, identity.RuleMaxLength, identity.RuleUppercase, identity.RuleLowercase, identity.RuleDigit, identity.RuleSpecial,
		identity.RuleNotUsername, identity.RuleNotEmail, identity.RuleHistory}
	if len(all) != len(passwordNeedKeys)+len(passwordBreakKeys) {
		t.Fatalf("%d rules tested, %d have keys", len(all), len(passwordNeedKeys)+len(passwordBreakKeys))
	}
	for _, tc := range []struct {
		lang, want string
	}{
		{"en", "The password needs at least 12 characters, an uppercase letter, a lowercase letter, a digit, " +
			"a special character (such as ! or #). The password can have at most 256 characters. " +
			"The password must not be your username. The password must not be your email address. " +
			"The password must not be your current password."},
		{"de", "Das Passwort braucht mindestens 12 Zeichen, einen Großbuchstaben, einen Kleinbuchstaben, eine Ziffer, " +
			"ein Sonderzeichen (etwa ! oder #). Das Passwort darf höchstens 256 Zeichen haben. " +
			"Das Passwort darf nicht Ihr Benutzername sein. Das Passwort darf nicht Ihre E-Mail-Adresse sein. " +
			"Das Passwort darf nicht Ihr aktuelles Passwort sein."},
	} {
		if got := PasswordPolicyText(c.Localizer(tc.lang), realm, all); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.lang, got, tc.want)
		}
	}
	realm.PasswordHistoryCount = 5
	if got := PasswordPolicyText(c.Localizer("en"), realm, []identity.PasswordRule{identity.RuleHistory}); got !=
		"The password must not be one of your last 5 passwords." {
		t.Errorf("history of 5: %q", got)
	}
	if strings.Contains(PasswordPolicyText(c.Localizer("de"), realm, []identity.PasswordRule{identity.RuleHistory}), "password.") {
		t.Error("German history message missing")
	}
}
