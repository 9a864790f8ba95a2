package app

import (
	"net"
	"net/mail"
	"net/url"
	"strconv"
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
// mail.ParseAddress takes Unicode spaces and controls such as U+0085 in an
// address: refused, as the address goes into mail headers.
func normalizeEmail(s string) (string, error) {
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" || len(s) > 254 ||
		strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return "", errInvalidEmail
	}
	return strings.ToLower(s), nil
}

var errInvalidEmail = fieldError("email", "must be an email address")

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && len(s) <= 2048
}

// validURIHost accepts the authority of a URI if it is a host name
// (letters, digits, '-', '_', '.'), an IP address or a bracketed IPv6 one,
// with an optional port from 1 to 65535. url.Parse takes more, such as
// "x.test;a" or "x.test,https:" with an empty port, which would reach the
// form_post page's policy as written, where ';' and ',' end a directive.
func validURIHost(u *url.URL) bool {
	host, port := u.Hostname(), u.Port()
	if host == "" || strings.HasSuffix(u.Host, ":") {
		return false
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	if strings.HasPrefix(u.Host, "[") {
		return net.ParseIP(host) != nil
	}
	return !strings.ContainsFunc(host, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '.'
	})
}
