package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Realm is a tenant: its settings, users and everything else hang off it.
type Realm struct {
	ID                          string
	Name                        string
	DisplayName                 string
	Enabled                     bool
	AccessTokenLifespan         int
	RefreshTokenLifespan        int
	OfflineTokenLifespan        int
	SMTPHost                    string
	SMTPPort                    int
	SMTPUser                    string
	SMTPPassword                string // plaintext here; encrypted in the database
	SMTPFrom                    string
	SMTPSecure                  bool
	EmailProvider               string
	EmailProviderConfig         map[string]any // encrypted in the database: it holds API keys
	PasswordMinLength           int
	PasswordRequireUppercase    bool
	PasswordRequireLowercase    bool
	PasswordRequireDigits       bool
	PasswordRequireSpecialChars bool
	PasswordHistoryCount        int
	PasswordMaxAgeDays          int
	BruteForceEnabled           bool
	MaxLoginFailures            int
	LockoutDuration             int
	FailureResetTime            int
	PermanentLockoutAfter       int
	RegistrationAllowed         bool
	RequireEmailVerification    bool
	MFARequired                 bool
	EventsEnabled               bool
	EventsExpiration            int
	EnabledEventTypes           []string // the login event types recorded; empty: the default set
	AdminEventsEnabled          bool
	ThemeName                   string
	Theme                       map[string]any
	LoginTheme                  string
	AccountTheme                string
	EmailTheme                  string
	DefaultLocale               string   // the pages' and mails' language when nothing else chooses; empty: English
	SupportedLocales            []string // the languages offered; empty: every catalogue
	// ImpersonationEnabled lets an administrator holding users:impersonate
	// sign in as the realm's users (app/impersonation), for
	// ImpersonationLifetime seconds at most.
	ImpersonationEnabled  bool
	ImpersonationLifetime int
	// TermsText is the plain text the terms step of a sign-in shows, and
	// TermsVersion its version: a user accepts each version once.
	TermsText    string
	TermsVersion string
	CreatedAt    int64 // Unix milliseconds
}

const realmColumns = `id, name, display_name, enabled, access_token_lifespan, refresh_token_lifespan,
	offline_token_lifespan, smtp_host, smtp_port, smtp_user, smtp_password, smtp_from, smtp_secure,
	email_provider, email_provider_config, password_min_length, password_require_uppercase,
	password_require_lowercase, password_require_digits, password_require_special,
	password_history_count, password_max_age_days, brute_force_enabled, max_login_failures,
	lockout_duration, failure_reset_time, permanent_lockout_after, registration_allowed,
	require_email_verification, mfa_required, events_enabled, events_expiration,
	admin_events_enabled, theme_name, theme, login_theme, account_theme, email_theme, created_at, enabled_event_types,
	default_locale, supported_locales, impersonation_enabled, impersonation_lifetime, terms_text, terms_version`

// realmValues lists a realm's column values in realmColumns order, sealing
// the secrets.
func (s *Store) realmValues(r *Realm) ([]any, error) {
	var smtpPassword, providerConfig []byte
	if r.SMTPPassword != "" {
		smtpPassword = s.seal([]byte(r.SMTPPassword), "realm.smtp_password:"+r.ID)
	}
	if r.EmailProviderConfig != nil {
		b, err := json.Marshal(r.EmailProviderConfig)
		if err != nil {
			return nil, fmt.Errorf("encode email provider config: %w", err)
		}
		providerConfig = s.seal(b, "realm.email_provider_config:"+r.ID)
	}
	var theme *string
	if r.Theme != nil {
		b, err := json.Marshal(r.Theme)
		if err != nil {
			return nil, fmt.Errorf("encode theme: %w", err)
		}
		t := string(b)
		theme = &t
	}
	eventTypes, err := json.Marshal(r.EnabledEventTypes)
	if err != nil || r.EnabledEventTypes == nil {
		eventTypes = []byte("[]")
	}
	locales, err := json.Marshal(r.SupportedLocales)
	if err != nil || r.SupportedLocales == nil {
		locales = []byte("[]")
	}
	return []any{r.ID, r.Name, r.DisplayName, r.Enabled, r.AccessTokenLifespan, r.RefreshTokenLifespan,
		r.OfflineTokenLifespan, r.SMTPHost, r.SMTPPort, r.SMTPUser, smtpPassword, r.SMTPFrom, r.SMTPSecure,
		r.EmailProvider, providerConfig, r.PasswordMinLength, r.PasswordRequireUppercase,
		r.PasswordRequireLowercase, r.PasswordRequireDigits, r.PasswordRequireSpecialChars,
		r.PasswordHistoryCount, r.PasswordMaxAgeDays, r.BruteForceEnabled, r.MaxLoginFailures,
		r.LockoutDuration, r.FailureResetTime, r.PermanentLockoutAfter, r.RegistrationAllowed,
		r.RequireEmailVerification, r.MFARequired, r.EventsEnabled, r.EventsExpiration,
		r.AdminEventsEnabled, r.ThemeName, theme, r.LoginTheme, r.AccountTheme, r.EmailTheme, r.CreatedAt,
		string(eventTypes), r.DefaultLocale, string(locales), r.ImpersonationEnabled, r.ImpersonationLifetime, r.TermsText, r.TermsVersion}, nil
}

type scanner interface{ Scan(dest ...any) error }

