// Package validate holds the checks of what a stored string may be: the
// characters of names, settings and free text, email addresses, URLs and
// host names. It is a leaf: every layer may use it, and it knows nothing
// of what it checks the strings for. Failures are *apperr.Error field
// errors naming the field they are given.
package validate

import (
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/idenplane/idenplane/app/apperr"
)

// TextKind says which characters a stored string may hold. Every name and
// every setting the API stores goes through Chars with one of them;
// docs/decisions.md ("Characters in names") gives the reasons.
type TextKind int

const (
	// IdentifierText names something that is looked up, compared or put
	// in tokens and URLs: usernames, roles, groups, mapper names, attribute
	// keys. Only visible characters and the plain space (U+0020), and no
	// markup ('<', '>').
	IdentifierText TextKind = iota
	// DisplayText is a name people read: a client's or a realm's display
	// name, a label. As IdentifierText, plus markup (it is escaped where it
	// is shown), other spaces, and the zero-width joiners (U+200C, U+200D)
	// and variation selectors that emoji and some scripts need, when they
	// sit between visible characters.
	DisplayText
	// PersonNameText is a person's first or last name: DisplayText without
	// markup, as Keycloak's person-name rule has it. These names go into ID
	// tokens, and from there into pages of applications that may not
	// escape them.
	PersonNameText
	// SettingText is a value the server uses rather than shows: a URL, a
	// host, an API key, a pattern. As IdentifierText, but '<' and '>' are
	// allowed: a regular expression's named group needs them.
	SettingText
	// FreeText is a description: DisplayText plus tab, line feed, carriage
	// return, and the bidi marks (U+200E, U+200F, U+061C) that
	// mixed-direction prose needs. Bidi overrides, embeddings and isolates
	// are refused here too: they reorder what a reader sees.
	FreeText
)

// Identifier accepts an identifier of at most max characters.
func Identifier(field, s string, max int) error {
	return Chars(field, s, max, IdentifierText)
}

// DisplayName accepts a display name of at most max characters.
func DisplayName(field, s string, max int) error { return Chars(field, s, max, DisplayText) }

// PersonName accepts a first or last name of at most max characters.
func PersonName(field, s string, max int) error {
	return Chars(field, s, max, PersonNameText)
}

// Setting accepts a setting's value of at most max characters.
func Setting(field, s string, max int) error { return Chars(field, s, max, SettingText) }

// Text accepts free text (a description) of at most max characters.
func Text(field, s string, max int) error { return Chars(field, s, max, FreeText) }

// Chars is the one check of the characters of a stored string: valid
// UTF-8, at most max characters, none that kind refuses. The error names
// the field and the first character refused, by code point.
func Chars(field, s string, max int, kind TextKind) error {
	if !utf8.ValidString(s) {
		return apperr.Field(field, "must be valid UTF-8")
	}
	if utf8.RuneCountInString(s) > max {
		return apperr.Field(field, "must be at most %d characters", max)
	}
	if i, why := refusedChar(s, kind); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return apperr.Field(field, "must not contain %s (%s)", why, DescribeRune(r))
	}
	return nil
}

// refusedChar finds the first character of s that kind refuses: its byte
// offset and what kind of character it is, or -1.
func refusedChar(s string, kind TextKind) (int, string) {
	prev := rune(-1)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if why := refusedRune(r, prev, s[i+n:], kind); why != "" {
			return i, why
		}
		prev = r
		i += n
	}
	return -1, ""
}

// refusedRune says why r, after prev (-1 at the start) and before rest,
// may not appear in text of kind, or "" when it may.
func refusedRune(r, prev rune, rest string, kind TextKind) string {
	if r < utf8.RuneSelf && r >= 0x20 && r != 0x7f { // printable ASCII, the common case
		if (r == '<' || r == '>') && (kind == IdentifierText || kind == PersonNameText) {
			return "markup characters"
		}
		return ""
	}
	switch {
	case kind == FreeText && (r == '\t' || r == '\n' || r == '\r'):
		return ""
	case unicode.IsControl(r):
		return "control characters"
	case isBidiControl(r):
		return "bidirectional override, embedding or isolate characters"
	case isBidiMark(r):
		if kind == FreeText {
			return ""
		}
		return "bidirectional marks"
	case r == '\u200c' || r == '\u200d': // zero-width non-joiner and joiner
		next, _ := utf8.DecodeRuneInString(rest)
		if kind != IdentifierText && kind != SettingText && isVisible(prev) && isVisible(next) {
			return ""
		}
		return "invisible characters"
	case unicode.Is(unicode.Variation_Selector, r):
		if kind != IdentifierText && kind != SettingText && isVisible(prev) {
			return ""
		}
		return "invisible characters"
	case unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point):
		return "invisible characters"
	case unicode.In(r, unicode.Zl, unicode.Zp):
		return "line or paragraph separators"
	case unicode.Is(unicode.Co, r):
		return "private-use characters"
	case isNoncharacter(r):
		return "noncharacters"
	case (kind == IdentifierText || kind == SettingText) && unicode.IsSpace(r):
		return "spaces other than U+0020"
	}
	return ""
}

