package signin

import (
	"net/http"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// localeCookie remembers the language a sign-in asked for with ui_locales,
// across the pages of that sign-in.
const localeCookie = "idenplane_locale"

// LocaleOffer is what a realm offers the language negotiation; outside a
// realm (the server's own pages) every catalogue, English by default.
func LocaleOffer(realm *store.Realm) ui.Offer {
	if realm == nil {
		return ui.Offer{}
	}
	return ui.Offer{Supported: realm.SupportedLocales, Default: realm.DefaultLocale}
}

// Locale is the language of a page: ui_locales on the request, then the
// language a sign-in chose, then Accept-Language, then the realm's
// default, among the languages the realm offers.
func (p *Pages) Locale(r *http.Request) string {
	if tag := RequestLocale(p.messages, r); tag != "" {
		return tag
	}
	return p.messages.Negotiate(LocaleOffer(RealmFrom(r.Context())), nil, "")
}

// RequestLocale is the language r asks for, as Locale reads it; "" when
// it asks for none there is a catalogue for.
func RequestLocale(c *ui.Catalogues, r *http.Request) string {
	var explicit []string
	if v := r.URL.Query().Get("ui_locales"); v != "" {
		explicit = append(explicit, v)
	}
	if c, err := r.Cookie(localeCookie); err == nil {
		explicit = append(explicit, c.Value)
	}
	return c.Preferred(LocaleOffer(RealmFrom(r.Context())), explicit, r.Header.Get("Accept-Language"))
}

// RememberLocale keeps the ui_locales of an authorization request for the
// pages of the sign-in that follows, when a catalogue matches it.
func (p *Pages) RememberLocale(w http.ResponseWriter, realm *store.Realm, uiLocales string) {
	if uiLocales == "" {
		return
	}
	if tag, ok := p.messages.Match(LocaleOffer(realm), uiLocales); ok {
		http.SetCookie(w, p.Cookie(realm, localeCookie, tag))
	}
}

// themeVars maps a realm's theme overrides to the stylesheet's custom
// properties.
var themeVars = []struct{ key, prop string }{
	{"primaryColor", "--primary"},
	{"secondaryColor", "--secondary"},
	{"backgroundColor", "--background"},
	{"textColor", "--text"},
	{"linkColor", "--link"},
	{"fontFamily", "--font"},
}

// frame is how a realm's pages look: its name, logo and theme. A theme
// the realm picked (t) wins: its preset, its logo and favicon where it
// has them, and, for a theme of the realm's own, its design tokens in
// place of the realm's colour overrides.
func (p *Pages) frame(realm *store.Realm, t *Theme) ui.Frame {
	f := ui.Frame{RealmName: identity.RealmTitle(realm), Theme: realm.ThemeName}
	if f.Theme == "" {
		f.Theme = p.defaultTheme
	}
	str := func(k string) string { s, _ := realm.Theme[k].(string); return s }
	f.LogoURL, f.FaviconURL = str("logoUrl"), str("faviconUrl")
	for _, v := range themeVars {
		if s := str(v.key); s != "" {
			f.Vars = append(f.Vars, ui.CSSVar{Name: v.prop, Value: s})
		}
	}
	if t == nil {
		return f
	}
	if t.Preset != "" {
		f.Theme = t.Preset
	}
	if t.Custom {
		f.Vars = t.Vars
	}
	if t.LogoURL != "" {
		f.LogoURL = t.LogoURL
	}
	if t.FaviconURL != "" {
		f.FaviconURL = t.FaviconURL
	}
	return f
}
