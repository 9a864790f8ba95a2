package app

import (
	"context"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// errCodeMailUnavailable is an email code step in a realm that cannot
// send mail: a page saying so, not a dead end.
var errCodeMailUnavailable = pageErr(http.StatusServiceUnavailable, apperr.CodeUnavailable, "emailCode.error.noMail")

// mailSignInCode is the sign-in's CodeMailer: the code's mail, in the
// user's language, queued in the outbox in the transaction that stores
// the code, and sent at once.
func (a *App) mailSignInCode(ctx context.Context, r *http.Request, realm *store.Realm, u *store.User, code string,
	lifetime time.Duration, record func(tx *store.Store) error) error {
	if _, err := mail.Sender(realm, false); err != nil {
		return errCodeMailUnavailable
	}
	l, err := a.mailLangs.Localizer(ctx, realm, u, r)
	if err != nil {
		return err
	}
	msg, err := mail.EmailCode(l, realm, u, code, lifetime)
	if err != nil {
		return err
	}
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := record(tx); err != nil {
			return err
		}
		return a.mail.Enqueue(ctx, tx, realm, msg)
	})
	if err != nil {
		return err
	}
	a.mail.Wake()
	return nil
}

var _ signin.CodeMailer = (*App)(nil).mailSignInCode
