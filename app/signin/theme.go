package signin

import (
	"context"
	"net/http"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// ThemeKind is which of a realm's themes a page wears: its loginTheme
// or its accountTheme.
type ThemeKind string

const (
	// LoginTheme dresses the sign-in and every page around it:
	// registration, recovery, second factors, consent, logout, errors.
	LoginTheme ThemeKind = "login"
	// AccountTheme dresses the account pages.
	AccountTheme ThemeKind = "account"
)

// Theme is how a realm's pages look by the theme it picked (app/themes).
type Theme struct {
	Preset string // the preset, set as data-theme
	// Custom: a theme of the realm's own, whose design tokens replace the
	// realm's colour overrides (its theme field); a preset picked by name
	// keeps them.
	Custom bool
	Vars   []ui.CSSVar
	// LogoURL and FaviconURL replace the realm's when set.
	LogoURL, FaviconURL string
	// Messages are the theme's own texts, by language tag and key.
	Messages map[string]map[string]string
}

// ThemeSource finds the theme a realm picked for a kind of page. It
// answers nil when the realm picked none, and when the theme cannot be
// read (the source logs why): the page then wears the realm's own look,
// for a theme never breaks a page.
type ThemeSource interface {
	PageTheme(ctx context.Context, realm *store.Realm, kind ThemeKind) *Theme
}

// ThemeFunc is a function as a ThemeSource.
type ThemeFunc func(ctx context.Context, realm *store.Realm, kind ThemeKind) *Theme

func (f ThemeFunc) PageTheme(ctx context.Context, realm *store.Realm, kind ThemeKind) *Theme {
	return f(ctx, realm, kind)
}

// WearAccountTheme has the pages of the request whose context is ctx
// (after WithRealm) wear the realm's accountTheme rather than its
// loginTheme.
func WearAccountTheme(ctx context.Context) {
	if st, ok := ctx.Value(pageStateKey{}).(*pageState); ok {
		st.theme = AccountTheme
	}
}

// theme is the theme the page of r wears, nil for the realm's own look.
func (p *Pages) theme(r *http.Request) *Theme {
	realm := RealmFrom(r.Context())
	if realm == nil || p.themes == nil {
		return nil
	}
	kind := LoginTheme
	if st, ok := r.Context().Value(pageStateKey{}).(*pageState); ok && st.theme != "" {
		kind = st.theme
	}
	return p.themes.PageTheme(r.Context(), realm, kind)
}

// Localizer is the language of the page of r, with its theme's texts:
// for text a handler puts into a page itself.
func (p *Pages) Localizer(r *http.Request) *ui.Localizer {
	return themed(p.messages.Localizer(p.Locale(r)), p.theme(r))
}

func themed(l *ui.Localizer, t *Theme) *ui.Localizer {
	if t == nil {
		return l
	}
	return l.WithOverrides(t.Messages[l.Tag])
}
