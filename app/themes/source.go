package themes

import (
	"context"
	"errors"
	"net/url"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// The themes the pages and mails wear: a realm's field names a theme,
// whose newest published version is read once per store generation.

// published is a theme's newest version as the pages and mails wear it;
// nil where there is none.
type published struct {
	page *signin.Theme
	mail *mailtheme.Theme
}

// publishedNamed is the newest version of the realm's theme called name,
// nil when there is none.
func (s *Service) publishedNamed(ctx context.Context, realm *store.Realm, name string) (*published, error) {
	return store.Cached(s.deps.Store, s.published, realm.ID+"\x00"+name, func() (*published, error) {
		v, err := s.deps.Store.LatestThemeVersion(ctx, realm.ID, name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		d, err := decodeDefinition(v.Content)
		if err != nil {
			return nil, err
		}
		return s.wear(realm, d)
	})
}

// wear is how pages and mails wear the look d of a theme of realm.
func (s *Service) wear(realm *store.Realm, d Definition) (*published, error) {
	templates, err := compileEmails(d.Emails)
	if err != nil {
		return nil, err
	}
	p := &published{
		page: &signin.Theme{Preset: d.Preset, Custom: true, Vars: d.Tokens.vars(), Messages: d.Messages,
			LogoURL: s.imageURL(realm, d.Logo, false), FaviconURL: s.imageURL(realm, d.Favicon, false)},
		mail: &mailtheme.Theme{LogoURL: s.imageURL(realm, d.Logo, true), Messages: d.Messages, Templates: templates},
	}
	// The mail's frame is light whatever the preset: it takes the theme's
	// button colours only when the theme sets its primary, with the text
	// colour that was checked against it.
	if primary := d.Tokens.Colors["primary"]; primary != "" {
		preset, _ := presetNamed(d.Preset)
		p.mail.Primary, p.mail.PrimaryText = primary, preset.Tokens.Colors["primaryText"]
		if text := d.Tokens.Colors["primaryText"]; text != "" {
			p.mail.PrimaryText = text
		}
	}
	return p, nil
}

// imageURL is where a page (a path on the server) or a mail (an
// absolute address) finds img; "" for none.
func (s *Service) imageURL(realm *store.Realm, img *Image, absolute bool) string {
	switch {
	case img == nil:
		return ""
	case img.URL != "":
		return img.URL
	}
	path := AssetPath(realm.Name, img.AssetID)
	if absolute {
		return s.deps.BaseURL + path
	}
	return path
}

// AssetPath is the public path of a realm's image.
func AssetPath(realm, id string) string {
	return "/realms/" + url.PathEscape(realm) + "/themes/assets/" + url.PathEscape(id)
}

// PageTheme is the theme the realm's pages of kind wear (signin.ThemeSource).
func (s *Service) PageTheme(ctx context.Context, realm *store.Realm, kind signin.ThemeKind) *signin.Theme {
	name := realm.LoginTheme
	if kind == signin.AccountTheme {
		name = realm.AccountTheme
	}
	switch {
	case name == "":
		return nil
	case IsPreset(name):
		return &signin.Theme{Preset: name}
	}
	p := s.lookup(ctx, realm, name)
	if p == nil {
		return nil
	}
	return p.page
}

// EmailTheme is the theme the realm's mails wear (mail.ThemeSource). A
// preset changes nothing of a mail, whose frame is light in every one.
func (s *Service) EmailTheme(ctx context.Context, realm *store.Realm) *mailtheme.Theme {
	name := realm.EmailTheme
	if name == "" || IsPreset(name) {
		return nil
	}
	p := s.lookup(ctx, realm, name)
	if p == nil {
		return nil
	}
	return p.mail
}

// lookup is publishedNamed for a page or a mail, which wear the realm's
// own look rather than fail when the theme cannot be read.
func (s *Service) lookup(ctx context.Context, realm *store.Realm, name string) *published {
	p, err := s.publishedNamed(ctx, realm, name)
	if err != nil {
		if ctx.Err() == nil {
			s.deps.Log.Error("theme not read: the realm's own look instead", "realm", realm.Name, "theme", name, "err", err)
		}
		return nil
	}
	return p
}
