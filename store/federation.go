package store

import (
	"context"
	"fmt"
)

// FederationProvider is a user federation provider of a realm: a directory
// whose users may sign in and be imported.
type FederationProvider struct {
	ID           string
	RealmID      string
	Name         string
	ProviderType string // "ldap"
	Enabled      bool
	Priority     int // lower first
	// Config is the provider type's settings, a JSON object; its owner
	// reads and checks it.
	Config string
	// BindCredential is the password of the account the provider binds
	// as; sealed with the master key at rest.
	BindCredential string
	CreatedAt      int64 // Unix milliseconds
	// LastSync is the outcome of the last sync, a JSON object; empty
	// before the first.
	LastSync string
	// ChangedSince is where the next changed-user sync starts (Unix
	// milliseconds): when the last successful sync began.
	ChangedSince int64
}

const federationColumns = `id, realm_id, name, provider_type, enabled, priority, config, bind_credential, created_at,
	last_sync, changed_since`

func federationAAD(id string) string { return "federation_providers.bind_credential:" + id }

func (s *Store) scanFederationProvider(row scanner) (*FederationProvider, error) {
	var p FederationProvider
	var sealed []byte
	err := row.Scan(&p.ID, &p.RealmID, &p.Name, &p.ProviderType, &p.Enabled, &p.Priority, &p.Config, &sealed,
		&p.CreatedAt, &p.LastSync, &p.ChangedSince)
	if err != nil {
		return nil, mapErr(err)
	}
	plain, err := s.open(sealed, federationAAD(p.ID))
	if err != nil {
		return nil, err
	}
	p.BindCredential = string(plain)
	return &p, nil
}

func (s *Store) sealBindCredential(p *FederationProvider) []byte {
	if p.BindCredential == "" {
		return nil
	}
	return s.seal([]byte(p.BindCredential), federationAAD(p.ID))
}

// CreateFederationProvider inserts p. A name another provider of the realm
// holds is ErrConflict; an unknown realm ErrNotFound.
func (s *Store) CreateFederationProvider(ctx context.Context, p *FederationProvider) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO federation_providers ("+federationColumns+
		") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
		p.ID, p.RealmID, p.Name, p.ProviderType, p.Enabled, p.Priority, p.Config, s.sealBindCredential(p), p.CreatedAt,
		p.LastSync, p.ChangedSince)
	if err != nil {
		return fmt.Errorf("create federation provider %s: %w", p.Name, mapErr(err))
	}
	return nil
}

