package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/impersonation"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/signingkeys"
	"github.com/idenplane/idenplane/app/themes"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// redacted stands in for a stored secret in responses. Sent back unchanged
// in an update, it keeps the stored value.
const redacted = "**********"

// realmRep is a realm as the API shows it.
type realmRep struct {
	ID                          string         `json:"id"`
	Name                        string         `json:"name"`
	DisplayName                 string         `json:"displayName"`
	Enabled                     bool           `json:"enabled"`
	AccessTokenLifespan         int            `json:"accessTokenLifespan"`
	RefreshTokenLifespan        int            `json:"refreshTokenLifespan"`
	OfflineTokenLifespan        int            `json:"offlineTokenLifespan"`
	SMTPHost                    string         `json:"smtpHost"`
	SMTPPort                    int            `json:"smtpPort"`
	SMTPUser                    string         `json:"smtpUser"`
	SMTPPassword                string         `json:"smtpPassword,omitempty"`
	SMTPFrom                    string         `json:"smtpFrom"`
	SMTPSecure                  bool           `json:"smtpSecure"`
	EmailProvider               string         `json:"emailProvider"`
	EmailProviderConfig         map[string]any `json:"emailProviderConfig,omitempty"`
	PasswordMinLength           int            `json:"passwordMinLength"`
	PasswordRequireUppercase    bool           `json:"passwordRequireUppercase"`
	PasswordRequireLowercase    bool           `json:"passwordRequireLowercase"`
	PasswordRequireDigits       bool           `json:"passwordRequireDigits"`
	PasswordRequireSpecialChars bool           `json:"passwordRequireSpecialChars"`
	PasswordHistoryCount        int            `json:"passwordHistoryCount"`
	PasswordMaxAgeDays          int            `json:"passwordMaxAgeDays"`
	BruteForceEnabled           bool           `json:"bruteForceEnabled"`
	MaxLoginFailures            int            `json:"maxLoginFailures"`
	LockoutDuration             int            `json:"lockoutDuration"`
	FailureResetTime            int            `json:"failureResetTime"`
	PermanentLockoutAfter       int            `json:"permanentLockoutAfter"`
	RegistrationAllowed         bool           `json:"registrationAllowed"`
	RequireEmailVerification    bool           `json:"requireEmailVerification"`
	MFARequired                 bool           `json:"mfaRequired"`
	EventsEnabled               bool           `json:"eventsEnabled"`
	EventsExpiration            int            `json:"eventsExpiration"`
	EnabledEventTypes           []string       `json:"enabledEventTypes"`
	AdminEventsEnabled          bool           `json:"adminEventsEnabled"`
	ThemeName                   string         `json:"themeName"`
	Theme                       map[string]any `json:"theme,omitempty"`
	LoginTheme                  string         `json:"loginTheme"`
	AccountTheme                string         `json:"accountTheme"`
	EmailTheme                  string         `json:"emailTheme"`
	DefaultLocale               string         `json:"defaultLocale"`
	SupportedLocales            []string       `json:"supportedLocales"`
	ImpersonationEnabled        bool           `json:"impersonationEnabled"`
	ImpersonationLifetime       int            `json:"impersonationLifetime"`
	TermsText                   string         `json:"termsText"`
	TermsVersion                string         `json:"termsVersion"`
	CreatedTimestamp            int64          `json:"createdTimestamp"`
}

// toRealmAPIRep shows a realm as the admin API does, secrets redacted.
func toRealmAPIRep(r *store.Realm) realmRep { return toRealmRep(r, false) }