// isBidiControl is a character that overrides, embeds or isolates a run of
// text's direction (U+202A–U+202E, U+2066–U+2069): what Trojan Source
// (CVE-2021-42574) uses to show text in an order other than its own.
func isBidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// isBidiMark is an invisible strong-direction mark: LRM, RLM, ALM.
func isBidiMark(r rune) bool { return r == '\u200e' || r == '\u200f' || r == '\u061c' }

// isNoncharacter is one of the 66 code points Unicode never assigns.
func isNoncharacter(r rune) bool { return (r >= 0xfdd0 && r <= 0xfdef) || r&0xfffe == 0xfffe }

// isVisible is a character with a glyph of its own: what a joiner or a
// variation selector may follow (a letter, an emoji, a skin tone, the
// variation selector of an emoji) or precede.
func isVisible(r rune) bool {
	return r > ' ' && r != utf8.RuneError &&
		(unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.IsSymbol(r) || unicode.IsPunct(r))
}

// NormalizeEmail accepts a bare address (no display name) and lowercases it.
func NormalizeEmail(s string) (string, error) {
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" || len(s) > 254 {
		return "", errInvalidEmail
	}
	// net/mail takes any non-ASCII rune in an address, invisible or not,
	// and Unicode spaces such as U+00A0: the address goes into mail headers.
	if i, _ := refusedChar(s, SettingText); i >= 0 || strings.ContainsFunc(s, unicode.IsSpace) {
		return "", errInvalidEmail
	}
	return strings.ToLower(s), nil
}

var errInvalidEmail = apperr.Field("email", "must be an email address")

// IsHTTPURL says whether s is an absolute http or https URL of at most
// 2048 bytes.
func IsHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && len(s) <= 2048
}

// HTTPURL accepts an absolute http or https URL of visible characters.
func HTTPURL(field, s string) error {
	if err := URIChars(field, s); err != nil {
		return err
	}
	if !IsHTTPURL(s) {
		return apperr.Field(field, "must be an absolute http or https URL")
	}
	return nil
}

// URIChars refuses what no URI we store may hold: the control and
// invisible characters refused in settings, and the space, '"', '<' and
// '>' that RFC 3986 leaves out of URIs. Non-ASCII letters stay allowed
// (IRIs); url.Parse percent-encodes them.
func URIChars(field, s string) error {
	if err := Chars(field, s, maxURILength, SettingText); err != nil {
		return err
	}
	if strings.ContainsAny(s, ` "<>`) {
		return apperr.Field(field, `must not contain spaces, '"', '<' or '>': percent-encode them`)
	}
	return nil
}

const maxURILength = 2048

// Host accepts a host name or IPv4 address, as an SMTP server is
// named: DNS labels of letters, digits, '-' and '_', at most 63 characters
// each and 253 in all. A name in another script is given in its xn-- form.
func Host(field, s string) error {
	if err := Chars(field, s, 253, SettingText); err != nil {
		return err
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		ok := label != "" && len(label) <= 63 && label[0] != '-' && label[len(label)-1] != '-'
		for _, c := range []byte(label) {
			ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_')
		}
		if !ok {
			return apperr.Field(field, "must be a host name or IPv4 address: letters, digits, '-' and '_' in dot-separated labels")
		}
	}
	return nil
}

// DescribeRune names a character for a message: '<', or U+202E for one
// that shows as nothing.
func DescribeRune(r rune) string {
	if r > ' ' && r < utf8.RuneSelf && r != 0x7f {
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("U+%04X", r)
}

// URIHost accepts the authority of a URI if it is a host name
// (letters, digits, '-', '_', '.'), an IP address or a bracketed IPv6 one,
// with an optional port from 1 to 65535. url.Parse takes more, such as
// "x.test;a" or "x.test,https:" with an empty port, which would reach the
// form_post page's policy as written, where ';' and ',' end a directive.
func URIHost(u *url.URL) bool {
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
