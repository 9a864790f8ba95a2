package migration

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// The realm JSON format (docs/realm-format.md), as far as a Keycloak
// realm fills it.

type outRealm struct {
	FormatVersion int    `json:"formatVersion"`
	ID            string `json:"id"`
	Name          string `json:"name"`
	outSettings
	ClientScopes      *[]outScope       `json:"clientScopes,omitempty"`
	Clients           []*outClient      `json:"clients"`
	Roles             outRoles          `json:"roles"`
	Groups            []outGroup        `json:"groups"`
	Users             []*outUser        `json:"users"`
	IdentityProviders []json.RawMessage `json:"identityProviders"`
}

type outSettings struct {
	DisplayName                 *string  `json:"displayName,omitempty"`
	Enabled                     *bool    `json:"enabled,omitempty"`
	AccessTokenLifespan         *int     `json:"accessTokenLifespan,omitempty"`
	RefreshTokenLifespan        *int     `json:"refreshTokenLifespan,omitempty"`
	OfflineTokenLifespan        *int     `json:"offlineTokenLifespan,omitempty"`
	SMTPHost                    *string  `json:"smtpHost,omitempty"`
	SMTPPort                    *int     `json:"smtpPort,omitempty"`
	SMTPUser                    *string  `json:"smtpUser,omitempty"`
	SMTPPassword                *string  `json:"smtpPassword,omitempty"`
	SMTPFrom                    *string  `json:"smtpFrom,omitempty"`
	SMTPSecure                  *bool    `json:"smtpSecure,omitempty"`
	PasswordMinLength           *int     `json:"passwordMinLength,omitempty"`
	PasswordRequireUppercase    *bool    `json:"passwordRequireUppercase,omitempty"`
	PasswordRequireLowercase    *bool    `json:"passwordRequireLowercase,omitempty"`
	PasswordRequireDigits       *bool    `json:"passwordRequireDigits,omitempty"`
	PasswordRequireSpecialChars *bool    `json:"passwordRequireSpecialChars,omitempty"`
	PasswordHistoryCount        *int     `json:"passwordHistoryCount,omitempty"`
	PasswordMaxAgeDays          *int     `json:"passwordMaxAgeDays,omitempty"`
	BruteForceEnabled           *bool    `json:"bruteForceEnabled,omitempty"`
	MaxLoginFailures            *int     `json:"maxLoginFailures,omitempty"`
	LockoutDuration             *int     `json:"lockoutDuration,omitempty"`
	FailureResetTime            *int     `json:"failureResetTime,omitempty"`
	RegistrationAllowed         *bool    `json:"registrationAllowed,omitempty"`
	RequireEmailVerification    *bool    `json:"requireEmailVerification,omitempty"`
	EventsEnabled               *bool    `json:"eventsEnabled,omitempty"`
	EventsExpiration            *int     `json:"eventsExpiration,omitempty"`
	AdminEventsEnabled          *bool    `json:"adminEventsEnabled,omitempty"`
	DefaultLocale               *string  `json:"defaultLocale,omitempty"`
	SupportedLocales            []string `json:"supportedLocales,omitempty"`
}

type outScope struct {
	ID              string      `json:"id,omitempty"`
	Name            string      `json:"name"`
	Description     string      `json:"description"`
	Protocol        string      `json:"protocol"`
	ProtocolMappers []outMapper `json:"protocolMappers"`
}

type outMapper struct {
	ID         string            `json:"id,omitempty"`
	Name       string            `json:"name"`
	MapperType string            `json:"mapperType"`
	Protocol   string            `json:"protocol"`
	Config     map[string]string `json:"config"`
}

type outRoleRefs struct {
	RealmRoles  []string            `json:"realmRoles,omitempty"`
	ClientRoles map[string][]string `json:"clientRoles,omitempty"`
}

type outClient struct {
	ID                               string             `json:"id"`
	ClientID                         string             `json:"clientId"`
	Name                             string             `json:"name"`
	Description                      string             `json:"description"`
	ClientType                       string             `json:"clientType"`
	Enabled                          bool               `json:"enabled"`
	RedirectURIs                     []string           `json:"redirectUris"`
	WebOrigins                       []string           `json:"webOrigins"`
	GrantTypes                       []string           `json:"grantTypes"`
	RequireConsent                   bool               `json:"requireConsent"`
	BackchannelLogoutURI             string             `json:"backchannelLogoutUri"`
	BackchannelLogoutSessionRequired *bool              `json:"backchannelLogoutSessionRequired,omitempty"`
	SecretHash                       string             `json:"secretHash,omitempty"`
	DefaultClientScopes              []string           `json:"defaultClientScopes"`
	OptionalClientScopes             []string           `json:"optionalClientScopes"`
	ServiceAccount                   *outServiceAccount `json:"serviceAccount,omitempty"`
}