// toRealmRep shows a realm; secrets are redacted unless withSecrets (export).
func toRealmRep(r *store.Realm, withSecrets bool) realmRep {
	rep := realmRep{
		ID: r.ID, Name: r.Name, DisplayName: r.DisplayName, Enabled: r.Enabled,
		AccessTokenLifespan: r.AccessTokenLifespan, RefreshTokenLifespan: r.RefreshTokenLifespan,
		OfflineTokenLifespan: r.OfflineTokenLifespan, SMTPHost: r.SMTPHost, SMTPPort: r.SMTPPort,
		SMTPUser: r.SMTPUser, SMTPPassword: r.SMTPPassword, SMTPFrom: r.SMTPFrom, SMTPSecure: r.SMTPSecure,
		EmailProvider: r.EmailProvider, EmailProviderConfig: r.EmailProviderConfig,
		PasswordMinLength: r.PasswordMinLength, PasswordRequireUppercase: r.PasswordRequireUppercase,
		PasswordRequireLowercase: r.PasswordRequireLowercase, PasswordRequireDigits: r.PasswordRequireDigits,
		PasswordRequireSpecialChars: r.PasswordRequireSpecialChars, PasswordHistoryCount: r.PasswordHistoryCount,
		PasswordMaxAgeDays: r.PasswordMaxAgeDays, BruteForceEnabled: r.BruteForceEnabled,
		MaxLoginFailures: r.MaxLoginFailures, LockoutDuration: r.LockoutDuration,
		FailureResetTime: r.FailureResetTime, PermanentLockoutAfter: r.PermanentLockoutAfter,
		RegistrationAllowed: r.RegistrationAllowed, RequireEmailVerification: r.RequireEmailVerification,
		MFARequired: r.MFARequired, EventsEnabled: r.EventsEnabled, EventsExpiration: r.EventsExpiration,
		EnabledEventTypes: events.EnabledTypesRep(r.EnabledEventTypes), AdminEventsEnabled: r.AdminEventsEnabled,
		ThemeName: r.ThemeName, Theme: r.Theme,
		LoginTheme: r.LoginTheme, AccountTheme: r.AccountTheme, EmailTheme: r.EmailTheme,
		DefaultLocale: r.DefaultLocale, SupportedLocales: append([]string{}, r.SupportedLocales...),
		ImpersonationEnabled: r.ImpersonationEnabled, ImpersonationLifetime: r.ImpersonationLifetime,
		TermsText: r.TermsText, TermsVersion: r.TermsVersion, CreatedTimestamp: r.CreatedAt,
	}
	if !withSecrets {
		if rep.SMTPPassword != "" {
			rep.SMTPPassword = redacted
		}
		rep.EmailProviderConfig = redactConfig(r.EmailProviderConfig)
	}
	return rep
}

// isSecretKey says whether a provider config entry holds a credential.
func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	// A link shown once (an enrolment's, an invitation's) carries its
	// token; linkOnly and the like are settings.
	if strings.HasSuffix(k, "link") {
		return true
	}
	for _, s := range []string{"key", "secret", "token", "password", "bindcredential"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// redactConfig hides every value under a secret-named key, whatever its
// type, and looks inside nested objects for more.
func redactConfig(cfg map[string]any) map[string]any {
	if cfg == nil {
		return nil
	}
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		switch nested, isMap := v.(map[string]any); {
		case isSecretKey(k) && v != nil && v != "":
			v = redacted
		case isMap:
			v = redactConfig(nested)
		}
		out[k] = v
	}
	return out
}

