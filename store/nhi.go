package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
)

// NHI is a non-human identity: a service, workload, device, bot or AI
// agent, backed by a client (ClientID) and that client's service-account
// user.
type NHI struct {
	ID          string
	RealmID     string
	ClientID    string // the backing client's internal ID
	Kind        string
	Name        string // also the backing client's clientId
	Description string
	OwnerType   string // user or group; "" for none
	OwnerID     string
	Metadata    map[string]string
	State       string
	CreatedAt   int64 // Unix milliseconds
	UpdatedAt   int64
	LastUsedAt  int64 // 0: never
	// ServiceAccountUserID is the backing client's service-account user,
	// which holds the identity's roles; read, never written.
	ServiceAccountUserID string
	PolicyID             string // its credential policy; "" for none
	// AdminPermissions are the admin permissions a service account's API
	// keys carry in its realm.
	AdminPermissions []string
}

// nhiSelect reads an identity with its service-account user.
const nhiSelect = `SELECT id, realm_id, client_id, kind, name, description, owner_type, owner_id, metadata, state,
	created_at, updated_at, last_used_at,
	COALESCE((SELECT u.id FROM users u WHERE u.service_account_client_id = nhi_identities.client_id), ''), policy_id,
	admin_permissions
	FROM nhi_identities`

const nhiColumns = `id, realm_id, client_id, kind, name, description, owner_type, owner_id, metadata, state,
	created_at, updated_at, last_used_at, policy_id, admin_permissions`

func scanNHI(row scanner) (*NHI, error) {
	var n NHI
	var meta, perms string
	var used sql.NullInt64
	err := row.Scan(&n.ID, &n.RealmID, &n.ClientID, &n.Kind, &n.Name, &n.Description, &n.OwnerType, &n.OwnerID, &meta,
		&n.State, &n.CreatedAt, &n.UpdatedAt, &used, &n.ServiceAccountUserID, &n.PolicyID, &perms)
	if err != nil {
		return nil, mapErr(err)
	}
	n.LastUsedAt = used.Int64
	if err := json.Unmarshal([]byte(meta), &n.Metadata); err != nil {
		return nil, fmt.Errorf("decode metadata of identity %s: %w", n.ID, err)
	}
	if err := json.Unmarshal([]byte(perms), &n.AdminPermissions); err != nil {
		return nil, fmt.Errorf("decode admin permissions of identity %s: %w", n.ID, err)
	}
	return &n, nil
}

