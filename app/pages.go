package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"

	"github.com/a-h/templ"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// pageCSP loosens the API's policy just enough for the hosted pages: their
// own stylesheet and scripts plus the one nonce-bearing style element of
// the realm's theme, images from the server or over https (a realm's
// logo), and form posts to the server. A page whose forms may answer with
// a redirect off the server (formsLeave: a step of a sign-in or a logout,
// which ends at the application, or a start of a sign-in at an identity
// provider) has no form-action at all, as Keycloak's pages: browsers hold
// every redirect after a form post to form-action, and the chain of
// redirects of a federated sign-in goes through origins the page cannot
// know (docs/decisions.md, "form-action on the hosted pages").
func pageCSP(nonce string, formsLeave bool) string {
	formAction := "form-action 'self'; "
	if formsLeave {
		formAction = ""
	}
	return "default-src 'none'; style-src 'self' 'nonce-" + nonce + "'; script-src 'self' 'nonce-" + nonce +
		"'; img-src 'self' data: https:; connect-src 'self'; " + formAction + "base-uri 'none'; frame-ancestors 'none'"
}

// pageState is what a page's handlers learn, on the way, that its policy
// needs: whether its forms may lead off the server.
type pageState struct{ formsLeave bool }

type pageStateKey struct{}

// formsLeaveServer marks the page's forms as ones whose answer may
// redirect off the server: to the application an authorization request
// or a logout returns to, or to an identity provider.
func formsLeaveServer(ctx context.Context) {
	if st, ok := ctx.Value(pageStateKey{}).(*pageState); ok {
		st.formsLeave = true
	}
}

// localeCookie remembers the language a sign-in asked for with ui_locales,
// across the pages of that sign-in.
const localeCookie = "idenplane_locale"

// renderPage writes a templ page with the page security policy, in the
// language the browser asks for, framed by the realm the request is in.
func (a *App) renderPage(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	ctx, nonce := a.pageContext(r)
	st, _ := r.Context().Value(pageStateKey{}).(*pageState)
	w.Header().Set("Content-Security-Policy", pageCSP(nonce, st != nil && st.formsLeave))
	return writePage(ctx, w, status, c)
}

// pageContext is the context pages render in: a fresh nonce, the
// language, and the realm's frame.
func (a *App) pageContext(r *http.Request) (context.Context, string) {
	nonce := pageNonce()
	ctx := templ.WithNonce(r.Context(), nonce)
	ctx = ui.WithLocalizer(ctx, a.messages.Localizer(a.pageLocale(r)))
	if realm := realmFrom(r.Context()); realm != nil {
		ctx = ui.WithFrame(ctx, realmFrame(realm))
	}
	return ctx, nonce
}

func writePage(ctx context.Context, w http.ResponseWriter, status int, c templ.Component) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", ui.Lang(ctx))
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Add("Vary", "Accept-Language, Cookie")
	w.WriteHeader(status)
	return c.Render(ctx, w)
}

func pageNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)
}

// pageLocale is the language of a page: ui_locales on the request, then
// the language a sign-in chose, then Accept-Language, then the realm's
// default, among the languages the realm offers.
func (a *App) pageLocale(r *http.Request) string {
	if tag := requestLocale(a.messages, r); tag != "" {
		return tag
	}
	return a.messages.Negotiate(localeOffer(realmFrom(r.Context())), nil, "")
}

// requestLocale is the language r asks for, as pageLocale reads it; ""
// when it asks for none there is a catalogue for.
func requestLocale(c *ui.Catalogues, r *http.Request) string {
	var explicit []string
	if v := r.URL.Query().Get("ui_locales"); v != "" {
		explicit = append(explicit, v)
	}
	if c, err := r.Cookie(localeCookie); err == nil {
		explicit = append(explicit, c.Value)
	}
	return c.Preferred(localeOffer(realmFrom(r.Context())), explicit, r.Header.Get("Accept-Language"))
}

// rememberLocale keeps the ui_locales of an authorization request for the
// pages of the sign-in that follows, when a catalogue matches it.
func (a *App) rememberLocale(w http.ResponseWriter, realm *store.Realm, uiLocales string) {
	if uiLocales == "" {
		return
	}
	if tag, ok := a.messages.Match(localeOffer(realm), uiLocales); ok {
		http.SetCookie(w, a.pageCookie(realm, localeCookie, tag))
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

// realmFrame is how a realm's pages look: its name, logo and theme.
func realmFrame(realm *store.Realm) ui.Frame {
	f := ui.Frame{RealmName: realmTitle(realm), Theme: realm.ThemeName}
	if f.Theme == "" {
		f.Theme = defaultTheme
	}
	str := func(k string) string { s, _ := realm.Theme[k].(string); return s }
	f.LogoURL, f.FaviconURL = str("logoUrl"), str("faviconUrl")
	for _, v := range themeVars {
		if s := str(v.key); s != "" {
			f.Vars = append(f.Vars, ui.CSSVar{Name: v.prop, Value: s})
		}
	}
	return f
}

// withRealm puts the realm of a page request in its context, where
// renderPage finds it, with the page's state.
func withRealm(r *http.Request, realm *store.Realm) *http.Request {
	ctx := context.WithValue(r.Context(), realmCtxKey{}, realm)
	return r.WithContext(context.WithValue(ctx, pageStateKey{}, &pageState{}))
}

func (a *App) page(title string) ui.Page {
	return ui.Page{Title: title, Stylesheet: a.assets.URL("idenplane.css")}
}

func (a *App) welcome(w http.ResponseWriter, r *http.Request) error {
	return a.renderPage(w, r, http.StatusOK, ui.Welcome(a.page("welcome.title")))
}