// realmCreate is the create body: every realm field, nil meaning "default".
type realmCreate struct {
	Name                        *string        `json:"name"`
	DisplayName                 *string        `json:"displayName"`
	Enabled                     *bool          `json:"enabled"`
	AccessTokenLifespan         *int           `json:"accessTokenLifespan"`
	RefreshTokenLifespan        *int           `json:"refreshTokenLifespan"`
	OfflineTokenLifespan        *int           `json:"offlineTokenLifespan"`
	SMTPHost                    *string        `json:"smtpHost"`
	SMTPPort                    *int           `json:"smtpPort"`
	SMTPUser                    *string        `json:"smtpUser"`
	SMTPPassword                *string        `json:"smtpPassword"`
	SMTPFrom                    *string        `json:"smtpFrom"`
	SMTPSecure                  *bool          `json:"smtpSecure"`
	EmailProvider               *string        `json:"emailProvider"`
	EmailProviderConfig         map[string]any `json:"emailProviderConfig"`
	PasswordMinLength           *int           `json:"passwordMinLength"`
	PasswordRequireUppercase    *bool          `json:"passwordRequireUppercase"`
	PasswordRequireLowercase    *bool          `json:"passwordRequireLowercase"`
	PasswordRequireDigits       *bool          `json:"passwordRequireDigits"`
	PasswordRequireSpecialChars *bool          `json:"passwordRequireSpecialChars"`
	PasswordHistoryCount        *int           `json:"passwordHistoryCount"`
	PasswordMaxAgeDays          *int           `json:"passwordMaxAgeDays"`
	BruteForceEnabled           *bool          `json:"bruteForceEnabled"`
	MaxLoginFailures            *int           `json:"maxLoginFailures"`
	LockoutDuration             *int           `json:"lockoutDuration"`
	FailureResetTime            *int           `json:"failureResetTime"`
	PermanentLockoutAfter       *int           `json:"permanentLockoutAfter"`
	RegistrationAllowed         *bool          `json:"registrationAllowed"`
	RequireEmailVerification    *bool          `json:"requireEmailVerification"`
	MFARequired                 *bool          `json:"mfaRequired"`
	EventsEnabled               *bool          `json:"eventsEnabled"`
	EventsExpiration            *int           `json:"eventsExpiration"`
	EnabledEventTypes           []string       `json:"enabledEventTypes"`
	AdminEventsEnabled          *bool          `json:"adminEventsEnabled"`
	ThemeName                   *string        `json:"themeName"`
	Theme                       map[string]any `json:"theme"`
	LoginTheme                  *string        `json:"loginTheme"`
	AccountTheme                *string        `json:"accountTheme"`
	EmailTheme                  *string        `json:"emailTheme"`
	DefaultLocale               *string        `json:"defaultLocale"`
	SupportedLocales            []string       `json:"supportedLocales"`
	ImpersonationEnabled        *bool          `json:"impersonationEnabled"`
	ImpersonationLifetime       *int           `json:"impersonationLifetime"`
	TermsText                   *string        `json:"termsText"`
	TermsVersion                *string        `json:"termsVersion"`
}