type outServiceAccount struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Enabled  *bool  `json:"enabled"`
	outRoleRefs
}

type outRole struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Composites  *outRoleRefs `json:"composites,omitempty"`
}

type outRoles struct {
	Realm  []outRole            `json:"realm"`
	Client map[string][]outRole `json:"client"`
}

type outGroup struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ParentID    string `json:"parentId,omitempty"`
	outRoleRefs
}

type outCredential struct {
	Type             string `json:"type"`
	Hash             string `json:"hash"`
	CreatedTimestamp int64  `json:"createdTimestamp,omitempty"`
}

type outFederated struct {
	IdentityProvider string `json:"identityProvider"`
	UserID           string `json:"userId"`
	UserName         string `json:"userName"`
}

type outUser struct {
	ID                   string          `json:"id"`
	Username             string          `json:"username"`
	Email                string          `json:"email,omitempty"`
	FirstName            string          `json:"firstName,omitempty"`
	LastName             string          `json:"lastName,omitempty"`
	Enabled              bool            `json:"enabled"`
	EmailVerified        bool            `json:"emailVerified"`
	RequirePasswordReset bool            `json:"requirePasswordReset"`
	CreatedTimestamp     *int64          `json:"createdTimestamp,omitempty"`
	Credentials          []outCredential `json:"credentials"`
	Groups               []string        `json:"groups"`
	FederatedIdentities  []outFederated  `json:"federatedIdentities"`
	outRoleRefs
}

// realm maps the realm's own settings (keycloakSettings), reporting those
// left out.
func (t *translation) realm(v val) {
	t.out.FormatVersion = 1
	name := t.opts.Realm
	if name == "" {
		name = v.get("realm").str()
		t.paths["name"] = v.join("realm")
	} else {
		t.paths["name"] = "realm"
	}
	if v.r.err != nil {
		return
	}
	if name == "" {
		v.r.fail(v.join("realm"), "is required: the realm's name")
		return
	}
	t.out.Name = name
	t.out.ID = t.id(v.get("id"))
	if t.out.ID == "" {
		t.out.ID = uuid.NewString()
	}
	o := &t.out.outSettings
	o.DisplayName = v.get("displayName").strPtr()
	o.Enabled = v.get("enabled").boolPtr()
	o.AccessTokenLifespan = positive(v.get("accessTokenLifespan"))
	o.RefreshTokenLifespan = positive(v.get("ssoSessionIdleTimeout"))
	o.OfflineTokenLifespan = positive(v.get("offlineSessionIdleTimeout"))
	o.RegistrationAllowed = v.get("registrationAllowed").boolPtr()
	o.RequireEmailVerification = v.get("verifyEmail").boolPtr()
	o.EventsEnabled = v.get("eventsEnabled").boolPtr()
	o.EventsExpiration = positive(v.get("eventsExpiration"))
	o.AdminEventsEnabled = v.get("adminEventsEnabled").boolPtr()
	o.BruteForceEnabled = v.get("bruteForceProtected").boolPtr()
	o.MaxLoginFailures = positive(v.get("failureFactor"))
	o.LockoutDuration = positive(v.get("waitIncrementSeconds"))
	o.FailureResetTime = positive(v.get("maxDeltaTimeSeconds"))
	for k, p := range map[string]string{"displayName": "displayName", "enabled": "enabled", "accessTokenLifespan": "accessTokenLifespan",
		"refreshTokenLifespan": "ssoSessionIdleTimeout", "offlineTokenLifespan": "offlineSessionIdleTimeout",
		"registrationAllowed": "registrationAllowed", "requireEmailVerification": "verifyEmail", "eventsEnabled": "eventsEnabled",
		"eventsExpiration": "eventsExpiration", "adminEventsEnabled": "adminEventsEnabled", "bruteForceEnabled": "bruteForceProtected",
		"maxLoginFailures": "failureFactor", "lockoutDuration": "waitIncrementSeconds", "failureResetTime": "maxDeltaTimeSeconds",
		"smtpHost": "smtpServer.host", "smtpPort": "smtpServer.port", "smtpUser": "smtpServer.user",
		"smtpPassword": "smtpServer.password", "smtpFrom": "smtpServer.from", "passwordMinLength": "passwordPolicy",
		"passwordHistoryCount": "passwordPolicy", "passwordMaxAgeDays": "passwordPolicy", "supportedLocales": "supportedLocales",
		"defaultLocale": "defaultLocale", "id": "id"} {
		t.paths[k] = v.join(p)
	}
	if smtp := v.get("smtpServer"); smtp.set {
		m := smtp.strMap()
		set := func(dst **string, k string) {
			if m[k] != "" {
				s := m[k]
				*dst = &s
			}
		}
		set(&o.SMTPHost, "host")
		set(&o.SMTPUser, "user")
		set(&o.SMTPFrom, "from")
		if p := m["password"]; p != "" && strings.Trim(p, "*") != "" {
			o.SMTPPassword = &p
		} else if p != "" {
			t.rep.skip(smtp.path+".password", KindCredential, "smtp", "the export masks the password: set it on the realm")
		}
		if port, err := strconv.Atoi(m["port"]); err == nil && port > 0 {
			o.SMTPPort = &port
		}
		secure := m["ssl"] == "true" || m["starttls"] == "true"
		o.SMTPSecure = &secure
		if m["fromDisplayName"] != "" || m["replyTo"] != "" {
			t.rep.skip(smtp.path, KindSetting, "smtp", "the sender's display name and reply-to address are not settings here")
		}
	}
	t.passwordPolicy(v.get("passwordPolicy"))
	if v.get("internationalizationEnabled").boolean(false) {
		for i, l := range v.get("supportedLocales").strs() {
			if slices.Contains(t.s.deps.Locales, l) {
				o.SupportedLocales = append(o.SupportedLocales, l)
			} else {
				t.rep.skip(fmt.Sprintf("%s[%d]", v.join("supportedLocales"), i), KindSetting, l, "the pages here have no %s", l)
			}
		}
		if d := v.get("defaultLocale").str(); d != "" && slices.Contains(o.SupportedLocales, d) {
			o.DefaultLocale = &d
		} else if d != "" {
			t.rep.skip(v.join("defaultLocale"), KindSetting, d, "not one of the languages kept")
		}
	}
	if v.get("permanentLockout").boolean(false) {
		t.rep.skip(v.join("permanentLockout"), KindSetting, "", "Keycloak's permanent lockout is not mapped: set permanentLockoutAfter "+
			"(the number of temporary lockouts before a permanent one) on the realm")
	}
	if alg := v.get("otpPolicyAlgorithm").str(); alg != "" && alg != "HmacSHA1" || v.get("otpPolicyDigits").integer(6) != 6 ||
		v.get("otpPolicyPeriod").integer(30) != 30 || v.get("otpPolicyType").str() == "hotp" {
		t.rep.skip(v.join("otpPolicyType"), KindSetting, "", "the TOTP codes here are of 6 digits every 30 seconds with HMAC-SHA1")
	}
	t.rep.imported(v.path, KindRealm, name)
}

