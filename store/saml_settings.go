package store

import (
	"context"
	"errors"
	"fmt"
)

// SAMLSettings are a realm's SAML identity provider settings.
type SAMLSettings struct {
	RealmID string
	// WantAuthnRequestsSigned: every AuthnRequest must be signed, so a
	// service provider without a certificate cannot sign anyone in.
	WantAuthnRequestsSigned bool
}

// GetSAMLSettings returns a realm's SAML settings; a realm with none
// stored has the defaults.
func (s *Store) GetSAMLSettings(ctx context.Context, realmID string) (*SAMLSettings, error) {
	out := SAMLSettings{RealmID: realmID}
	err := mapErr(s.r.QueryRowContext(ctx, "SELECT want_authn_requests_signed FROM saml_settings WHERE realm_id = $1",
		realmID).Scan(&out.WantAuthnRequestsSigned))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("SAML settings of realm %s: %w", realmID, err)
	}
	return &out, nil
}

// PutSAMLSettings creates or replaces a realm's SAML settings; an unknown
// realm is ErrNotFound.
func (s *Store) PutSAMLSettings(ctx context.Context, st *SAMLSettings) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO saml_settings (realm_id, want_authn_requests_signed) VALUES ($1, $2)
		ON CONFLICT (realm_id) DO UPDATE SET want_authn_requests_signed = excluded.want_authn_requests_signed`,
		st.RealmID, st.WantAuthnRequestsSigned)
	if err != nil {
		return fmt.Errorf("put SAML settings of realm %s: %w", st.RealmID, mapErr(err))
	}
	return nil
}
