package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// SAMLServiceProvider is a service provider a realm signs people in to.
type SAMLServiceProvider struct {
	ID          string
	RealmID     string
	EntityID    string // unique in the realm
	Name        string
	Enabled     bool
	ACSURL      string
	SLOURL      string // '' when the SP takes no logout requests
	SLOBinding  string // how logout messages go to SLOURL: SLOBindingPOST or SLOBindingRedirect
	Certificate string // PEM; checks the SP's signatures; '' for none
	// RequestsSigned: the SP's AuthnRequests and LogoutRequests must be
	// signed (with Certificate); without it a signature is checked when
	// one comes.
	RequestsSigned        bool
	EncryptionCertificate string // PEM; '' for none
	EncryptAssertions     bool
	NameIDFormat          string
	SignAssertions        bool
	SignResponses         bool
	// AttributeStatements maps a SAML attribute name to where its values
	// come from (package saml says which sources there are).
	AttributeStatements map[string]string
	IDPInitiated        bool
	CreatedAt           int64 // Unix milliseconds
}

// The bindings logout messages are sent to an SP with.
const (
	SLOBindingPOST     = "HTTP-POST"
	SLOBindingRedirect = "HTTP-Redirect"
)

const samlSPColumns = `id, realm_id, entity_id, name, enabled, acs_url, slo_url, certificate, encryption_certificate,
	encrypt_assertions, name_id_format, sign_assertions, sign_responses, attribute_statements, idp_initiated, created_at,
	slo_binding, requests_signed`

func scanSAMLSP(row scanner) (*SAMLServiceProvider, error) {
	var sp SAMLServiceProvider
	var attrs string
	err := row.Scan(&sp.ID, &sp.RealmID, &sp.EntityID, &sp.Name, &sp.Enabled, &sp.ACSURL, &sp.SLOURL, &sp.Certificate,
		&sp.EncryptionCertificate, &sp.EncryptAssertions, &sp.NameIDFormat, &sp.SignAssertions, &sp.SignResponses,
		&attrs, &sp.IDPInitiated, &sp.CreatedAt, &sp.SLOBinding, &sp.RequestsSigned)
	if err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(attrs), &sp.AttributeStatements); err != nil {
		return nil, fmt.Errorf("decode attribute statements of SAML SP %s: %w", sp.ID, err)
	}
	if sp.AttributeStatements == nil {
		sp.AttributeStatements = map[string]string{}
	}
	return &sp, nil
}

func samlSPArgs(sp *SAMLServiceProvider) ([]any, error) {
	attrs, err := encodeConfig(sp.AttributeStatements)
	if err != nil {
		return nil, err
	}
	return []any{sp.ID, sp.RealmID, sp.EntityID, sp.Name, sp.Enabled, sp.ACSURL, sp.SLOURL, sp.Certificate,
		sp.EncryptionCertificate, sp.EncryptAssertions, sp.NameIDFormat, sp.SignAssertions, sp.SignResponses, attrs,
		sp.IDPInitiated, sp.CreatedAt, sp.SLOBinding, sp.RequestsSigned}, nil
}

// CreateSAMLServiceProvider inserts sp. An entity ID taken in the realm is
// ErrConflict (column entity_id), as is a taken ID (column id); an unknown
// realm is ErrNotFound.
func (s *Store) CreateSAMLServiceProvider(ctx context.Context, sp *SAMLServiceProvider) error {
	args, err := samlSPArgs(sp)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, "INSERT INTO saml_service_providers ("+samlSPColumns+") VALUES ("+placeholders(18)+")",
		args...)
	if err != nil {
		return fmt.Errorf("create SAML SP %s: %w", sp.EntityID, mapErr(err))
	}
	return nil
}

// GetSAMLServiceProvider returns the realm's SP with that ID.
func (s *Store) GetSAMLServiceProvider(ctx context.Context, realmID, id string) (*SAMLServiceProvider, error) {
	sp, err := scanSAMLSP(s.r.QueryRowContext(ctx, "SELECT "+samlSPColumns+
		" FROM saml_service_providers WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("SAML SP %s: %w", id, err)
	}
	return sp, nil
}

// GetSAMLServiceProviderByEntityID returns the realm's SP of that entity ID.
func (s *Store) GetSAMLServiceProviderByEntityID(ctx context.Context, realmID, entityID string) (*SAMLServiceProvider, error) {
	sp, err := scanSAMLSP(s.r.QueryRowContext(ctx, "SELECT "+samlSPColumns+
		" FROM saml_service_providers WHERE realm_id = $1 AND entity_id = $2", realmID, entityID))
	if err != nil {
		return nil, fmt.Errorf("SAML SP %s: %w", entityID, err)
	}
	return sp, nil
}

// ListSAMLServiceProviders returns the realm's SPs by entity ID.
func (s *Store) ListSAMLServiceProviders(ctx context.Context, realmID string) ([]*SAMLServiceProvider, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+samlSPColumns+
		" FROM saml_service_providers WHERE realm_id = $1 ORDER BY entity_id", realmID)
	if err != nil {
		return nil, fmt.Errorf("list SAML SPs: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*SAMLServiceProvider{}
	for rows.Next() {
		sp, err := scanSAMLSP(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, mapErr(rows.Err())
}

// UpdateSAMLServiceProvider replaces every field of sp but its realm and
// creation time; ErrNotFound when the realm has no such SP, ErrConflict
// for an entity ID another SP of the realm has.
func (s *Store) UpdateSAMLServiceProvider(ctx context.Context, sp *SAMLServiceProvider) error {
	attrs, err := encodeConfig(sp.AttributeStatements)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE saml_service_providers SET entity_id = $1, name = $2, enabled = $3,
		acs_url = $4, slo_url = $5, certificate = $6, encryption_certificate = $7, encrypt_assertions = $8,
		name_id_format = $9, sign_assertions = $10, sign_responses = $11, attribute_statements = $12,
		idp_initiated = $13, slo_binding = $14, requests_signed = $15 WHERE realm_id = $16 AND id = $17`,
		sp.EntityID, sp.Name, sp.Enabled, sp.ACSURL, sp.SLOURL, sp.Certificate, sp.EncryptionCertificate,
		sp.EncryptAssertions, sp.NameIDFormat, sp.SignAssertions, sp.SignResponses, attrs, sp.IDPInitiated,
		sp.SLOBinding, sp.RequestsSigned, sp.RealmID, sp.ID)
	if err != nil {
		return fmt.Errorf("update SAML SP %s: %w", sp.ID, mapErr(err))
	}
	return affectedOne(res, "SAML SP "+sp.ID)
}

// DeleteSAMLServiceProvider removes the realm's SP, with its sessions and
// the sign-ins waiting for it.
func (s *Store) DeleteSAMLServiceProvider(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM saml_service_providers WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete SAML SP %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "SAML SP "+id)
}