// defaultRealm holds the defaults of the spec's realm table; where the spec
// gives none, Keycloak's, and Keycloak's closed registration over the
// spec's open one; and login and admin events kept, for the spec's
// eventsExpiration, where Keycloak keeps none (see docs/decisions.md).
func defaultRealm() store.Realm {
	return store.Realm{
		Enabled: true, AccessTokenLifespan: 300, RefreshTokenLifespan: 1800, OfflineTokenLifespan: 2592000,
		SMTPPort: 587, EmailProvider: "smtp", PasswordMinLength: 8, BruteForceEnabled: true,
		MaxLoginFailures: 5, LockoutDuration: 900, FailureResetTime: 43200,
		EventsEnabled: true, AdminEventsEnabled: true, EventsExpiration: 604800, ThemeName: themes.DefaultPreset,
		ImpersonationLifetime: impersonation.DefaultLifetime,
	}
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// apply copies the fields the body gave onto r.
func (c *realmCreate) apply(r *store.Realm) {
	set(&r.Name, c.Name)
	set(&r.DisplayName, c.DisplayName)
	set(&r.Enabled, c.Enabled)
	set(&r.AccessTokenLifespan, c.AccessTokenLifespan)
	set(&r.RefreshTokenLifespan, c.RefreshTokenLifespan)
	set(&r.OfflineTokenLifespan, c.OfflineTokenLifespan)
	set(&r.SMTPHost, c.SMTPHost)
	set(&r.SMTPPort, c.SMTPPort)
	set(&r.SMTPUser, c.SMTPUser)
	set(&r.SMTPPassword, c.SMTPPassword)
	set(&r.SMTPFrom, c.SMTPFrom)
	set(&r.SMTPSecure, c.SMTPSecure)
	set(&r.EmailProvider, c.EmailProvider)
	if c.EmailProviderConfig != nil {
		r.EmailProviderConfig = c.EmailProviderConfig
	}
	set(&r.PasswordMinLength, c.PasswordMinLength)
	set(&r.PasswordRequireUppercase, c.PasswordRequireUppercase)
	set(&r.PasswordRequireLowercase, c.PasswordRequireLowercase)
	set(&r.PasswordRequireDigits, c.PasswordRequireDigits)
	set(&r.PasswordRequireSpecialChars, c.PasswordRequireSpecialChars)
	set(&r.PasswordHistoryCount, c.PasswordHistoryCount)
	set(&r.PasswordMaxAgeDays, c.PasswordMaxAgeDays)
	set(&r.BruteForceEnabled, c.BruteForceEnabled)
	set(&r.MaxLoginFailures, c.MaxLoginFailures)
	set(&r.LockoutDuration, c.LockoutDuration)
	set(&r.FailureResetTime, c.FailureResetTime)
	set(&r.PermanentLockoutAfter, c.PermanentLockoutAfter)
	set(&r.RegistrationAllowed, c.RegistrationAllowed)
	set(&r.RequireEmailVerification, c.RequireEmailVerification)
	set(&r.MFARequired, c.MFARequired)
	set(&r.EventsEnabled, c.EventsEnabled)
	set(&r.EventsExpiration, c.EventsExpiration)
	if c.EnabledEventTypes != nil {
		r.EnabledEventTypes = c.EnabledEventTypes
	}
	set(&r.AdminEventsEnabled, c.AdminEventsEnabled)
	set(&r.ThemeName, c.ThemeName)
	if c.Theme != nil {
		r.Theme = c.Theme
	}
	set(&r.LoginTheme, c.LoginTheme)
	set(&r.AccountTheme, c.AccountTheme)
	set(&r.EmailTheme, c.EmailTheme)
	set(&r.DefaultLocale, c.DefaultLocale)
	if c.SupportedLocales != nil {
		r.SupportedLocales = c.SupportedLocales
	}
	set(&r.ImpersonationEnabled, c.ImpersonationEnabled)
	set(&r.ImpersonationLifetime, c.ImpersonationLifetime)
	set(&r.TermsText, c.TermsText)
	set(&r.TermsVersion, c.TermsVersion)
}

func (a *App) createRealm(w http.ResponseWriter, r *http.Request) error {
	var body realmCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return apperr.Field("name", "is required")
	}
	realm := defaultRealm()
	body.apply(&realm)
	if err := newRealms(a).Create(r.Context(), &realm); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, toRealmAPIRep(&realm))
	return nil
}

// realms makes and changes realms: the admin API's realm routes and the
// setup wizard's realm step (app/setup) both go through it.
type realms struct {
	store   *store.Store
	now     func() time.Time
	makeKey KeyMaker
	allowed []netip.Prefix
	// seed adds what every new realm holds beside its scopes: the
	// account console's client.
	seed func(context.Context, *store.Store, *store.Realm) error
	// themes checks the themes a realm picks (loginTheme and the others)
	// exist and are published; before is the realm as stored, nil for a
	// new one.
	themes func(ctx context.Context, realm, before *store.Realm) error
}

func newRealms(a *App) realms {
	return realms{store: a.store, now: a.now, makeKey: a.makeKey, allowed: a.cfg.OutboundAllowed, seed: a.account.SeedConsole,
		themes: a.themes.CheckPicks}
}

// Defaults is a new realm's settings before any field is given.
func (realms) Defaults() store.Realm { return defaultRealm() }

