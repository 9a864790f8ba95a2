package broker

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Redacted stands for a secret in answers and in exports without secrets;
// sent back in an update or an import, it keeps the stored secret.
const Redacted = "**********"

// ClaimMapping says which upstream claims (of the ID token, or of the
// userinfo answer for OAuth 2.0 providers) become which user fields. An
// empty field falls back to the provider type's default (the OpenID
// Connect standard claims, or the preset's). Attributes maps user
// attribute names to claims; RolesClaim names the claim holding the
// upstream's groups or roles (an array of strings, or one space-separated
// string), and Roles maps those values to realm roles granted at sign-in.
type ClaimMapping struct {
	Subject       string            `json:"subject,omitempty"`
	Username      string            `json:"username,omitempty"`
	Email         string            `json:"email,omitempty"`
	EmailVerified string            `json:"emailVerified,omitempty"`
	FirstName     string            `json:"firstName,omitempty"`
	LastName      string            `json:"lastName,omitempty"`
	Attributes    map[string]string `json:"attributes,omitempty"`
	RolesClaim    string            `json:"rolesClaim,omitempty"`
	Roles         map[string]string `json:"roles,omitempty"`
}

// settings are a provider's settings beyond the spec's fields, stored as
// the provider's config JSON.
type settings struct {
	Tenant       string       `json:"tenant,omitempty"`     // microsoft: the directory (default common)
	StoreToken   bool         `json:"storeToken,omitempty"` // keep the upstream tokens for the application to read
	ClaimMapping ClaimMapping `json:"claimMapping"`
	// LogoutURL is the upstream's end_session_endpoint; UpstreamLogout
	// sends a browser signing out through it.
	LogoutURL      string `json:"logoutUrl,omitempty"`
	UpstreamLogout bool   `json:"upstreamLogout,omitempty"`
}

func readSettings(p *store.IdentityProvider) (settings, error) {
	var s settings
	if p.Config == "" {
		return s, nil
	}
	if err := json.Unmarshal([]byte(p.Config), &s); err != nil {
		return s, fmt.Errorf("identity provider %s: decode config: %w", p.Alias, err)
	}
	return s, nil
}

func (s settings) encode() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ProviderRep is an identity provider as the admin API and the realm
// export show it: the spec's fields, then the provider's other settings.
// ClientSecret is Redacted in answers, left out of an export without
// secrets (so that importing that export and exporting again gives the same
// bytes) and in clear in an export with them. Discovery is in
// the answer of a create or update that read the issuer's discovery
// document, and nowhere else.
type ProviderRep struct {
	InternalID       string         `json:"internalId"`
	Alias            string         `json:"alias"`
	DisplayName      string         `json:"displayName"`
	ProviderType     string         `json:"providerType"`
	Enabled          bool           `json:"enabled"`
	ClientID         string         `json:"clientId"`
	ClientSecret     string         `json:"clientSecret,omitempty"`
	AuthorizationURL string         `json:"authorizationUrl"`
	TokenURL         string         `json:"tokenUrl"`
	UserinfoURL      string         `json:"userinfoUrl"`
	JWKSURL          string         `json:"jwksUrl"`
	Issuer           string         `json:"issuer"`
	DefaultScopes    string         `json:"defaultScopes"`
	TrustEmail       bool           `json:"trustEmail"`
	SyncUserProfile  bool           `json:"syncUserProfile"`
	Tenant           string         `json:"tenant,omitempty"`
	StoreToken       bool           `json:"storeToken"`
	ClaimMapping     ClaimMapping   `json:"claimMapping"`
	LogoutURL        string         `json:"logoutUrl"`
	UpstreamLogout   bool           `json:"upstreamLogout"`
	CreatedTimestamp int64          `json:"createdTimestamp"`
	Discovery        *DiscoveryNote `json:"discovery,omitempty"`
}

// DiscoveryNote says what a create or update took from the issuer's
// discovery document.
type DiscoveryNote struct {
	URL    string   `json:"url"`
	Filled []string `json:"filled"` // the fields it set, by their JSON names
}

// How a representation shows the client secret.
type secretView int

const (
	secretRedacted secretView = iota // the admin API
	secretOmitted                    // an export without secrets
	secretClear                      // an export with secrets
)

