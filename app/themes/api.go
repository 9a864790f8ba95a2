package themes

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// The admin API of the themes, under /admin/realms/{realm}/themes.

// BuiltIn is what a theme may start from and change: the presets with
// their tokens, every token, the pages a preview renders, the mails and
// the variables of their templates, and the languages of the catalogues.
type BuiltIn struct {
	Presets []Preset         `json:"presets"`
	Tokens  []Token          `json:"tokens"`
	Pages   []string         `json:"pages"`
	Emails  []mailtheme.Kind `json:"emails"`
	Locales []string         `json:"locales"`
}

// ListPresetNames answers the presets' names (GET /admin/realms/themes).
func (s *Service) ListPresetNames(w http.ResponseWriter, r *http.Request) error {
	return httpx.OK(w, PresetNames())
}

// GetBuiltIn answers the presets and what a theme may change.
func (s *Service) GetBuiltIn(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.deps.Realm(r); err != nil {
		return err
	}
	emails := make([]mailtheme.Kind, len(mailtheme.Kinds))
	for i, k := range mailtheme.Kinds {
		emails[i] = mailtheme.Kind{Name: k.Name, Description: k.Description, Variables: k.AllVariables(mailtheme.PartHTML)}
	}
	return httpx.OK(w, BuiltIn{Presets: Presets(), Tokens: registry, Pages: previewPages(), Emails: emails, Locales: s.deps.Messages.Tags()})
}

// CreateTheme creates a theme: its draft, never published.
func (s *Service) CreateTheme(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var in ThemeInput
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	if err := s.checkInput(r.Context(), realm, &in); err != nil {
		return err
	}
	if n, err := s.deps.Store.CountThemes(r.Context(), realm.ID); err != nil {
		return err
	} else if n >= maxThemes {
		return apperr.Invalid("the realm has %d themes, the most it may have", maxThemes)
	}
	draft, err := in.Definition.encode()
	if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	t := &store.Theme{ID: uuid.NewString(), RealmID: realm.ID, Name: in.Name, Description: in.Description, Draft: draft,
		CreatedAt: now, UpdatedAt: now}
	if err := s.deps.Store.CreateTheme(r.Context(), t); errors.Is(err, store.ErrConflict) {
		return apperr.Conflict("name", "the realm has a theme named %s", in.Name)
	} else if err != nil {
		return err
	}
	rep, err := s.rep(realm, t)
	if err != nil {
		return err
	}
	return httpx.Created(w, s.deps.BaseURL+"/admin/realms/"+realm.Name+"/themes/"+t.ID, rep)
}