// positive is a positive whole number, nil when absent or not positive
// (Keycloak writes 0 for "the default").
func positive(v val) *int {
	p := v.intPtr()
	if p == nil || *p <= 0 || *p > 10*366*24*3600 {
		return nil
	}
	return p
}

// passwordPolicy maps Keycloak's policy string, "length(8) and digits(1)
// and notUsername(undefined)": the rules this server has are kept, the
// others reported.
func (t *translation) passwordPolicy(v val) {
	policy := v.str()
	if policy == "" {
		return
	}
	o := &t.out.outSettings
	yes := true
	for _, part := range strings.Split(policy, " and ") {
		part = strings.TrimSpace(part)
		name, arg, _ := strings.Cut(part, "(")
		arg = strings.TrimSuffix(arg, ")")
		n, err := strconv.Atoi(arg)
		if err != nil {
			n = 1
		}
		need := func(dst **bool) {
			*dst = &yes
			if n > 1 {
				t.rep.skip(v.path, KindSetting, part, "kept as at least one: this server counts no more")
			}
		}
		switch name {
		case "length":
			o.PasswordMinLength = &n
		case "upperCase":
			need(&o.PasswordRequireUppercase)
		case "lowerCase":
			need(&o.PasswordRequireLowercase)
		case "digits":
			need(&o.PasswordRequireDigits)
		case "specialChars":
			need(&o.PasswordRequireSpecialChars)
		case "passwordHistory":
			o.PasswordHistoryCount = &n
		case "forceExpiredPasswordChange":
			o.PasswordMaxAgeDays = &n
		case "hashAlgorithm", "hashIterations":
			t.rep.skip(v.path, KindSetting, part, "new passwords are hashed with argon2id here; imported hashes are checked as they are")
		case "notUsername", "notEmail":
			t.rep.skip(v.path, KindSetting, part, "not a rule of the realm's policy here")
		default:
			t.rep.skip(v.path, KindSetting, part, "no rule of that name here")
		}
	}
}

