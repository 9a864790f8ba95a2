package app

import (
	"net/mail"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkText accepts printable text of at most max characters.
func checkText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return fieldError(field, "must be valid UTF-8")
	}
	if utf8.RuneCountInString(s) > max {
		return fieldError(field, "must be at most %d characters", max)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return fieldError(field, "must not contain control characters")
	}
	return nil
}

// normalizeEmail accepts a bare address (no display name) and lowercases it.
func normalizeEmail(s string) (string, error) {
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" || len(s) > 254 {
		return "", errInvalidEmail
	}
	return strings.ToLower(s), nil
}

var errInvalidEmail = fieldError("email", "must be an email address")

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && len(s) <= 2048
}