// Create checks a new realm and stores it with its signing keys, its
// standard scopes and its account console; a name taken is a 409.
func (m realms) Create(ctx context.Context, realm *store.Realm) error {
	if err := validateRealm(realm); err != nil {
		return err
	}
	if err := m.themes(ctx, realm, nil); err != nil {
		return err
	}
	if err := checkRealmOutbound(ctx, realm, nil, m.allowed); err != nil {
		return err
	}
	realm.ID = uuid.NewString()
	now := m.now()
	realm.CreatedAt = now.UnixMilli()
	keys, err := signingkeys.NewRealmKeys(m.makeKey, realm.ID, now)
	if err != nil {
		return err
	}
	err = m.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateRealm(ctx, realm); err != nil {
			return err
		}
		if err := keys.Write(ctx, tx); err != nil {
			return err
		}
		if err := scopes.Seed(ctx, tx, realm); err != nil {
			return err
		}
		return m.seed(ctx, tx, realm)
	})
	if errors.Is(err, store.ErrConflict) {
		return apperr.New(http.StatusConflict, apperr.CodeConflict, "realm %s already exists", realm.Name)
	}
	return err
}

// Update checks realm, which was before as stored, and stores it.
func (m realms) Update(ctx context.Context, realm, before *store.Realm) error {
	if err := validateRealm(realm); err != nil {
		return err
	}
	if err := m.themes(ctx, realm, before); err != nil {
		return err
	}
	if err := checkRealmOutbound(ctx, realm, before, m.allowed); err != nil {
		return err
	}
	return m.store.UpdateRealm(ctx, realm)
}

// listRealms lists the realms administered: the system realm, which holds
// the administrators, is reached by its name (SystemRealmName) only.
func (a *App) listRealms(w http.ResponseWriter, r *http.Request) error {
	realms, err := a.store.ListRealms(r.Context())
	if err != nil {
		return err
	}
	realms = slices.DeleteFunc(realms, func(realm *store.Realm) bool { return realm.Name == SystemRealmName })
	return httpx.List(w, realms, toRealmAPIRep)
}

// realm loads the realm named in the path.
func (a *App) realm(r *http.Request) (*store.Realm, error) {
	name := mux.Vars(r)["realm"]
	realm, err := a.store.GetRealm(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.NotFound("realm " + name)
	}
	return realm, err
}

func (a *App) getRealm(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toRealmAPIRep(realm))
}

// realmUpdateDefaults names the fields an update may change, and what null
// resets each to: the spec's updatable ones, and the password policy,
// brute-force and sign-in settings, which an administrator tunes after
// creation as in Keycloak's realm settings (docs/decisions.md).
func realmUpdateDefaults() map[string]any {
	d := defaultRealm()
	return map[string]any{
		"displayName": "", "enabled": d.Enabled, "accessTokenLifespan": d.AccessTokenLifespan,
		"refreshTokenLifespan": d.RefreshTokenLifespan, "smtpHost": "", "smtpPort": d.SMTPPort,
		"smtpUser": "", "smtpPassword": nil, "smtpFrom": "", "emailProvider": d.EmailProvider,
		"emailProviderConfig": nil, "registrationAllowed": d.RegistrationAllowed,
		"mfaRequired": d.MFARequired, "themeName": d.ThemeName, "theme": nil,
		"offlineTokenLifespan": d.OfflineTokenLifespan, "smtpSecure": d.SMTPSecure,
		"passwordMinLength": d.PasswordMinLength, "passwordRequireUppercase": false, "passwordRequireLowercase": false,
		"passwordRequireDigits": false, "passwordRequireSpecialChars": false,
		"passwordHistoryCount": d.PasswordHistoryCount, "passwordMaxAgeDays": d.PasswordMaxAgeDays,
		"bruteForceEnabled": d.BruteForceEnabled, "maxLoginFailures": d.MaxLoginFailures, "lockoutDuration": d.LockoutDuration,
		"failureResetTime": d.FailureResetTime, "permanentLockoutAfter": d.PermanentLockoutAfter,
		"requireEmailVerification": d.RequireEmailVerification,
		"defaultLocale":            "", "supportedLocales": []any{},
		"impersonationEnabled": false, "impersonationLifetime": d.ImpersonationLifetime,
		"termsText": "", "termsVersion": "",
		// The theme each kind of page and the mails wear (app/themes): its
		// name picks it once it is published, so these change after
		// creation, as Keycloak's do.
		"loginTheme": "", "accountTheme": "", "emailTheme": "",
	}
}