// keycloakMapped are the realm's keys read, or without meaning here
// (Keycloak's bookkeeping); unmapped reports the others, when set to more
// than an empty or false value.
var keycloakMapped = map[string]bool{
	"id": true, "realm": true, "displayName": true, "enabled": true, "accessTokenLifespan": true, "ssoSessionIdleTimeout": true,
	"offlineSessionIdleTimeout": true, "registrationAllowed": true, "verifyEmail": true, "eventsEnabled": true,
	"eventsExpiration": true, "adminEventsEnabled": true, "bruteForceProtected": true, "failureFactor": true,
	"waitIncrementSeconds": true, "maxDeltaTimeSeconds": true, "smtpServer": true, "passwordPolicy": true,
	"internationalizationEnabled": true, "supportedLocales": true, "defaultLocale": true, "permanentLockout": true,
	"otpPolicyAlgorithm": true, "otpPolicyDigits": true, "otpPolicyPeriod": true, "otpPolicyType": true,
	"clients": true, "clientScopes": true, "roles": true, "groups": true, "users": true, "identityProviders": true,
	"identityProviderMappers": true, "keycloakVersion": true, "notBefore": true, "revokeRefreshToken": false,
	"defaultRole": true, "defaultRoles": true, "requiredCredentials": true, "otpPolicyInitialCounter": true,
	"otpPolicyLookAheadWindow": true, "otpSupportedApplications": true, "otpPolicyCodeReusable": true,
	"displayNameHtml": true, "accessCodeLifespan": true, "accessCodeLifespanUserAction": true,
	"accessCodeLifespanLogin": true, "actionTokenGeneratedByAdminLifespan": true, "actionTokenGeneratedByUserLifespan": true,
	"scopeMappings": true, "clientScopeMappings": true, "defaultDefaultClientScopes": true, "defaultOptionalClientScopes": true,
	"browserSecurityHeaders": true, "attributes": true, "userManagedAccessAllowed": true, "components": true,
	"minimumQuickLoginWaitSeconds": true, "quickLoginCheckMilliSeconds": true, "maxFailureWaitSeconds": true,
	"maxTemporaryLockouts": true, "bruteForceStrategy": true, "sslRequired": true,
}

// keycloakReasons say why some keys are left out.
var keycloakReasons = map[string]string{
	"authenticationFlows":      "Keycloak's authentication flows are not translated: build the flows here (auth-flows.md) and bind them to the clients",
	"authenticatorConfig":      "belongs to Keycloak's authentication flows, which are not translated",
	"requiredActions":          "the required actions here are fixed (a password change, email verification)",
	"browserFlow":              "Keycloak's flows are not translated",
	"directGrantFlow":          "Keycloak's flows are not translated",
	"resetCredentialsFlow":     "Keycloak's flows are not translated",
	"registrationFlow":         "Keycloak's flows are not translated",
	"clientAuthenticationFlow": "Keycloak's flows are not translated",
	"dockerAuthenticationFlow": "Keycloak's flows are not translated",
	"firstBrokerLoginFlow":     "Keycloak's flows are not translated",
	"loginTheme":               "Keycloak's themes do not apply here: pick one of this server's",
	"accountTheme":             "Keycloak's themes do not apply here: pick one of this server's",
	"adminTheme":               "Keycloak's themes do not apply here",
	"emailTheme":               "Keycloak's themes do not apply here: pick one of this server's",
	"userFederationProviders":  "Keycloak's user federation is not translated: add the directory (userFederationProviders) here",
	"federatedUsers":           "users of a directory come back with the directory's sync",
	"organizations":            "Keycloak's organizations are not translated: create them here",
	"enabledEventTypes":        "Keycloak's event types are named otherwise: choose the kept types in the realm's events settings",
}

func (t *translation) unmapped(v val) {
	for _, k := range v.keys() {
		if keycloakMapped[k] {
			continue
		}
		x := v.get(k)
		switch y := x.v.(type) {
		case bool:
			if !y {
				continue
			}
		case string:
			if y == "" {
				continue
			}
		case []any:
			if len(y) == 0 {
				continue
			}
		case map[string]any:
			if len(y) == 0 {
				continue
			}
		case json.Number:
			if y.String() == "0" || y.String() == "-1" {
				continue
			}
		}
		why := keycloakReasons[k]
		if why == "" {
			why = "no realm setting of this server matches it"
		}
		t.rep.skip(x.path, KindSetting, k, "%s", why)
	}
}
