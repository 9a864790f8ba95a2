package broker

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/idenplane/idenplane/store"
)

// Provider types: a generic OpenID Connect provider (an ID token proves who
// signed in), a generic OAuth 2.0 provider (a userinfo endpoint says who),
// and the social presets, which fill the endpoints and the claim mapping.
const (
	TypeOIDC      = "oidc"
	TypeOAuth2    = "oauth2"
	TypeGoogle    = "google"
	TypeMicrosoft = "microsoft"
	TypeGitHub    = "github"
	TypeGitLab    = "gitlab"
	TypeApple     = "apple"
	TypeFacebook  = "facebook"
	TypeLinkedIn  = "linkedin"
	TypeDiscord   = "discord"
)

// ProviderTypes lists every provider type, generic ones first.
var ProviderTypes = []string{TypeOIDC, TypeOAuth2, TypeGoogle, TypeMicrosoft, TypeGitHub, TypeGitLab, TypeApple,
	TypeFacebook, TypeLinkedIn, TypeDiscord}

// preset is what a social provider type fills in: the endpoints, the
// scopes asked by default, the claims its answers use, and its name on the
// sign-in page. A field the administrator sets wins over the preset's.
type preset struct {
	name             string // the sign-in button's text: "Sign in with <name>"
	oidc             bool   // answers with an ID token
	issuer           string // may hold {tenant}
	authorizationURL string
	tokenURL         string
	userinfoURL      string
	jwksURL          string
	emailsURL        string // GitHub: the user's addresses, with which is primary and verified
	scopes           string
	mapping          ClaimMapping
}

// oidcMapping is the claim mapping of OpenID Connect's standard claims.
var oidcMapping = ClaimMapping{Subject: "sub", Username: "preferred_username", Email: "email",
	EmailVerified: "email_verified", FirstName: "given_name", LastName: "family_name"}

// presets are the social providers, as their documentation gives them.
// Microsoft's {tenant} is the provider's tenant setting (default "common").
var presets = map[string]preset{
	TypeGoogle: {name: "Google", oidc: true, issuer: "https://accounts.google.com",
		authorizationURL: "https://accounts.google.com/o/oauth2/v2/auth", tokenURL: "https://oauth2.googleapis.com/token",
		userinfoURL: "https://openidconnect.googleapis.com/v1/userinfo", jwksURL: "https://www.googleapis.com/oauth2/v3/certs",
		scopes: "openid email profile", mapping: withUsername(oidcMapping, "email")},
	TypeMicrosoft: {name: "Microsoft", oidc: true, issuer: "https://login.microsoftonline.com/{tenant}/v2.0",
		authorizationURL: "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize",
		tokenURL:         "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
		userinfoURL:      "https://graph.microsoft.com/oidc/userinfo",
		jwksURL:          "https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys",
		scopes:           "openid email profile", mapping: withUsername(oidcMapping, "preferred_username")},
	TypeGitHub: {name: "GitHub", authorizationURL: "https://github.com/login/oauth/authorize",
		tokenURL: "https://github.com/login/oauth/access_token", userinfoURL: "https://api.github.com/user",
		emailsURL: "https://api.github.com/user/emails", scopes: "read:user user:email",
		mapping: ClaimMapping{Subject: "id", Username: "login", Email: "email", EmailVerified: "email_verified", FirstName: "name"}},
	TypeGitLab: {name: "GitLab", oidc: true, issuer: "https://gitlab.com", authorizationURL: "https://gitlab.com/oauth/authorize",
		tokenURL: "https://gitlab.com/oauth/token", userinfoURL: "https://gitlab.com/oauth/userinfo",
		jwksURL: "https://gitlab.com/oauth/discovery/keys", scopes: "openid email profile",
		mapping: withUsername(oidcMapping, "nickname")},
	TypeApple: {name: "Apple", oidc: true, issuer: "https://appleid.apple.com",
		authorizationURL: "https://appleid.apple.com/auth/authorize", tokenURL: "https://appleid.apple.com/auth/token",
		jwksURL: "https://appleid.apple.com/auth/keys", scopes: "openid",
		mapping: withUsername(oidcMapping, "email")},
	TypeFacebook: {name: "Facebook", authorizationURL: "https://www.facebook.com/v19.0/dialog/oauth",
		tokenURL:    "https://graph.facebook.com/v19.0/oauth/access_token",
		userinfoURL: "https://graph.facebook.com/me?fields=id,name,email,first_name,last_name",
		scopes:      "email public_profile",
		mapping:     ClaimMapping{Subject: "id", Username: "email", Email: "email", FirstName: "first_name", LastName: "last_name"}},
	TypeLinkedIn: {name: "LinkedIn", oidc: true, issuer: "https://www.linkedin.com/oauth",
		authorizationURL: "https://www.linkedin.com/oauth/v2/authorization", tokenURL: "https://www.linkedin.com/oauth/v2/accessToken",
		userinfoURL: "https://api.linkedin.com/v2/userinfo", jwksURL: "https://www.linkedin.com/oauth/openid/jwks",
		scopes: "openid profile email", mapping: withUsername(oidcMapping, "email")},
	TypeDiscord: {name: "Discord", authorizationURL: "https://discord.com/oauth2/authorize",
		tokenURL: "https://discord.com/api/oauth2/token", userinfoURL: "https://discord.com/api/users/@me",
		scopes:  "identify email",
		mapping: ClaimMapping{Subject: "id", Username: "username", Email: "email", EmailVerified: "verified", FirstName: "global_name"}},
}