func (s *Store) scanRealm(row scanner) (*Realm, error) {
	var r Realm
	var smtpPassword, providerConfig []byte
	var theme sql.NullString
	var eventTypes, locales string
	err := row.Scan(&r.ID, &r.Name, &r.DisplayName, &r.Enabled, &r.AccessTokenLifespan, &r.RefreshTokenLifespan,
		&r.OfflineTokenLifespan, &r.SMTPHost, &r.SMTPPort, &r.SMTPUser, &smtpPassword, &r.SMTPFrom, &r.SMTPSecure,
		&r.EmailProvider, &providerConfig, &r.PasswordMinLength, &r.PasswordRequireUppercase,
		&r.PasswordRequireLowercase, &r.PasswordRequireDigits, &r.PasswordRequireSpecialChars,
		&r.PasswordHistoryCount, &r.PasswordMaxAgeDays, &r.BruteForceEnabled, &r.MaxLoginFailures,
		&r.LockoutDuration, &r.FailureResetTime, &r.PermanentLockoutAfter, &r.RegistrationAllowed,
		&r.RequireEmailVerification, &r.MFARequired, &r.EventsEnabled, &r.EventsExpiration,
		&r.AdminEventsEnabled, &r.ThemeName, &theme, &r.LoginTheme, &r.AccountTheme, &r.EmailTheme, &r.CreatedAt,
		&eventTypes, &r.DefaultLocale, &locales, &r.ImpersonationEnabled, &r.ImpersonationLifetime, &r.TermsText, &r.TermsVersion)
	if err != nil {
		return nil, mapErr(err)
	}
	pw, err := s.open(smtpPassword, "realm.smtp_password:"+r.ID)
	if err != nil {
		return nil, err
	}
	r.SMTPPassword = string(pw)
	if cfg, err := s.open(providerConfig, "realm.email_provider_config:"+r.ID); err != nil {
		return nil, err
	} else if cfg != nil {
		if err := json.Unmarshal(cfg, &r.EmailProviderConfig); err != nil {
			return nil, fmt.Errorf("decode email provider config of realm %s: %w", r.Name, err)
		}
	}
	if theme.Valid {
		if err := json.Unmarshal([]byte(theme.String), &r.Theme); err != nil {
			return nil, fmt.Errorf("decode theme of realm %s: %w", r.Name, err)
		}
	}
	if err := json.Unmarshal([]byte(eventTypes), &r.EnabledEventTypes); err != nil {
		return nil, fmt.Errorf("decode enabled event types of realm %s: %w", r.Name, err)
	}
	if len(r.EnabledEventTypes) == 0 {
		r.EnabledEventTypes = nil
	}
	if err := json.Unmarshal([]byte(locales), &r.SupportedLocales); err != nil {
		return nil, fmt.Errorf("decode supported locales of realm %s: %w", r.Name, err)
	}
	if len(r.SupportedLocales) == 0 {
		r.SupportedLocales = nil
	}
	return &r, nil
}

// CreateRealm inserts r; ID and CreatedAt must be set. A taken name is ErrConflict.
func (s *Store) CreateRealm(ctx context.Context, r *Realm) error {
	vals, err := s.realmValues(r)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, "INSERT INTO realms ("+realmColumns+", position) SELECT "+placeholders(len(vals))+
		", coalesce(max(position), 0) + 1 FROM realms", vals...)
	if err != nil {
		return fmt.Errorf("create realm %s: %w", r.Name, mapErr(err))
	}
	return nil
}

// GetRealm finds a realm by name.
func (s *Store) GetRealm(ctx context.Context, name string) (*Realm, error) {
	r, err := s.scanRealm(s.r.QueryRowContext(ctx, "SELECT "+realmColumns+" FROM realms WHERE name = $1", name))
	if err != nil {
		return nil, fmt.Errorf("realm %s: %w", name, err)
	}
	return r, nil
}

// GetRealmByID finds a realm by its ID.
func (s *Store) GetRealmByID(ctx context.Context, id string) (*Realm, error) {
	r, err := s.scanRealm(s.r.QueryRowContext(ctx, "SELECT "+realmColumns+" FROM realms WHERE id = $1", id))
	if err != nil {
		return nil, fmt.Errorf("realm with id %s: %w", id, err)
	}
	return r, nil
}

// ListRealms returns every realm, oldest first.
func (s *Store) ListRealms(ctx context.Context) ([]*Realm, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+realmColumns+" FROM realms ORDER BY position")
	if err != nil {
		return nil, fmt.Errorf("list realms: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*Realm
	for rows.Next() {
		r, err := s.scanRealm(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, mapErr(rows.Err())
}

// UpdateRealm writes every field of r except its ID, name and creation time.
func (s *Store) UpdateRealm(ctx context.Context, r *Realm) error {
	vals, err := s.realmValues(r)
	if err != nil {
		return err
	}
	// Every column but id, name and created_at, which never change.
	set := ""
	var args []any
	for i, c := range splitColumns(realmColumns) {
		if c == "id" || c == "name" || c == "created_at" {
			continue
		}
		if len(args) > 0 {
			set += ", "
		}
		args = append(args, vals[i])
		set += fmt.Sprintf("%s = $%d", c, len(args))
	}
	args = append(args, r.ID)
	res, err := s.w.ExecContext(ctx, "UPDATE realms SET "+set+fmt.Sprintf(" WHERE id = $%d", len(args)), args...)
	if err != nil {
		return fmt.Errorf("update realm %s: %w", r.Name, mapErr(err))
	}
	return affectedOne(res, "realm "+r.Name)
}

// DeleteRealm removes a realm and, by cascade, every row that belongs to it.
func (s *Store) DeleteRealm(ctx context.Context, name string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM realms WHERE name = $1", name)
	if err != nil {
		return fmt.Errorf("delete realm %s: %w", name, mapErr(err))
	}
	return affectedOne(res, "realm "+name)
}
