package store

import (
	"context"
	"fmt"
)

// A realm's themes (app/themes): the draft of each, its published
// versions, and the images they show. The store keeps the draft and the
// versions as the module's JSON, which it does not read.

// Theme is a theme's draft. Latest is the number of its newest published
// version, 0 while it has none; the store answers it and never writes it.
type Theme struct {
	ID          string
	RealmID     string
	Name        string // unique in the realm
	Description string
	Draft       string // JSON
	CreatedAt   int64  // Unix milliseconds
	UpdatedAt   int64
	Latest      int64
}

// ThemeVersion is a published version of a theme: written once, never
// changed.
type ThemeVersion struct {
	ThemeID     string
	RealmID     string
	Version     int64 // 1, 2, 3… per theme
	Content     string
	PublishedAt int64
}

// ThemeAsset is an image a theme shows. Data is nil where only its
// description was read (ThemeAssetInfo).
type ThemeAsset struct {
	ID          string
	RealmID     string
	ContentType string
	Width       int
	Height      int
	SHA256      []byte
	Data        []byte
	Size        int
	CreatedAt   int64
}

const themeColumns = `id, realm_id, name, description, draft, created_at, updated_at,
	(SELECT COALESCE(MAX(v.version), 0) FROM theme_versions v WHERE v.theme_id = themes.id)`

func scanTheme(row scanner) (*Theme, error) {
	var t Theme
	if err := row.Scan(&t.ID, &t.RealmID, &t.Name, &t.Description, &t.Draft, &t.CreatedAt, &t.UpdatedAt, &t.Latest); err != nil {
		return nil, mapErr(err)
	}
	return &t, nil
}

// CreateTheme stores a new theme; a name the realm has is a
// *ConflictError on "name", an ID another realm's theme has one on "id".
func (s *Store) CreateTheme(ctx context.Context, t *Theme) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO themes (id, realm_id, name, description, draft, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, t.ID, t.RealmID, t.Name, t.Description, t.Draft, t.CreatedAt, t.UpdatedAt)
	if err != nil {
		return fmt.Errorf("create theme %s: %w", t.Name, mapErr(err))
	}
	return nil
}

// GetTheme finds a theme of the realm by its ID.
func (s *Store) GetTheme(ctx context.Context, realmID, id string) (*Theme, error) {
	t, err := scanTheme(s.r.QueryRowContext(ctx, "SELECT "+themeColumns+" FROM themes WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("theme %s: %w", id, err)
	}
	return t, nil
}

// GetThemeByName finds a theme of the realm by its name.
func (s *Store) GetThemeByName(ctx context.Context, realmID, name string) (*Theme, error) {
	t, err := scanTheme(s.r.QueryRowContext(ctx, "SELECT "+themeColumns+" FROM themes WHERE realm_id = $1 AND name = $2", realmID, name))
	if err != nil {
		return nil, fmt.Errorf("theme %s: %w", name, err)
	}
	return t, nil
}

// ListThemes lists the realm's themes by name.
func (s *Store) ListThemes(ctx context.Context, realmID string) ([]*Theme, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+themeColumns+" FROM themes WHERE realm_id = $1 ORDER BY name, id", realmID)
	if err != nil {
		return nil, fmt.Errorf("list themes: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*Theme{}
	for rows.Next() {
		t, err := scanTheme(rows)
		if err != nil {
			return nil, fmt.Errorf("list themes: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list themes: %w", mapErr(err))
	}
	return out, nil
}

// CountThemes counts the realm's themes.
func (s *Store) CountThemes(ctx context.Context, realmID string) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM themes WHERE realm_id = $1", realmID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count themes: %w", mapErr(err))
	}
	return n, nil
}

// UpdateTheme writes a theme's name, description, draft and update time;
// ErrNotFound when the realm has no such theme.
func (s *Store) UpdateTheme(ctx context.Context, t *Theme) error {
	res, err := s.w.ExecContext(ctx, `UPDATE themes SET name = $3, description = $4, draft = $5, updated_at = $6
		WHERE realm_id = $1 AND id = $2`, t.RealmID, t.ID, t.Name, t.Description, t.Draft, t.UpdatedAt)
	n, err := rowsAffected(res, err, "update theme "+t.ID)
	if err == nil && n == 0 {
		err = fmt.Errorf("theme %s: %w", t.ID, ErrNotFound)
	}
	return err
}

// DeleteTheme deletes a theme of the realm with its versions.
func (s *Store) DeleteTheme(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM themes WHERE realm_id = $1 AND id = $2", realmID, id)
	n, err := rowsAffected(res, err, "delete theme "+id)
	if err == nil && n == 0 {
		err = fmt.Errorf("theme %s: %w", id, ErrNotFound)
	}
	return err
}

const themeVersionColumns = `theme_id, realm_id, version, content, published_at`

func scanThemeVersion(row scanner) (*ThemeVersion, error) {
	var v ThemeVersion
	if err := row.Scan(&v.ThemeID, &v.RealmID, &v.Version, &v.Content, &v.PublishedAt); err != nil {
		return nil, mapErr(err)
	}
	return &v, nil
}