// updateRealm answers PUT and PATCH.
func (a *App) updateRealm(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	u, err := httpx.ReadUpdate[realmRep](r, toRealmAPIRep(realm), realmUpdateDefaults())
	if err != nil {
		return err
	}
	stored := *realm
	realm.DisplayName, realm.Enabled = u.DisplayName, u.Enabled
	realm.AccessTokenLifespan, realm.RefreshTokenLifespan = u.AccessTokenLifespan, u.RefreshTokenLifespan
	realm.SMTPHost, realm.SMTPPort, realm.SMTPUser, realm.SMTPFrom = u.SMTPHost, u.SMTPPort, u.SMTPUser, u.SMTPFrom
	if u.SMTPPassword != redacted {
		realm.SMTPPassword = u.SMTPPassword
	}
	realm.EmailProvider = u.EmailProvider
	realm.EmailProviderConfig = keepRedacted(u.EmailProviderConfig, realm.EmailProviderConfig)
	realm.RegistrationAllowed, realm.MFARequired = u.RegistrationAllowed, u.MFARequired
	realm.ThemeName, realm.Theme = u.ThemeName, u.Theme
	realm.LoginTheme, realm.AccountTheme, realm.EmailTheme = u.LoginTheme, u.AccountTheme, u.EmailTheme
	realm.OfflineTokenLifespan, realm.SMTPSecure = u.OfflineTokenLifespan, u.SMTPSecure
	realm.PasswordMinLength, realm.PasswordRequireUppercase = u.PasswordMinLength, u.PasswordRequireUppercase
	realm.PasswordRequireLowercase, realm.PasswordRequireDigits = u.PasswordRequireLowercase, u.PasswordRequireDigits
	realm.PasswordRequireSpecialChars, realm.PasswordHistoryCount = u.PasswordRequireSpecialChars, u.PasswordHistoryCount
	realm.PasswordMaxAgeDays, realm.BruteForceEnabled = u.PasswordMaxAgeDays, u.BruteForceEnabled
	realm.MaxLoginFailures, realm.LockoutDuration = u.MaxLoginFailures, u.LockoutDuration
	realm.FailureResetTime, realm.PermanentLockoutAfter = u.FailureResetTime, u.PermanentLockoutAfter
	realm.RequireEmailVerification = u.RequireEmailVerification
	realm.DefaultLocale, realm.SupportedLocales = u.DefaultLocale, u.SupportedLocales
	realm.ImpersonationEnabled, realm.ImpersonationLifetime = u.ImpersonationEnabled, u.ImpersonationLifetime
	realm.TermsText, realm.TermsVersion = u.TermsText, u.TermsVersion
	if err := newRealms(a).Update(r.Context(), realm, &stored); err != nil {
		return err
	}
	return httpx.OK(w, toRealmAPIRep(realm))
}

// keepRedacted puts stored secrets back where an update sent the redaction
// placeholder it was shown, at any depth.
func keepRedacted(updated, stored map[string]any) map[string]any {
	for k, v := range updated {
		switch nested, isMap := v.(map[string]any); {
		case v == redacted:
			if old, ok := stored[k]; ok {
				updated[k] = old
			}
		case isMap:
			old, _ := stored[k].(map[string]any)
			updated[k] = keepRedacted(nested, old)
		}
	}
	return updated
}

