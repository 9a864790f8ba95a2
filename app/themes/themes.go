// Package themes is the realms' themes of the hosted pages and mails: a
// preset, design tokens, a logo and favicon, the texts of the catalogues
// said the theme's way, and the mails' templates. A theme is edited as a
// draft and published as numbered versions that never change; a realm's
// loginTheme, accountTheme and emailTheme pick a theme by name, and the
// pages (app/signin, app/account) and mails (app/mail) wear its newest
// version through the ThemeSource each of them defines, which this
// package answers. Everything a theme holds is checked when it is saved,
// so that no theme can break a page or a mail. See docs/themes.md.
package themes

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// Deps is what the themes area uses.
type Deps struct {
	Store   *store.Store
	Log     *slog.Logger
	Now     func() time.Time
	BaseURL string
	// Realm is the realm the admin path names ({realm}), or the not-found
	// error.
	Realm func(r *http.Request) (*store.Realm, error)
	// PublicRealm is Realm for the public image route: cached, and a
	// disabled realm is not found.
	PublicRealm func(r *http.Request) (*store.Realm, error)
	// Messages are the catalogues message overrides are checked against.
	Messages *ui.Catalogues
	// Pages is the hosted pages' kit, which previews render with.
	Pages *signin.Pages
	// PreviewMail renders the mail of kind for the realm in the language
	// tag, with sample values, as the email theme t (nil: none) has it:
	// the server's own mails, made as they are sent.
	PreviewMail func(ctx context.Context, realm *store.Realm, kind, tag string, t *mailtheme.Theme) (subject, html, text string, err error)
}

// Service is the themes area: the admin API, the public route of the
// images, and the themes the pages and mails wear.
type Service struct {
	deps      Deps
	published *store.LookupCache[*published] // by realm ID and theme name
}

// New builds the themes area.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{deps: d, published: store.NewLookupCache[*published]()}
}

// Limits of a realm's themes and images.
const (
	maxThemes = 100
	maxAssets = 500
)
