package app

import (
	"net/http"

	"github.com/a-h/templ"

	"github.com/idenplane/idenplane/ui"
)

// pageCSP loosens the API's policy just enough for the hosted pages: their
// own stylesheet, images and form posts, nothing from elsewhere.
const pageCSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// renderPage writes a templ page with the page security policy.
func (a *App) renderPage(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return c.Render(r.Context(), w)
}

func (a *App) page(title string) ui.Page {
	return ui.Page{Title: title, Stylesheet: a.assets.URL("idenplane.css")}
}

func (a *App) welcome(w http.ResponseWriter, r *http.Request) error {
	return a.renderPage(w, r, http.StatusOK, ui.Welcome(a.page("Idenplane")))
}