// GetFederationProvider finds a provider of a realm by ID.
func (s *Store) GetFederationProvider(ctx context.Context, realmID, id string) (*FederationProvider, error) {
	p, err := s.scanFederationProvider(s.r.QueryRowContext(ctx,
		"SELECT "+federationColumns+" FROM federation_providers WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("federation provider %s: %w", id, err)
	}
	return p, nil
}

// ListFederationProviders lists a realm's providers in the order they are
// asked: by priority, then name.
func (s *Store) ListFederationProviders(ctx context.Context, realmID string) ([]*FederationProvider, error) {
	return s.queryFederationProviders(ctx,
		"SELECT "+federationColumns+" FROM federation_providers WHERE realm_id = $1 ORDER BY priority, name", realmID)
}

// AllFederationProviders lists every realm's providers, for the periodic
// sync.
func (s *Store) AllFederationProviders(ctx context.Context) ([]*FederationProvider, error) {
	return s.queryFederationProviders(ctx, "SELECT "+federationColumns+" FROM federation_providers ORDER BY realm_id, priority, name")
}

func (s *Store) queryFederationProviders(ctx context.Context, q string, args ...any) ([]*FederationProvider, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list federation providers: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*FederationProvider{}
	for rows.Next() {
		p, err := s.scanFederationProvider(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, mapErr(rows.Err())
}

// UpdateFederationProvider writes p's name, enabled flag, priority, config
// and bind credential; its sync state is SetFederationSync's.
func (s *Store) UpdateFederationProvider(ctx context.Context, p *FederationProvider) error {
	res, err := s.w.ExecContext(ctx, `UPDATE federation_providers SET name = $1, enabled = $2, priority = $3, config = $4,
		bind_credential = $5 WHERE realm_id = $6 AND id = $7`,
		p.Name, p.Enabled, p.Priority, p.Config, s.sealBindCredential(p), p.RealmID, p.ID)
	if err != nil {
		return fmt.Errorf("update federation provider %s: %w", p.Name, mapErr(err))
	}
	return affectedOne(res, "federation provider "+p.ID)
}

// SetFederationSync records the outcome of a sync (a JSON object) and,
// when changedSince is not zero, where the next changed-user sync starts.
func (s *Store) SetFederationSync(ctx context.Context, realmID, id, result string, changedSince int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE federation_providers SET last_sync = $1,
		changed_since = CASE WHEN $2 = 0 THEN changed_since ELSE $2 END WHERE realm_id = $3 AND id = $4`,
		result, changedSince, realmID, id)
	if err != nil {
		return fmt.Errorf("record sync of federation provider %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "federation provider "+id)
}

// DeleteFederationProvider removes a provider; its links go with it.
func (s *Store) DeleteFederationProvider(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM federation_providers WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete federation provider %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "federation provider "+id)
}

// FederationLink ties a local user to the directory entry it was imported
// from.
type FederationLink struct {
	UserID     string
	RealmID    string
	ProviderID string
	ExternalID string // the entry's stable ID (its uuidLdapAttr value)
	DN         string // the entry's DN when last seen
}

const federationLinkColumns = "user_id, realm_id, provider_id, external_id, dn"

func scanFederationLink(row scanner) (*FederationLink, error) {
	var l FederationLink
	if err := row.Scan(&l.UserID, &l.RealmID, &l.ProviderID, &l.ExternalID, &l.DN); err != nil {
		return nil, mapErr(err)
	}
	return &l, nil
}

// PutFederationLink links a user to an entry, or moves its link (the
// entry's DN changed). An entry already linked to another user is
// ErrConflict.
func (s *Store) PutFederationLink(ctx context.Context, l *FederationLink) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO federation_links ("+federationLinkColumns+`) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (user_id) DO UPDATE SET provider_id = excluded.provider_id, external_id = excluded.external_id, dn = excluded.dn`,
		l.UserID, l.RealmID, l.ProviderID, l.ExternalID, l.DN)
	if err != nil {
		return fmt.Errorf("link user %s: %w", l.UserID, mapErr(err))
	}
	return nil
}

// GetFederationLink is the link of a user of a realm; ErrNotFound for a
// user that is not linked.
func (s *Store) GetFederationLink(ctx context.Context, realmID, userID string) (*FederationLink, error) {
	l, err := scanFederationLink(s.r.QueryRowContext(ctx,
		"SELECT "+federationLinkColumns+" FROM federation_links WHERE realm_id = $1 AND user_id = $2", realmID, userID))
	if err != nil {
		return nil, fmt.Errorf("federation link of user %s: %w", userID, err)
	}
	return l, nil
}

// FederationLinks lists the links of a provider's users.
func (s *Store) FederationLinks(ctx context.Context, realmID, providerID string) ([]*FederationLink, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+federationLinkColumns+
		" FROM federation_links WHERE realm_id = $1 AND provider_id = $2 ORDER BY external_id", realmID, providerID)
	if err != nil {
		return nil, fmt.Errorf("list federation links: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*FederationLink{}
	for rows.Next() {
		l, err := scanFederationLink(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, mapErr(rows.Err())
}

// FederationLinkByExternalID is the link of a provider's entry; ErrNotFound
// when no user is linked to it.
func (s *Store) FederationLinkByExternalID(ctx context.Context, realmID, providerID, externalID string) (*FederationLink, error) {
	l, err := scanFederationLink(s.r.QueryRowContext(ctx, "SELECT "+federationLinkColumns+
		" FROM federation_links WHERE realm_id = $1 AND provider_id = $2 AND external_id = $3", realmID, providerID, externalID))
	if err != nil {
		return nil, fmt.Errorf("federation link of entry %s: %w", externalID, err)
	}
	return l, nil
}

// FederationLinksAfter lists up to limit links of a provider's users, in
// the order of their external IDs, from the first after after (""
// starts at the beginning): a large provider's links read a part at a
// time.
func (s *Store) FederationLinksAfter(ctx context.Context, realmID, providerID, after string, limit int) ([]*FederationLink, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+federationLinkColumns+` FROM federation_links
		WHERE realm_id = $1 AND provider_id = $2 AND external_id > $3 ORDER BY external_id LIMIT $4`, realmID, providerID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list federation links: %w", mapErr(err))
	}
	defer rows.Close()
	out := make([]*FederationLink, 0, limit)
	for rows.Next() {
		l, err := scanFederationLink(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, mapErr(rows.Err())
}

// LinkedUser is a user linked to a directory entry, with its link.
type LinkedUser struct {
	Link *FederationLink
	User *User
}

// FederationLinkedUsers are the users linked to the given entries of a
// provider, by external ID: what a sync compares a page of entries with,
// in one query for the page. The lists are padded to a few sizes, so that
// pages of any length share a few prepared statements.
func (s *Store) FederationLinkedUsers(ctx context.Context, realmID, providerID string, externalIDs []string) (map[string]LinkedUser, error) {
	out := make(map[string]LinkedUser, len(externalIDs))
	for chunk := range chunks(externalIDs, maxLinkedUsersChunk) {
		args := make([]any, 2, 2+maxLinkedUsersChunk)
		args[0], args[1] = realmID, providerID
		args = append(args, anys(chunk)...)
		for len(args)-2 < paddedSize(len(chunk)) {
			args = append(args, chunk[0]) // a repeat finds nothing more
		}
		rows, err := s.r.QueryContext(ctx, "SELECT "+prefixColumns("l", federationLinkColumns)+", "+prefixColumns("u", userColumns)+
			" FROM federation_links l JOIN users u ON u.id = l.user_id WHERE l.realm_id = $1 AND l.provider_id = $2"+
			" AND l.external_id IN ("+placeholdersFrom(3, len(args)-2)+")", args...)
		if err != nil {
			return nil, fmt.Errorf("list linked users: %w", mapErr(err))
		}
		for rows.Next() {
			var lu LinkedUser
			err := scanJoined(rows,
				func(row scanner) (err error) { lu.Link, err = scanFederationLink(row); return err },
				func(row scanner) (err error) { lu.User, err = scanUser(row); return err })
			if err != nil {
				rows.Close()
				return nil, err
			}
			out[lu.Link.ExternalID] = lu
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("list linked users: %w", mapErr(err))
		}
	}
	return out, nil
}

// maxLinkedUsersChunk is the most external IDs one query of
// FederationLinkedUsers asks for: a page of the default size in one.
const maxLinkedUsersChunk = 512

// paddedSize is n rounded up to a power of two.
func paddedSize(n int) int {
	size := 1
	for size < n {
		size *= 2
	}
	return size
}
