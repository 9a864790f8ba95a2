package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
)

var errUnauthorized = apperr.Unauthorized("missing or invalid admin credentials")

// writeError is the renderer of the JSON APIs (admin, account, WebAuthn,
// step-up): the one error shape of docs/api-errors.md.
func (a *App) writeError(w http.ResponseWriter, r *http.Request, err error) {
	httpx.WriteError(a.log, w, r, err)
}
