package app

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/ui"
)

var errUnauthorized = apperr.Unauthorized("missing or invalid admin credentials")

// writeError is the renderer of the JSON APIs (admin, account, WebAuthn,
// step-up): the one error shape of docs/api-errors.md.
func (a *App) writeError(w http.ResponseWriter, r *http.Request, err error) {
	httpx.WriteError(a.log, w, r, a.described(err))
}

// described is err with a message for an API caller: an error that a
// page would show by its key alone gets the English text of that key.
func (a *App) described(err error) error {
	var e *apperr.Error
	if !errors.As(err, &e) || e.Message != "" || e.Key == "" {
		return err
	}
	d := *e
	d.Message = a.messages.Localizer(ui.DefaultLocale).T(e.Key, e.Args...)
	return &d
}