func nhiMetadata(m map[string]string) string {
	if m == nil {
		m = map[string]string{}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// CreateNHI stores a new identity; its backing client must exist. A name
// taken in the realm is a *ConflictError on "name".
func (s *Store) CreateNHI(ctx context.Context, n *NHI) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO nhi_identities (`+nhiColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, $13, $14)`,
		n.ID, n.RealmID, n.ClientID, n.Kind, n.Name, n.Description, n.OwnerType, n.OwnerID, nhiMetadata(n.Metadata),
		n.State, n.CreatedAt, n.UpdatedAt, n.PolicyID, jsonList(n.AdminPermissions))
	if err != nil {
		return fmt.Errorf("create identity %s: %w", n.Name, mapErr(err))
	}
	return nil
}

// GetNHI loads one identity of the realm by its ID.
func (s *Store) GetNHI(ctx context.Context, realmID, id string) (*NHI, error) {
	n, err := scanNHI(s.r.QueryRowContext(ctx, nhiSelect+`
		WHERE realm_id = $1 AND id = $2`, realmID, id))
	if err != nil {
		return nil, fmt.Errorf("identity %s: %w", id, err)
	}
	return n, nil
}

// GetNHIByClient loads the identity a client backs: ErrNotFound for a
// client that backs none.
func (s *Store) GetNHIByClient(ctx context.Context, clientID string) (*NHI, error) {
	n, err := scanNHI(s.r.QueryRowContext(ctx, nhiSelect+` WHERE client_id = $1`, clientID))
	if err != nil {
		return nil, fmt.Errorf("identity of client %s: %w", clientID, err)
	}
	return n, nil
}

// NHIFilter narrows a list of identities; empty fields do not.
type NHIFilter struct {
	Kind   string
	State  string
	Owner  string // an owner's ID
	Search string // a substring of the name, any case
}

// ListNHIs lists the realm's identities by name, one page of them.
func (s *Store) ListNHIs(ctx context.Context, realmID string, f NHIFilter, first, max int) ([]*NHI, error) {
	rows, err := s.r.QueryContext(ctx, nhiSelect+`
		WHERE realm_id = $1 AND ($2 = '' OR kind = $2) AND ($3 = '' OR state = $3) AND ($4 = '' OR owner_id = $4)
			AND ($5 = '' OR LOWER(name) LIKE $6 ESCAPE '\')
		ORDER BY name LIMIT $7 OFFSET $8`, realmID, f.Kind, f.State, f.Owner, f.Search, likePattern(f.Search), max, first)
	if err != nil {
		return nil, fmt.Errorf("list identities: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*NHI
	for rows.Next() {
		n, err := scanNHI(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, mapErr(rows.Err())
}

// UpdateNHI writes an identity's changeable fields and state.
func (s *Store) UpdateNHI(ctx context.Context, n *NHI) error {
	res, err := s.w.ExecContext(ctx, `UPDATE nhi_identities SET description = $3, owner_type = $4, owner_id = $5,
		metadata = $6, state = $7, updated_at = $8, policy_id = $9, admin_permissions = $10 WHERE realm_id = $1 AND id = $2`,
		n.RealmID, n.ID, n.Description, n.OwnerType, n.OwnerID, nhiMetadata(n.Metadata), n.State, n.UpdatedAt, n.PolicyID,
		jsonList(n.AdminPermissions))
	if err != nil {
		return fmt.Errorf("update identity %s: %w", n.ID, mapErr(err))
	}
	return affectedOne(res, "identity "+n.ID)
}

// TouchNHI records a use of the identity at the given time; an earlier
// time than the one stored changes nothing.
func (s *Store) TouchNHI(ctx context.Context, id string, at int64) error {
	_, err := s.w.ExecContext(ctx, `UPDATE nhi_identities SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`, id, at)
	if err != nil {
		return fmt.Errorf("record use of identity %s: %w", id, mapErr(err))
	}
	return nil
}

// NHICredential is one credential of an identity.
type NHICredential struct {
	ID          string
	RealmID     string
	NHIID       string
	Type        string
	Name        string
	Prefix      string // an API key's public part; "" for the other types
	SecretHash  []byte // SHA-256 of a secret or an API key
	PublicKey   string // a public JWK, JSON
	KeyID       string
	Certificate string // PEM
	Scopes      []string
	CreatedAt   int64
	ExpiresAt   int64 // 0: never
	RevokedAt   int64 // 0: not revoked; may be in the future (a grace period)
	LastUsedAt  int64 // 0: never
	ReplacedBy  string
}

const nhiCredentialColumns = `id, realm_id, nhi_id, type, name, prefix, secret_hash, public_key, key_id, certificate,
	scopes, created_at, expires_at, revoked_at, last_used_at, replaced_by`

func scanNHICredential(row scanner) (*NHICredential, error) {
	var c NHICredential
	var scopes string
	var expires, revoked, used sql.NullInt64
	err := row.Scan(&c.ID, &c.RealmID, &c.NHIID, &c.Type, &c.Name, &c.Prefix, &c.SecretHash, &c.PublicKey, &c.KeyID,
		&c.Certificate, &scopes, &c.CreatedAt, &expires, &revoked, &used, &c.ReplacedBy)
	if err != nil {
		return nil, mapErr(err)
	}
	c.ExpiresAt, c.RevokedAt, c.LastUsedAt = expires.Int64, revoked.Int64, used.Int64
	if err := json.Unmarshal([]byte(scopes), &c.Scopes); err != nil {
		return nil, fmt.Errorf("decode scopes of credential %s: %w", c.ID, err)
	}
	return &c, nil
}

func nullTime(t int64) sql.NullInt64 { return sql.NullInt64{Int64: t, Valid: t != 0} }

// CreateNHICredential stores a new credential of an identity.
func (s *Store) CreateNHICredential(ctx context.Context, c *NHICredential) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO nhi_credentials (`+nhiCredentialColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULL, $15)`,
		c.ID, c.RealmID, c.NHIID, c.Type, c.Name, c.Prefix, c.SecretHash, c.PublicKey, c.KeyID, c.Certificate,
		jsonList(c.Scopes), c.CreatedAt, nullTime(c.ExpiresAt), nullTime(c.RevokedAt), c.ReplacedBy)
	if err != nil {
		return fmt.Errorf("create credential of identity %s: %w", c.NHIID, mapErr(err))
	}
	return nil
}

// GetNHICredential loads one credential of the identity.
func (s *Store) GetNHICredential(ctx context.Context, nhiID, id string) (*NHICredential, error) {
	c, err := scanNHICredential(s.r.QueryRowContext(ctx, `SELECT `+nhiCredentialColumns+` FROM nhi_credentials
		WHERE nhi_id = $1 AND id = $2`, nhiID, id))
	if err != nil {
		return nil, fmt.Errorf("credential %s: %w", id, err)
	}
	return c, nil
}

// GetNHICredentialByPrefix finds an API key of the realm by its prefix.
func (s *Store) GetNHICredentialByPrefix(ctx context.Context, realmID, prefix string) (*NHICredential, error) {
	c, err := scanNHICredential(s.r.QueryRowContext(ctx, `SELECT `+nhiCredentialColumns+` FROM nhi_credentials
		WHERE realm_id = $1 AND prefix = $2 AND prefix != ''`, realmID, prefix))
	if err != nil {
		return nil, fmt.Errorf("credential with prefix %s: %w", prefix, err)
	}
	return c, nil
}

// ListNHICredentials lists an identity's credentials, oldest first; with
// types, only those of these types.
func (s *Store) ListNHICredentials(ctx context.Context, nhiID string, types ...string) ([]*NHICredential, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+nhiCredentialColumns+` FROM nhi_credentials
		WHERE nhi_id = $1 ORDER BY created_at, id`, nhiID)
	if err != nil {
		return nil, fmt.Errorf("list credentials of identity %s: %w", nhiID, mapErr(err))
	}
	defer rows.Close()
	var out []*NHICredential
	for rows.Next() {
		c, err := scanNHICredential(rows)
		if err != nil {
			return nil, err
		}
		if len(types) == 0 || slices.Contains(types, c.Type) {
			out = append(out, c)
		}
	}
	return out, mapErr(rows.Err())
}

// RevokeNHICredential makes the credential stop working at the given time,
// or keeps the earlier time it already stops at. replacedBy, when not
// empty, names the credential a rotation issued in its place.
func (s *Store) RevokeNHICredential(ctx context.Context, nhiID, id string, at int64, replacedBy string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE nhi_credentials
		SET revoked_at = CASE WHEN revoked_at IS NULL OR revoked_at > $3 THEN $3 ELSE revoked_at END,
			replaced_by = CASE WHEN $4 = '' THEN replaced_by ELSE $4 END
		WHERE nhi_id = $1 AND id = $2`, nhiID, id, at, replacedBy)
	if err != nil {
		return fmt.Errorf("revoke credential %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "credential "+id)
}

// RevokeNHICredentials makes every credential of the identity stop working
// at the given time at the latest.
func (s *Store) RevokeNHICredentials(ctx context.Context, nhiID string, at int64) error {
	_, err := s.w.ExecContext(ctx, `UPDATE nhi_credentials SET revoked_at = $2
		WHERE nhi_id = $1 AND (revoked_at IS NULL OR revoked_at > $2)`, nhiID, at)
	if err != nil {
		return fmt.Errorf("revoke credentials of identity %s: %w", nhiID, mapErr(err))
	}
	return nil
}

// touchNHICredentialSQL records a use: it ends no token (credentialKeepers).
const touchNHICredentialSQL = `UPDATE nhi_credentials SET last_used_at = $2
	WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`

// TouchNHICredential records a use of the credential at the given time; an
// earlier time than the one stored changes nothing.
func (s *Store) TouchNHICredential(ctx context.Context, id string, at int64) error {
	_, err := s.w.ExecContext(ctx, touchNHICredentialSQL, id, at)
	if err != nil {
		return fmt.Errorf("record use of credential %s: %w", id, mapErr(err))
	}
	return nil
}

// UseAssertionID records the jti (its hash) of a client assertion of the
// client, kept until expiresAt: a jti the client already used, and whose
// assertion has not expired, is a *ConflictError. Expired ones are deleted
// first, so the table holds only assertions that could still be replayed.
func (s *Store) UseAssertionID(ctx context.Context, clientID string, jtiHash []byte, expiresAt, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM nhi_assertion_ids WHERE expires_at <= $1`, now); err != nil {
			return fmt.Errorf("forget expired assertion ids: %w", mapErr(err))
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO nhi_assertion_ids (client_id, jti_hash, expires_at) VALUES ($1, $2, $3)`,
			clientID, jtiHash, expiresAt)
		if err != nil {
			return fmt.Errorf("record assertion id of client %s: %w", clientID, mapErr(err))
		}
		return nil
	})
}

// NHIUsage is an identity's use on one UTC day.
type NHIUsage struct {
	Day            int64 // days since 1970-01-01
	Tokens         int64
	Failures       int64
	Introspections int64
}

// AddNHIUsage adds u to the identity's counts of u.Day.
func (s *Store) AddNHIUsage(ctx context.Context, nhiID string, u NHIUsage) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO nhi_usage (nhi_id, day, tokens, failures, introspections)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (nhi_id, day) DO UPDATE SET tokens = nhi_usage.tokens + excluded.tokens,
			failures = nhi_usage.failures + excluded.failures, introspections = nhi_usage.introspections + excluded.introspections`,
		nhiID, u.Day, u.Tokens, u.Failures, u.Introspections)
	if err != nil {
		return fmt.Errorf("count use of identity %s: %w", nhiID, mapErr(err))
	}
	return nil
}

// ListNHIUsage lists the identity's days of use from day from on, oldest
// first; days without use are not listed.
func (s *Store) ListNHIUsage(ctx context.Context, nhiID string, from int64) ([]NHIUsage, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT day, tokens, failures, introspections FROM nhi_usage
		WHERE nhi_id = $1 AND day >= $2 ORDER BY day`, nhiID, from)
	if err != nil {
		return nil, fmt.Errorf("use of identity %s: %w", nhiID, mapErr(err))
	}
	defer rows.Close()
	var out []NHIUsage
	for rows.Next() {
		var u NHIUsage
		if err := rows.Scan(&u.Day, &u.Tokens, &u.Failures, &u.Introspections); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, u)
	}
	return out, mapErr(rows.Err())
}

// RealmCA is a realm's internal certificate authority for its
// identities' certificates.
type RealmCA struct {
	RealmID     string
	Certificate string // PEM
	PrivateKey  []byte // PKCS #8 DER; sealed in the database
	CreatedAt   int64
}

func realmCAAAD(realmID string) string { return "nhi_realm_ca:" + realmID }

// CreateRealmCA stores the realm's CA, sealing its private key; a realm
// that has one already is a *ConflictError.
func (s *Store) CreateRealmCA(ctx context.Context, ca *RealmCA) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO nhi_realm_cas (realm_id, certificate, private_key, created_at)
		VALUES ($1, $2, $3, $4)`, ca.RealmID, ca.Certificate, s.seal(ca.PrivateKey, realmCAAAD(ca.RealmID)), ca.CreatedAt)
	if err != nil {
		return fmt.Errorf("create CA of realm %s: %w", ca.RealmID, mapErr(err))
	}
	return nil
}

// GetRealmCA loads the realm's CA with its private key opened.
func (s *Store) GetRealmCA(ctx context.Context, realmID string) (*RealmCA, error) {
	ca := RealmCA{RealmID: realmID}
	var sealed []byte
	err := s.r.QueryRowContext(ctx, `SELECT certificate, private_key, created_at FROM nhi_realm_cas WHERE realm_id = $1`,
		realmID).Scan(&ca.Certificate, &sealed, &ca.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("CA of realm %s: %w", realmID, mapErr(err))
	}
	if ca.PrivateKey, err = s.open(sealed, realmCAAAD(realmID)); err != nil {
		return nil, err
	}
	return &ca, nil
}