func withUsername(m ClaimMapping, claim string) ClaimMapping {
	m.Username = claim
	return m
}

// defaultTenant is Microsoft's tenant when none is set: accounts of any
// organization and personal accounts.
const defaultTenant = "common"

// withTenant puts a Microsoft tenant into a preset's URL.
func withTenant(s, tenant string) string {
	if tenant == "" {
		tenant = defaultTenant
	}
	return strings.ReplaceAll(s, "{tenant}", tenant)
}

// usesIDToken says whether a provider of type t proves the sign-in with an
// ID token (OpenID Connect) rather than a userinfo answer alone.
func usesIDToken(t string) bool {
	if p, ok := presets[t]; ok {
		return p.oidc
	}
	return t == TypeOIDC
}

// typeName is a provider type's name on the sign-in page.
func typeName(t string) string {
	if p, ok := presets[t]; ok {
		return p.name
	}
	return ""
}

// Microsoft's multi-tenant endpoints (common, organizations, consumers)
// sign tokens whose issuer names the user's own directory,
// https://login.microsoftonline.com/{tid}/v2.0, not the configured one.
var multiTenants = []string{"common", "organizations", "consumers"}

// isMultiTenant says whether p is a Microsoft provider on a multi-tenant
// endpoint, whose ID tokens' issuer is checked by checkTenantIssuer.
func isMultiTenant(p *store.IdentityProvider) bool {
	if p.ProviderType != TypeMicrosoft {
		return false
	}
	for _, t := range multiTenants {
		if p.Issuer == withTenant(presets[TypeMicrosoft].issuer, t) {
			return true
		}
	}
	return false
}

// tenantIssuer is the issuer Microsoft's tokens of directory tid carry.
var tenantIssuer = regexp.MustCompile(`^https://login\.microsoftonline\.com/([0-9a-f-]{36})/v2\.0$`)

// checkTenantIssuer checks a multi-tenant ID token's issuer: Microsoft's,
// naming the same directory as the token's tid claim.
func checkTenantIssuer(idToken *oidc.IDToken) error {
	var c struct {
		TID string `json:"tid"`
	}
	if err := idToken.Claims(&c); err != nil {
		return err
	}
	m := tenantIssuer.FindStringSubmatch(idToken.Issuer)
	if m == nil || c.TID == "" || m[1] != c.TID {
		return fmt.Errorf("issuer %q is not Microsoft's for tenant %q", idToken.Issuer, c.TID)
	}
	return nil
}
