package setup

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/idenplane/idenplane/app/apperr"
)

// The first administrator's password holds every permission of the
// server, so the wizard asks more of it than the system realm's policy
// (which CreateAdmin applies too): length and a mix of kinds of
// characters.
const (
	adminPasswordMinLength = 12
	adminPasswordClasses   = 3 // of lowercase, uppercase, digits, symbols
)

// checkAdminPassword refuses a weak password for the first
// administrator, saying what a strong one is.
func checkAdminPassword(username, email, password string) error {
	classes := 0
	for _, is := range []func(rune) bool{unicode.IsLower, unicode.IsUpper, unicode.IsDigit, isSymbol} {
		if strings.ContainsFunc(password, is) {
			classes++
		}
	}
	if utf8.RuneCountInString(password) < adminPasswordMinLength || classes < adminPasswordClasses {
		return apperr.Field("password", "is too weak: use at least %d characters mixing at least three of lowercase letters, "+
			"uppercase letters, digits and symbols", adminPasswordMinLength).WithKey("setup.admin.weakPassword", adminPasswordMinLength)
	}
	lower := strings.ToLower(password)
	if len(username) >= 3 && strings.Contains(lower, strings.ToLower(username)) {
		return apperr.Field("password", "must not contain the username").WithKey("setup.admin.passwordHasUsername")
	}
	if email != "" && strings.Contains(lower, strings.ToLower(email)) {
		return apperr.Field("password", "must not contain the email address").WithKey("setup.admin.passwordHasEmail")
	}
	return nil
}

func isSymbol(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsSpace(r) }