// PublishTheme writes content as the theme's next version, the one after
// its newest, and answers it. ErrNotFound when the realm has no such
// theme; a *ConflictError when another publication took the number
// first (try again).
func (s *Store) PublishTheme(ctx context.Context, realmID, themeID, content string, now int64) (*ThemeVersion, error) {
	v, err := scanThemeVersion(s.w.QueryRowContext(ctx, `INSERT INTO theme_versions (`+themeVersionColumns+`)
		SELECT t.id, t.realm_id, (SELECT COALESCE(MAX(v.version), 0) + 1 FROM theme_versions v WHERE v.theme_id = t.id), $3, $4
		FROM themes t WHERE t.realm_id = $1 AND t.id = $2
		RETURNING `+themeVersionColumns, realmID, themeID, content, now))
	if err != nil {
		return nil, fmt.Errorf("publish theme %s: %w", themeID, err)
	}
	return v, nil
}

// GetThemeVersion finds a published version of a theme of the realm.
func (s *Store) GetThemeVersion(ctx context.Context, realmID, themeID string, version int64) (*ThemeVersion, error) {
	v, err := scanThemeVersion(s.r.QueryRowContext(ctx, "SELECT "+themeVersionColumns+
		" FROM theme_versions WHERE realm_id = $1 AND theme_id = $2 AND version = $3", realmID, themeID, version))
	if err != nil {
		return nil, fmt.Errorf("theme %s version %d: %w", themeID, version, err)
	}
	return v, nil
}

// LatestThemeVersion is the newest published version of the realm's
// theme named name; ErrNotFound when there is no such theme or it has
// none.
func (s *Store) LatestThemeVersion(ctx context.Context, realmID, name string) (*ThemeVersion, error) {
	v, err := scanThemeVersion(s.r.QueryRowContext(ctx, `SELECT v.theme_id, v.realm_id, v.version, v.content, v.published_at
		FROM themes t JOIN theme_versions v ON v.theme_id = t.id
		WHERE t.realm_id = $1 AND t.name = $2 ORDER BY v.version DESC LIMIT 1`, realmID, name))
	if err != nil {
		return nil, fmt.Errorf("published theme %s: %w", name, err)
	}
	return v, nil
}

// ListThemeVersions lists a theme's published versions, newest first,
// skipping first and answering at most max.
func (s *Store) ListThemeVersions(ctx context.Context, realmID, themeID string, first, max int) ([]*ThemeVersion, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+themeVersionColumns+
		" FROM theme_versions WHERE realm_id = $1 AND theme_id = $2 ORDER BY version DESC LIMIT $3 OFFSET $4",
		realmID, themeID, max, first)
	if err != nil {
		return nil, fmt.Errorf("list theme versions: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*ThemeVersion{}
	for rows.Next() {
		v, err := scanThemeVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("list theme versions: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list theme versions: %w", mapErr(err))
	}
	return out, nil
}

// CreateThemeAsset stores an image; Size is Data's length.
func (s *Store) CreateThemeAsset(ctx context.Context, a *ThemeAsset) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO theme_assets (id, realm_id, content_type, width, height, sha256, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, a.ID, a.RealmID, a.ContentType, a.Width, a.Height, a.SHA256, a.Data, a.CreatedAt)
	if err != nil {
		return fmt.Errorf("create theme asset: %w", mapErr(err))
	}
	return nil
}

// GetThemeAsset reads an image of the realm, its bytes included.
func (s *Store) GetThemeAsset(ctx context.Context, realmID, id string) (*ThemeAsset, error) {
	var a ThemeAsset
	err := s.r.QueryRowContext(ctx, `SELECT id, realm_id, content_type, width, height, sha256, data, created_at
		FROM theme_assets WHERE realm_id = $1 AND id = $2`, realmID, id).
		Scan(&a.ID, &a.RealmID, &a.ContentType, &a.Width, &a.Height, &a.SHA256, &a.Data, &a.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("theme asset %s: %w", id, mapErr(err))
	}
	a.Size = len(a.Data)
	return &a, nil
}

// ThemeAssetInfo reads an image's description without its bytes.
func (s *Store) ThemeAssetInfo(ctx context.Context, realmID, id string) (*ThemeAsset, error) {
	var a ThemeAsset
	err := s.r.QueryRowContext(ctx, `SELECT id, realm_id, content_type, width, height, sha256, LENGTH(data), created_at
		FROM theme_assets WHERE realm_id = $1 AND id = $2`, realmID, id).
		Scan(&a.ID, &a.RealmID, &a.ContentType, &a.Width, &a.Height, &a.SHA256, &a.Size, &a.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("theme asset %s: %w", id, mapErr(err))
	}
	return &a, nil
}

// CountThemeAssets counts the realm's images.
func (s *Store) CountThemeAssets(ctx context.Context, realmID string) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM theme_assets WHERE realm_id = $1", realmID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count theme assets: %w", mapErr(err))
	}
	return n, nil
}
