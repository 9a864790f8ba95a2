package store

import (
	"context"
	"fmt"
)

// FederatedIdentity links a user to an account at an upstream identity
// provider.
type FederatedIdentity struct {
	ProviderID string
	UserID     string
	RealmID    string
	Subject    string // the upstream's user ID
	Username   string // the upstream's username, as mapped
	Email      string
	Token      string // the upstream's token response (JSON) when kept; sealed in the database
	CreatedAt  int64
	Alias      string // the provider's alias, filled by the reads
}

const federatedColumns = "f.provider_id, f.user_id, f.realm_id, f.subject, f.username, f.email, f.token, f.created_at, p.alias"

func federatedAAD(providerID, userID string) string {
	return "federated_identity.token:" + providerID + ":" + userID
}

func (s *Store) sealedToken(f *FederatedIdentity) []byte {
	if f.Token == "" {
		return nil
	}
	return s.seal([]byte(f.Token), federatedAAD(f.ProviderID, f.UserID))
}

func (s *Store) scanFederated(row scanner) (*FederatedIdentity, error) {
	var f FederatedIdentity
	var token []byte
	if err := row.Scan(&f.ProviderID, &f.UserID, &f.RealmID, &f.Subject, &f.Username, &f.Email, &token, &f.CreatedAt, &f.Alias); err != nil {
		return nil, mapErr(err)
	}
	plain, err := s.open(token, federatedAAD(f.ProviderID, f.UserID))
	if err != nil {
		return nil, err
	}
	f.Token = string(plain)
	return &f, nil
}

// CreateFederatedIdentity links f's user to f's upstream account. A user
// already linked to the provider, or an upstream account already linked to
// a user, is ErrConflict (the column: user_id or subject).
func (s *Store) CreateFederatedIdentity(ctx context.Context, f *FederatedIdentity) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO federated_identities (provider_id, user_id, realm_id, subject, username,
		email, token, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		f.ProviderID, f.UserID, f.RealmID, f.Subject, f.Username, f.Email, s.sealedToken(f), f.CreatedAt)
	if err != nil {
		return fmt.Errorf("link user %s to provider %s: %w", f.UserID, f.ProviderID, mapErr(err))
	}
	return nil
}

// FederatedIdentityBySubject finds the link of a provider's upstream account.
func (s *Store) FederatedIdentityBySubject(ctx context.Context, providerID, subject string) (*FederatedIdentity, error) {
	f, err := s.scanFederated(s.r.QueryRowContext(ctx, "SELECT "+federatedColumns+
		" FROM federated_identities f JOIN identity_providers p ON p.id = f.provider_id WHERE f.provider_id = $1 AND f.subject = $2",
		providerID, subject))
	if err != nil {
		return nil, fmt.Errorf("federated identity: %w", err)
	}
	return f, nil
}

// FederatedIdentity finds a user's link to a provider.
func (s *Store) FederatedIdentity(ctx context.Context, providerID, userID string) (*FederatedIdentity, error) {
	f, err := s.scanFederated(s.r.QueryRowContext(ctx, "SELECT "+federatedColumns+
		" FROM federated_identities f JOIN identity_providers p ON p.id = f.provider_id WHERE f.provider_id = $1 AND f.user_id = $2",
		providerID, userID))
	if err != nil {
		return nil, fmt.Errorf("federated identity: %w", err)
	}
	return f, nil
}

// ListFederatedIdentities returns a user's links, by provider alias.
func (s *Store) ListFederatedIdentities(ctx context.Context, realmID, userID string) ([]*FederatedIdentity, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+federatedColumns+
		" FROM federated_identities f JOIN identity_providers p ON p.id = f.provider_id WHERE f.realm_id = $1 AND f.user_id = $2 ORDER BY p.alias",
		realmID, userID)
	if err != nil {
		return nil, fmt.Errorf("list federated identities: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*FederatedIdentity{}
	for rows.Next() {
		f, err := s.scanFederated(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list federated identities: %w", mapErr(err))
	}
	return out, nil
}

// UpdateFederatedIdentity writes a link's upstream username, email and
// token, as a later sign-in found them.
func (s *Store) UpdateFederatedIdentity(ctx context.Context, f *FederatedIdentity) error {
	res, err := s.w.ExecContext(ctx, `UPDATE federated_identities SET username = $1, email = $2, token = $3
		WHERE provider_id = $4 AND user_id = $5`, f.Username, f.Email, s.sealedToken(f), f.ProviderID, f.UserID)
	if err != nil {
		return fmt.Errorf("update federated identity: %w", mapErr(err))
	}
	return affectedOne(res, "federated identity of user "+f.UserID)
}

// DeleteFederatedIdentity unlinks a user of the realm from a provider.
func (s *Store) DeleteFederatedIdentity(ctx context.Context, realmID, userID, providerID string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM federated_identities WHERE realm_id = $1 AND user_id = $2 AND provider_id = $3",
		realmID, userID, providerID)
	if err != nil {
		return fmt.Errorf("unlink user %s: %w", userID, mapErr(err))
	}
	return affectedOne(res, "federated identity of user "+userID)
}

// AllFederatedIdentities returns every link of a realm, by user and
// provider alias, for the realm export.
func (s *Store) AllFederatedIdentities(ctx context.Context, realmID string) ([]*FederatedIdentity, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+federatedColumns+
		" FROM federated_identities f JOIN identity_providers p ON p.id = f.provider_id WHERE f.realm_id = $1 ORDER BY f.user_id, p.alias",
		realmID)
	if err != nil {
		return nil, fmt.Errorf("list federated identities: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*FederatedIdentity
	for rows.Next() {
		f, err := s.scanFederated(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list federated identities: %w", mapErr(err))
	}
	return out, nil
}
