package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/store"
)

// What the recovery pages (app/recovery) take from the server: the
// sign-in they lead back to, and the mail carrying their links, which the
// account pages and the admin API send too.

// pathVerifyEmail is where a verification link leads, for the account
// pages' own link.
const pathVerifyEmail = recovery.PathVerifyEmail

// resetPasswordTokenLifetime is how long a password reset link works.
const resetPasswordTokenLifetime = time.Hour

// errMailUnavailable: the realm has no way to send mail.
var errMailUnavailable = recovery.ErrMailUnavailable

// liveAuthRequestID is id when it names a sign-in still waiting for its
// user (an authorization request's, or a sign-in flow's), else "": a
// recovery page carries it only to offer the way back, through the login
// page (loginURL), which sends a flow's browser on to the flow.
func (a *App) liveAuthRequestID(ctx context.Context, realm *store.Realm, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	_, _, err := a.pageAuthRequest(ctx, realm, id, false)
	if errors.Is(err, errStaleAuthRequest) {
		if live, err := liveFlow(ctx, a, realm, id); !live || err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	return id, nil
}

// flowLink is the recovery or register page at path of issuer, leading
// back to the sign-in flow flowID as to an authorization request.
func flowLink(issuer, path, flowID string) string {
	return issuer + path + "?" + url.Values{"authRequestID": {flowID}}.Encode()
}

// liveFlow says whether id names a sign-in flow of realm still running.
// Whose browser it is the flow's own pages check.
func liveFlow(ctx context.Context, a *App, realm *store.Realm, id string) (bool, error) {
	_, err := a.store.GetSignInFlow(ctx, realm.ID, id, a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (a *App) loginURL(realm *store.Realm, authRequestID string) string {
	if authRequestID == "" {
		return ""
	}
	return a.issuer(realm) + pathLogin + "?" + url.Values{"authRequestID": {authRequestID}}.Encode()
}

// queueActionMail creates u's token of kind and queues the mail carrying
// its link, in one transaction. own is u's own request, whose language the
// mail takes when u has not chosen one; nil when an administrator asked.
func (a *App) queueActionMail(ctx context.Context, own *http.Request, realm *store.Realm, u *store.User, kind string,
	path string, query url.Values, m mail.LinkMail) error {
	if _, err := mail.Sender(realm, false); err != nil {
		return errMailUnavailable
	}
	l, err := a.mailLangs.Localizer(ctx, realm, u, own)
	if err != nil {
		return err
	}
	token, err := mail.NewActionToken()
	if err != nil {
		return err
	}
	q := url.Values{"token": {token}}
	for k, v := range query {
		q[k] = v
	}
	link := a.issuer(realm) + path + "?" + q.Encode()
	msg, err := m.Render(l, realm, u, link)
	if err != nil {
		return err
	}
	now := a.now()
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateActionToken(ctx, &store.ActionToken{Hash: store.HashToken(token), RealmID: realm.ID,
			UserID: u.ID, Kind: kind, Email: u.Email, CreatedAt: now.UnixMilli(),
			ExpiresAt: now.Add(m.Lifetime).UnixMilli()}); err != nil {
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

// recoveryMail is the mail module as the recovery pages send their links
// through it.
type recoveryMail struct{ a *App }

func (m recoveryMail) ResetPassword(ctx context.Context, own *http.Request, realm *store.Realm, u *store.User, query url.Values) error {
	return m.a.queueActionMail(ctx, own, realm, u, store.ActionResetPassword, recovery.PathResetPassword, query, resetPasswordMail)
}

func (m recoveryMail) VerifyEmail(ctx context.Context, own *http.Request, realm *store.Realm, u *store.User) error {
	return m.a.queueActionMail(ctx, own, realm, u, store.ActionVerifyEmail, recovery.PathVerifyEmail, nil, mail.VerifyEmail)
}