// toRep shows p, its secret as view says.
func toRep(p *store.IdentityProvider, view secretView) (ProviderRep, error) {
	s, err := readSettings(p)
	if err != nil {
		return ProviderRep{}, err
	}
	rep := ProviderRep{InternalID: p.ID, Alias: p.Alias, DisplayName: p.DisplayName, ProviderType: p.ProviderType,
		Enabled: p.Enabled, ClientID: p.ClientID, AuthorizationURL: p.AuthorizationURL, TokenURL: p.TokenURL,
		UserinfoURL: p.UserinfoURL, JWKSURL: p.JWKSURL, Issuer: p.Issuer, DefaultScopes: p.DefaultScopes,
		TrustEmail: p.TrustEmail, SyncUserProfile: p.SyncUserProfile, Tenant: s.Tenant, StoreToken: s.StoreToken,
		ClaimMapping: s.ClaimMapping, LogoutURL: s.LogoutURL, UpstreamLogout: s.UpstreamLogout, CreatedTimestamp: p.CreatedAt}
	switch {
	case p.ClientSecret == "" || view == secretOmitted:
	case view == secretClear:
		rep.ClientSecret = p.ClientSecret
	default:
		rep.ClientSecret = Redacted
	}
	return rep, nil
}

// apply writes rep's fields onto p. A Redacted secret keeps p's.
func (rep *ProviderRep) apply(p *store.IdentityProvider) {
	p.Alias, p.DisplayName, p.ProviderType, p.Enabled = rep.Alias, rep.DisplayName, rep.ProviderType, rep.Enabled
	p.ClientID, p.AuthorizationURL, p.TokenURL = rep.ClientID, rep.AuthorizationURL, rep.TokenURL
	p.UserinfoURL, p.JWKSURL, p.Issuer, p.DefaultScopes = rep.UserinfoURL, rep.JWKSURL, rep.Issuer, rep.DefaultScopes
	p.TrustEmail, p.SyncUserProfile = rep.TrustEmail, rep.SyncUserProfile
	if rep.ClientSecret != Redacted {
		p.ClientSecret = rep.ClientSecret
	}
	p.Config = settings{Tenant: rep.Tenant, StoreToken: rep.StoreToken, ClaimMapping: rep.ClaimMapping,
		LogoutURL: rep.LogoutURL, UpstreamLogout: rep.UpstreamLogout}.encode()
}

// fillPreset sets, for a social preset, each endpoint, the issuer and the
// scopes the administrator left empty. It returns the fields it filled.
func fillPreset(p *store.IdentityProvider, tenant string) {
	pre, ok := presets[p.ProviderType]
	if !ok {
		return
	}
	for _, f := range []struct {
		dst *string
		val string
	}{
		{&p.AuthorizationURL, pre.authorizationURL}, {&p.TokenURL, pre.tokenURL}, {&p.UserinfoURL, pre.userinfoURL},
		{&p.JWKSURL, pre.jwksURL}, {&p.Issuer, pre.issuer}, {&p.DefaultScopes, pre.scopes},
	} {
		if *f.dst == "" {
			*f.dst = withTenant(f.val, tenant)
		}
	}
	if p.DisplayName == "" {
		p.DisplayName = pre.name
	}
}

var (
	aliasPattern  = validate.MustPattern(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`, 1, 64)
	tenantPattern = validate.MustPattern(`^[a-zA-Z0-9][a-zA-Z0-9.-]*$`, 1, 128)
	// claimPattern is a claim name: what JSON keys in tokens use, with '.'
	// and ':' for namespaced claims.
	claimPattern = validate.MustPattern(`^[a-zA-Z0-9_:./-]+$`, 1, 128)
	scopePattern = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`) // RFC 6749 §3.3 scope-token
)

