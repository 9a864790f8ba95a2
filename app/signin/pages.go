package signin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"

	"github.com/a-h/templ"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Pages is the kit of the hosted pages: rendering under their security
// policy, in the language the browser asks for, framed by the realm; their
// cookies; and the CSRF tokens of their forms.
type Pages struct {
	messages     *ui.Catalogues
	stylesheet   string
	secure       bool
	csrfKey      []byte
	defaultTheme string
	themes       ThemeSource
}

// PagesConfig is what the pages are built from.
type PagesConfig struct {
	Messages   *ui.Catalogues
	Stylesheet string // the URL of the pages' stylesheet
	// Secure: the server is served over TLS, so the pages' cookies are
	// Secure.
	Secure bool
	// CSRFKey is the secret the forms' CSRF tokens are MACs under.
	CSRFKey []byte
	// DefaultTheme is the look of a realm that has chosen none.
	DefaultTheme string
	// Themes finds the theme a realm picked for its pages; nil, and the
	// pages wear the realm's own look.
	Themes ThemeSource
}

func NewPages(cfg PagesConfig) *Pages {
	return &Pages{messages: cfg.Messages, stylesheet: cfg.Stylesheet, secure: cfg.Secure, csrfKey: cfg.CSRFKey,
		defaultTheme: cfg.DefaultTheme, themes: cfg.Themes}
}

// Page is the frame of a page titled by a message key.
func (p *Pages) Page(title string) ui.Page {
	return ui.Page{Title: title, Stylesheet: p.stylesheet}
}

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

// pageState is what a page's handlers learn on the way: whether its forms
// may lead off the server, which its policy needs, and which of the
// realm's themes it wears.
type pageState struct {
	formsLeave bool
	theme      ThemeKind
}

type pageStateKey struct{}

type realmKey struct{}

// WithRealm puts the realm of a page request in its context, where the
// pages find it, with the page's state.
func WithRealm(r *http.Request, realm *store.Realm) *http.Request {
	ctx := context.WithValue(r.Context(), realmKey{}, realm)
	return r.WithContext(context.WithValue(ctx, pageStateKey{}, &pageState{}))
}

// RealmOnly puts the realm in ctx without a page's state: for the
// protocol's endpoints, which render no page.
func RealmOnly(ctx context.Context, realm *store.Realm) context.Context {
	return context.WithValue(ctx, realmKey{}, realm)
}

// RealmFrom is the realm of a request, set by WithRealm or RealmOnly.
func RealmFrom(ctx context.Context) *store.Realm {
	r, _ := ctx.Value(realmKey{}).(*store.Realm)
	return r
}

// FormsLeaveServer marks the page's forms as ones whose answer may
// redirect off the server: to the application an authorization request
// or a logout returns to, or to an identity provider.
func FormsLeaveServer(ctx context.Context) {
	if st, ok := ctx.Value(pageStateKey{}).(*pageState); ok {
		st.formsLeave = true
	}
}

// Render writes a templ page with the page security policy, in the
// language the browser asks for, framed by the realm the request is in.
func (p *Pages) Render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	ctx, nonce := p.Context(r)
	st, _ := r.Context().Value(pageStateKey{}).(*pageState)
	w.Header().Set("Content-Security-Policy", pageCSP(nonce, st != nil && st.formsLeave))
	return Write(ctx, w, status, c)
}

// Context is the context pages render in: a fresh nonce, the language,
// and the realm's frame, as the theme the realm picked dresses them.
func (p *Pages) Context(r *http.Request) (context.Context, string) {
	return p.ThemedContext(r, p.theme(r), "")
}

// ThemedContext is Context with the theme t (nil for the realm's own
// look) rather than the one the realm picked, in the language tag ("":
// the one the request negotiates): what a preview of a draft renders in
// (app/themes).
func (p *Pages) ThemedContext(r *http.Request, t *Theme, tag string) (context.Context, string) {
	nonce := pageNonce()
	ctx := templ.WithNonce(r.Context(), nonce)
	if tag == "" {
		tag = p.Locale(r)
	}
	ctx = ui.WithLocalizer(ctx, themed(p.messages.Localizer(tag), t))
	if realm := RealmFrom(r.Context()); realm != nil {
		ctx = ui.WithFrame(ctx, p.frame(realm, t))
	}
	return ctx, nonce
}

// CSP is the Content-Security-Policy of a page rendered with nonce whose
// forms stay on the server.
func CSP(nonce string) string { return pageCSP(nonce, false) }

// Write writes a page rendered in ctx, never to be cached.
func Write(ctx context.Context, w http.ResponseWriter, status int, c templ.Component) error {
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

// Cookie is a cookie of a realm's pages: scoped to the realm's paths, out
// of reach of scripts, and Secure when the server is served over TLS.
func (p *Pages) Cookie(realm *store.Realm, name, value string) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/realms/" + realm.Name + "/", HttpOnly: true,
		Secure: p.secure, SameSite: http.SameSiteLaxMode}
}

// A form's CSRF token is an HMAC of a random per-browser cookie, the form
// and what it answers (an authorization request, a ceremony). A forged
// post lacks the cookie; a token copied from an attacker's own form is
// bound to the attacker's cookie. Nothing is stored.
const CSRFCookie = "idenplane_csrf"

// ErrCSRF is a form posted without its token, or with another browser's.
var ErrCSRF = apperr.New(http.StatusForbidden, apperr.CodeForbidden, "").WithKey("error.csrf")

// CSRFMAC is the token of form, bound to boundID, for the browser whose
// secret is browser.
func (p *Pages) CSRFMAC(browser, form, boundID string) string {
	mac := hmac.New(sha256.New, p.csrfKey)
	mac.Write([]byte(browser + "\x00" + form + "\x00" + boundID))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// CSRFToken returns the token for a form, giving the browser its CSRF
// cookie first if it has none.
func (p *Pages) CSRFToken(w http.ResponseWriter, r *http.Request, realm *store.Realm, form, boundID string) string {
	return p.CSRFMAC(p.BrowserSecret(w, r, realm), form, boundID)
}

// BrowserSecret is the browser's CSRF cookie, given to it now if it has
// none: what CSRF tokens and a sign-in's steps are bound to.
func (p *Pages) BrowserSecret(w http.ResponseWriter, r *http.Request, realm *store.Realm) string {
	if c, err := r.Cookie(CSRFCookie); err == nil && c.Value != "" {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	browser := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, p.Cookie(realm, CSRFCookie, browser))
	return browser
}

// CheckCSRF compares a posted form's token (field csrf) with the one the
// browser's cookie yields, in constant time.
func (p *Pages) CheckCSRF(r *http.Request, form, boundID string) error {
	return p.CheckCSRFValue(r, form, boundID, r.PostForm.Get("csrf"))
}

// CheckCSRFValue is CheckCSRF of a token sent otherwise than in the form's
// csrf field (a header of a script's request).
func (p *Pages) CheckCSRFValue(r *http.Request, form, boundID, token string) error {
	c, err := r.Cookie(CSRFCookie)
	if err != nil || c.Value == "" || token == "" {
		return ErrCSRF
	}
	if !hmac.Equal([]byte(p.CSRFMAC(c.Value, form, boundID)), []byte(token)) {
		return ErrCSRF
	}
	return nil
}