// ListThemes lists the realm's themes by name.
func (s *Service) ListThemes(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	list, err := s.deps.Store.ListThemes(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	out := make([]Theme, 0, len(list))
	for _, t := range list {
		rep, err := s.rep(realm, t)
		if err != nil {
			return err
		}
		out = append(out, rep)
	}
	return httpx.OK(w, out)
}

// theme is the theme the path names, and its realm.
func (s *Service) theme(r *http.Request) (*store.Realm, *store.Theme, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	id := mux.Vars(r)["themeId"]
	t, err := s.deps.Store.GetTheme(r.Context(), realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apperr.NotFound("theme " + id)
	}
	return realm, t, err
}

// GetTheme answers a theme's draft.
func (s *Service) GetTheme(w http.ResponseWriter, r *http.Request) error {
	realm, t, err := s.theme(r)
	if err != nil {
		return err
	}
	rep, err := s.rep(realm, t)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// PutTheme replaces a theme's draft, name and description. Its published
// versions stay as they are. A theme a realm field picks keeps its name.
func (s *Service) PutTheme(w http.ResponseWriter, r *http.Request) error {
	realm, t, err := s.theme(r)
	if err != nil {
		return err
	}
	var in ThemeInput
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	if err := s.checkInput(r.Context(), realm, &in); err != nil {
		return err
	}
	if in.Name != t.Name {
		if fields := usedBy(realm, t.Name); len(fields) > 0 {
			return apperr.Conflict("name", "the realm's %s picks theme %s by its name: pick another theme there before renaming it",
				fields[0], t.Name)
		}
	}
	draft, err := in.Definition.encode()
	if err != nil {
		return err
	}
	t.Name, t.Description, t.Draft, t.UpdatedAt = in.Name, in.Description, draft, s.deps.Now().UnixMilli()
	if err := s.deps.Store.UpdateTheme(r.Context(), t); errors.Is(err, store.ErrConflict) {
		return apperr.Conflict("name", "the realm has a theme named %s", in.Name)
	} else if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("theme " + t.ID)
	} else if err != nil {
		return err
	}
	rep, err := s.rep(realm, t)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// DeleteTheme deletes a theme and its versions. A theme a realm field
// picks is refused (409, naming the field): the pages would lose their
// look without anyone choosing so.
func (s *Service) DeleteTheme(w http.ResponseWriter, r *http.Request) error {
	realm, t, err := s.theme(r)
	if err != nil {
		return err
	}
	if fields := usedBy(realm, t.Name); len(fields) > 0 {
		return apperr.Conflict(fields[0], "the realm's %s picks theme %s: pick another theme there first", fields[0], t.Name)
	}
	if err := s.deps.Store.DeleteTheme(r.Context(), realm.ID, t.ID); errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("theme " + t.ID)
	} else if err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// Publish makes the draft the theme's next version, which the realms
// picking the theme wear from now on: 201 with the new version, or 200
// with the newest one when the draft is that version already (nothing
// to publish, and no version twice).
func (s *Service) Publish(w http.ResponseWriter, r *http.Request) error {
	realm, t, err := s.theme(r)
	if err != nil {
		return err
	}
	// A draft written before the checks grew is checked again: a version
	// is what pages wear.
	d, err := decodeDefinition(t.Draft)
	if err != nil {
		return err
	}
	if err := s.check(r.Context(), realm, &d); err != nil {
		return err
	}
	content, err := d.encode()
	if err != nil {
		return err
	}
	if t.Latest > 0 {
		latest, err := s.deps.Store.GetThemeVersion(r.Context(), realm.ID, t.ID, t.Latest)
		if err != nil {
			return err
		}
		if latest.Content == content {
			v, err := toVersion(latest)
			if err != nil {
				return err
			}
			return httpx.OK(w, v)
		}
	}
	sv, err := s.deps.Store.PublishTheme(r.Context(), realm.ID, t.ID, content, s.deps.Now().UnixMilli())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apperr.NotFound("theme " + t.ID)
	case errors.Is(err, store.ErrConflict):
		return apperr.Conflict("", "another publication of theme %s came first: publish again", t.Name)
	case err != nil:
		return err
	}
	v, err := toVersion(sv)
	if err != nil {
		return err
	}
	s.deps.Log.Info("theme published", "realm", realm.Name, "theme", t.Name, "version", v.Version)
	return httpx.Created(w, s.deps.BaseURL+"/admin/realms/"+realm.Name+"/themes/"+t.ID+"/versions", v)
}

// ListVersions lists a theme's published versions, newest first.
func (s *Service) ListVersions(w http.ResponseWriter, r *http.Request) error {
	realm, t, err := s.theme(r)
	if err != nil {
		return err
	}
	first, max, err := httpx.FirstMax(r.URL.Query(), 100)
	if err != nil {
		return err
	}
	list, err := s.deps.Store.ListThemeVersions(r.Context(), realm.ID, t.ID, first, max)
	if err != nil {
		return err
	}
	out := make([]Version, 0, len(list))
	for _, sv := range list {
		v, err := toVersion(sv)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	return httpx.OK(w, out)
}

// Restore makes a published version the draft again, its look only: the
// theme's name and description stay. The version itself stays as it was,
// and the realms go on wearing the newest until the draft is published.
func (s *Service) Restore(w http.ResponseWriter, r *http.Request) error {
	realm, t, err := s.theme(r)
	if err != nil {
		return err
	}
	raw := mux.Vars(r)["version"]
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 1 {
		return apperr.NotFound("version " + raw + " of theme " + t.ID)
	}
	sv, err := s.deps.Store.GetThemeVersion(r.Context(), realm.ID, t.ID, n)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("version " + raw + " of theme " + t.ID)
	} else if err != nil {
		return err
	}
	t.Draft, t.UpdatedAt = sv.Content, s.deps.Now().UnixMilli()
	if err := s.deps.Store.UpdateTheme(r.Context(), t); errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("theme " + t.ID)
	} else if err != nil {
		return err
	}
	rep, err := s.rep(realm, t)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// rep is t as the API shows it.
func (s *Service) rep(realm *store.Realm, t *store.Theme) (Theme, error) {
	d, err := decodeDefinition(t.Draft)
	if err != nil {
		return Theme{}, err
	}
	return Theme{ID: t.ID, Name: t.Name, Description: t.Description, Definition: d, PublishedVersion: t.Latest,
		UsedBy: usedBy(realm, t.Name), CreatedTimestamp: t.CreatedAt, UpdatedTimestamp: t.UpdatedAt}, nil
}

// Realm fields that pick a theme by name.
const (
	FieldLoginTheme   = "loginTheme"
	FieldAccountTheme = "accountTheme"
	FieldEmailTheme   = "emailTheme"
)

// picks are the realm's fields that pick a theme, with their values.
func picks(realm *store.Realm) [][2]string {
	return [][2]string{{FieldLoginTheme, realm.LoginTheme}, {FieldAccountTheme, realm.AccountTheme}, {FieldEmailTheme, realm.EmailTheme}}
}

// usedBy lists the realm's fields that pick the theme named name.
func usedBy(realm *store.Realm, name string) []string {
	out := []string{}
	for _, p := range picks(realm) {
		if p[1] == name {
			out = append(out, p[0])
		}
	}
	return out
}

// CheckPicks refuses a realm whose loginTheme, accountTheme or
// emailTheme, changed from stored (nil: a new realm), names no theme of
// the realm, or one never published: the pages would have no version to
// wear. A preset's name and "" need no theme.
func (s *Service) CheckPicks(ctx context.Context, realm, stored *store.Realm) error {
	var before [][2]string
	if stored != nil {
		before = picks(stored)
	}
	for i, p := range picks(realm) {
		field, name := p[0], p[1]
		if name == "" || IsPreset(name) || (before != nil && before[i][1] == name) {
			continue
		}
		if err := CheckPickSyntax(field, name); err != nil {
			return err
		}
		if realm.ID == "" {
			return apperr.Field(field, "a new realm has no theme %s: create the realm, then its theme, then pick it", name)
		}
		t, err := s.deps.Store.GetThemeByName(ctx, realm.ID, name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return apperr.Field(field, "the realm has no theme %s; pick one of its published themes, or a preset: %s", name,
				strings.Join(PresetNames(), ", "))
		case err != nil:
			return err
		case t.Latest == 0:
			return apperr.Field(field, "theme %s has no published version yet: publish it first", name)
		}
	}
	return nil
}