func (a *App) deleteRealm(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	if realm.Name == SystemRealmName {
		return apperr.New(http.StatusConflict, apperr.CodeInvalidState, "%s is the system realm, which holds the administrators: it is never deleted", SystemRealmName)
	}
	// The spec answers a deletion with the realm as it was.
	if err := a.store.DeleteRealm(r.Context(), realm.Name); err != nil {
		return err
	}
	return httpx.OK(w, toRealmAPIRep(realm))
}

var (
	realmNamePattern = validate.MustPattern(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`, 1, 63)
	colorPattern     = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)
	fontPattern      = validate.MustPattern(`^[A-Za-z0-9 ,'"-]+$`, 1, 200)
)

// reservedRealmNames would collide with fixed admin paths.
var reservedRealmNames = []string{"themes", "import"}

var emailProviders = []string{"smtp", "resend", "sendgrid", "mailgun", "postmark"}

const (
	day  = 86400
	year = 365 * day
)

// validateRealm checks every field of a realm about to be stored.
func validateRealm(r *store.Realm) error {
	switch {
	case !realmNamePattern.MatchString(r.Name):
		return apperr.Field("name", "must be a lowercase slug: 1 to 63 letters a-z, digits and hyphens, not starting or ending with a hyphen")
	case slices.Contains(reservedRealmNames, r.Name):
		return apperr.Field("name", "%q is reserved", r.Name)
	}
	if err := validate.DisplayName("displayName", r.DisplayName, 255); err != nil {
		return err
	}
	ranges := []struct {
		field    string
		val      int
		min, max int
	}{
		{"accessTokenLifespan", r.AccessTokenLifespan, 1, year},
		{"refreshTokenLifespan", r.RefreshTokenLifespan, 1, year},
		{"offlineTokenLifespan", r.OfflineTokenLifespan, 1, 10 * year},
		{"smtpPort", r.SMTPPort, 1, 65535},
		{"passwordMinLength", r.PasswordMinLength, identity.MinPasswordLength, identity.MaxPasswordLength},
		{"passwordHistoryCount", r.PasswordHistoryCount, 0, 100},
		{"passwordMaxAgeDays", r.PasswordMaxAgeDays, 0, 10 * 365},
		{"maxLoginFailures", r.MaxLoginFailures, 1, 1000},
		{"lockoutDuration", r.LockoutDuration, 1, year},
		{"failureResetTime", r.FailureResetTime, 1, year},
		{"permanentLockoutAfter", r.PermanentLockoutAfter, 0, 1000},
		{"eventsExpiration", r.EventsExpiration, 60, 10 * year},
	}
	for _, c := range ranges {
		if c.val < c.min || c.val > c.max {
			return apperr.Field(c.field, "must be between %d and %d", c.min, c.max)
		}
	}
	if err := events.CheckEnabledTypes(r.EnabledEventTypes); err != nil {
		return err
	}
	if err := checkRealmLocales(r); err != nil {
		return err
	}
	if err := impersonation.CheckLifetime(r.ImpersonationLifetime); err != nil {
		return err
	}
	if err := signin.CheckTerms(r.TermsText, r.TermsVersion); err != nil {
		return err
	}
	if r.SMTPHost != "" {
		if err := validate.Host("smtpHost", r.SMTPHost); err != nil {
			return err
		}
	}
	if err := validate.Setting("smtpUser", r.SMTPUser, 255); err != nil {
		return err
	}
	if len(r.SMTPPassword) > 1024 {
		return apperr.Field("smtpPassword", "must be at most 1024 bytes")
	}
	// Any visible character may be in a password, but a control one would
	// break the SMTP AUTH exchange (PLAIN separates its parts with NUL).
	if strings.ContainsFunc(r.SMTPPassword, unicode.IsControl) || !utf8.ValidString(r.SMTPPassword) {
		return apperr.Field("smtpPassword", "must be valid UTF-8 without control characters")
	}
	if r.SMTPFrom != "" {
		if _, err := validate.NormalizeEmail(r.SMTPFrom); err != nil {
			return apperr.Field("smtpFrom", "must be an email address")
		}
	}
	if !slices.Contains(emailProviders, r.EmailProvider) {
		return apperr.Field("emailProvider", "must be one of %s", strings.Join(emailProviders, ", "))
	}
	if r.EmailProvider != "smtp" && len(r.EmailProviderConfig) == 0 {
		return apperr.Field("emailProviderConfig", "is required when emailProvider is %s", r.EmailProvider)
	}
	if len(r.EmailProviderConfig) > 50 {
		return apperr.Field("emailProviderConfig", "must have at most 50 entries")
	}
	if err := checkProviderConfig("emailProviderConfig", r.EmailProviderConfig); err != nil {
		return err
	}
	if !themes.IsPreset(r.ThemeName) {
		return apperr.Field("themeName", "must be one of %s", strings.Join(themes.PresetNames(), ", "))
	}
	// A theme of the realm's own is looked up by the writes that pick it
	// (themes.CheckPicks); an import keeps a name whose theme it does not
	// bring, and the pages wear the realm's own look until there is one.
	for _, t := range [][2]string{{themes.FieldLoginTheme, r.LoginTheme}, {themes.FieldAccountTheme, r.AccountTheme},
		{themes.FieldEmailTheme, r.EmailTheme}} {
		if err := themes.CheckPickSyntax(t[0], t[1]); err != nil {
			return err
		}
	}
	return validateThemeOverrides(r.Theme)
}

// themeOverrideKeys are the color overrides a realm may set on its preset.
var themeOverrideKeys = []string{
	"logoUrl", "faviconUrl", "primaryColor", "secondaryColor", "backgroundColor", "textColor", "linkColor", "fontFamily",
}

func validateThemeOverrides(theme map[string]any) error {
	for k, v := range theme {
		field := "theme." + k
		if !slices.Contains(themeOverrideKeys, k) {
			return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeUnknownField, Field: field,
				Message: fmt.Sprintf("%s: not a theme setting; use one of %s", field, strings.Join(themeOverrideKeys, ", "))}
		}
		s, ok := v.(string)
		if !ok {
			return apperr.Field(field, "must be a string")
		}
		switch {
		case strings.HasSuffix(k, "Url"):
			if err := validate.HTTPURL(field, s); err != nil {
				return err
			}
		case strings.HasSuffix(k, "Color"):
			if !colorPattern.MatchString(s) {
				return apperr.Field(field, "must be a hex color such as #1a73e8")
			}
		case k == "fontFamily":
			if !fontPattern.MatchString(s) {
				return apperr.Field(field, "must be a font list of letters, digits, spaces, commas, quotes and hyphens")
			}
		}
	}
	return nil
}

// maxProviderConfigValue bounds one value of an email provider's settings:
// room for any API key or token.
const maxProviderConfigValue = 4096

// checkProviderConfig checks the keys and string values of an email
// provider's settings, nested ones included: they end up in request URLs
// and headers, where a control character would split them. A bad key is
// reported against the object that holds it.
func checkProviderConfig(field string, cfg map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if err := validate.Identifier(field, k, 255); err != nil {
			return err
		}
		if err := checkProviderValue(field+"."+k, cfg[k]); err != nil {
			return err
		}
	}
	return nil
}

func checkProviderValue(field string, v any) error {
	switch v := v.(type) {
	case string:
		if strings.HasSuffix(field, "Url") && v != "" {
			return validate.HTTPURL(field, v)
		}
		return validate.Setting(field, v, maxProviderConfigValue)
	case map[string]any:
		return checkProviderConfig(field, v)
	case []any:
		for i, e := range v {
			if err := checkProviderValue(fmt.Sprintf("%s[%d]", field, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}
