package ldapfed

import (
	"regexp"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
)

// Active Directory binds by a DN and by two names of its own: the user
// principal name (user@corp.example) and the down-level logon name
// (CORP\user). The directory resolves them; they are checked here only
// for their shape.

// downLevelName is DOMAIN\user: a NetBIOS domain name (up to 15
// characters) and a sAMAccountName, without the characters AD refuses in
// either.
var downLevelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,14}\\[^"/\\\[\]:;|=,+*?<>@\x00-\x1f\x7f]{1,104}$`)

// upnLocal is the part of a user principal name before the @.
var upnLocal = regexp.MustCompile(`^[^"/\\\[\]:;|=,+*?<>@\s\x00-\x1f\x7f]{1,256}$`)

// checkBindName checks bindDn: a DN, user@domain or DOMAIN\user.
func checkBindName(field, name string) error {
	_, dnErr := ldap.ParseDN(name)
	switch {
	case dnErr == nil:
		return nil
	case !strings.Contains(name, "="):
		if downLevelName.MatchString(name) {
			return nil
		}
		if local, domain, ok := strings.Cut(name, "@"); ok && upnLocal.MatchString(local) &&
			validate.Host(field, domain) == nil {
			return nil
		}
	}
	return apperr.Field(field, "must be a distinguished name, user@domain or DOMAIN\\user (Active Directory): %v", dnErr)
}