// validateProvider checks a provider as it is about to be stored, after
// the preset and discovery filled what they could. Each error names its
// field. An imported provider may come without its secret (an export
// without secrets): it is kept, and cannot sign anyone in until an
// administrator sets the secret.
func validateProvider(p *store.IdentityProvider, secretRequired bool) error {
	s, err := readSettings(p)
	if err != nil {
		return err
	}
	if !aliasPattern.MatchString(p.Alias) {
		return apperr.Field("alias", "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if err := validate.DisplayName("displayName", p.DisplayName, 255); err != nil {
		return err
	}
	if !slices.Contains(ProviderTypes, p.ProviderType) {
		return apperr.Field("providerType", "must be one of %s", strings.Join(ProviderTypes, ", "))
	}
	if p.ClientID == "" {
		return apperr.Field("clientId", "is required")
	}
	if err := validate.Setting("clientId", p.ClientID, 255); err != nil {
		return err
	}
	if p.ClientSecret == "" && secretRequired {
		return apperr.Field("clientSecret", "is required")
	}
	if err := validate.Setting("clientSecret", p.ClientSecret, 4096); err != nil {
		return err
	}
	for _, u := range []struct {
		field, value string
		required     bool
	}{
		{"authorizationUrl", p.AuthorizationURL, true},
		{"tokenUrl", p.TokenURL, true},
		{"userinfoUrl", p.UserinfoURL, !usesIDToken(p.ProviderType)},
		{"jwksUrl", p.JWKSURL, usesIDToken(p.ProviderType)},
		{"issuer", p.Issuer, usesIDToken(p.ProviderType)},
	} {
		if err := checkURL(u.field, u.value, u.required, p.ProviderType); err != nil {
			return err
		}
	}
	if len(p.DefaultScopes) > 1024 {
		return apperr.Field("defaultScopes", "must be at most 1024 characters")
	}
	for scope := range strings.FieldsSeq(p.DefaultScopes) {
		if !scopePattern.MatchString(scope) {
			return apperr.Field("defaultScopes", "must be scope names separated by spaces; %q is not one", scope)
		}
	}
	if s.UpstreamLogout && !usesIDToken(p.ProviderType) {
		return apperr.Field("upstreamLogout", "needs a provider type with ID tokens (the id_token_hint of the sign-out)")
	}
	if err := checkURL("logoutUrl", s.LogoutURL, s.UpstreamLogout, p.ProviderType); err != nil {
		return err
	}
	if s.Tenant != "" && p.ProviderType != TypeMicrosoft {
		return apperr.Field("tenant", "applies to the microsoft provider type only")
	}
	if s.Tenant != "" && !tenantPattern.MatchString(s.Tenant) {
		return apperr.Field("tenant", "must be a tenant ID or domain: letters, digits, '.' and '-'")
	}
	return validateMapping(s.ClaimMapping)
}

func checkURL(field, value string, required bool, providerType string) error {
	if value == "" {
		if required {
			return apperr.Field(field, "is required for the %s provider type", providerType)
		}
		return nil
	}
	if err := validate.HTTPURL(field, value); err != nil {
		return err
	}
	if strings.Contains(value, "#") {
		return apperr.Field(field, "must not have a fragment")
	}
	return nil
}

func validateMapping(m ClaimMapping) error {
	for _, c := range []struct{ field, claim string }{
		{"claimMapping.subject", m.Subject}, {"claimMapping.username", m.Username}, {"claimMapping.email", m.Email},
		{"claimMapping.emailVerified", m.EmailVerified}, {"claimMapping.firstName", m.FirstName},
		{"claimMapping.lastName", m.LastName}, {"claimMapping.rolesClaim", m.RolesClaim},
	} {
		if c.claim != "" && !claimPattern.MatchString(c.claim) {
			return apperr.Field(c.field, "must be a claim name: letters, digits, '_', ':', '.', '/' or '-'")
		}
	}
	if len(m.Attributes) > 64 {
		return apperr.Field("claimMapping.attributes", "must map at most 64 attributes")
	}
	for _, name := range slices.Sorted(maps.Keys(m.Attributes)) {
		if err := validate.Identifier("claimMapping.attributes", name, 255); err != nil || name == "" {
			return apperr.Field("claimMapping.attributes", "%q is not an attribute name", name)
		}
		if !claimPattern.MatchString(m.Attributes[name]) {
			return apperr.Field("claimMapping.attributes."+name, "must be a claim name")
		}
	}
	if len(m.Roles) > 0 && m.RolesClaim == "" {
		return apperr.Field("claimMapping.rolesClaim", "is required when claimMapping.roles maps roles")
	}
	if len(m.Roles) > 256 {
		return apperr.Field("claimMapping.roles", "must map at most 256 values")
	}
	for _, upstream := range slices.Sorted(maps.Keys(m.Roles)) {
		if err := validate.Setting("claimMapping.roles", upstream, 255); err != nil || upstream == "" {
			return apperr.Field("claimMapping.roles", "%q is not an upstream group or role", upstream)
		}
		if m.Roles[upstream] == "" {
			return apperr.Field("claimMapping.roles."+upstream, "must name a realm role")
		}
	}
	return nil
}

// effectiveMapping is the claim mapping in force for a provider: the
// administrator's, with the type's defaults (the preset's, else OpenID
// Connect's standard claims) where it is silent.
func effectiveMapping(providerType string, m ClaimMapping) ClaimMapping {
	def := oidcMapping
	if pre, ok := presets[providerType]; ok {
		def = pre.mapping
	}
	for _, f := range []struct {
		dst *string
		def string
	}{
		{&m.Subject, def.Subject}, {&m.Username, def.Username}, {&m.Email, def.Email},
		{&m.EmailVerified, def.EmailVerified}, {&m.FirstName, def.FirstName}, {&m.LastName, def.LastName},
	} {
		if *f.dst == "" {
			*f.dst = f.def
		}
	}
	return m
}
