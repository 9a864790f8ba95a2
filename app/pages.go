package app

import (
	"net/http"

	"github.com/idenplane/idenplane/ui"
)

func (a *App) welcome(w http.ResponseWriter, r *http.Request) error {
	return a.pages.Render(w, r, http.StatusOK, ui.Welcome(a.pages.Page("welcome.title")))
}
