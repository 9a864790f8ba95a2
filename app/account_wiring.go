package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/store"
)

// accountDeps is what the account module works with from the server: the
// shared kit, and the parts of the OpenID Connect provider and the hosted
// pages it answers through.
func accountDeps(a *App) account.Deps {
	return account.Deps{Store: a.store, Log: a.log, Now: a.now, BaseURL: a.cfg.BaseURL, Pages: a.pages,
		Messages: a.messages, Assets: a.assets, Identity: a.id, WebAuthn: a.webauthn,
		Links: accountLinks{a.broker}, ErrLastSignIn: broker.ErrLastSignIn, SignInLifetime: authRequestLifetime,
		LinkNewScopes: clients.LinkNewScopes,
		Realm: func(r *http.Request) (*store.Realm, error) {
			realm, err := a.protocolRealm(r.Context(), mux.Vars(r)["realm"])
			if errors.Is(err, store.ErrNotFound) {
				return nil, errNoRealm
			}
			return realm, err
		},
		VerifyAccessToken: a.verifyAccessToken, SSOSession: a.ssoSession, SessionsEnded: a.loggedOut,
		QueueVerifyEmail: func(r *http.Request, realm *store.Realm, u *store.User) error {
			err := a.queueActionMail(r.Context(), r, realm, u, store.ActionVerifyEmail, pathVerifyEmail, nil, mail.VerifyEmail)
			if errors.Is(err, errMailUnavailable) {
				return account.ErrMailUnavailable
			}
			return err
		},
		LoginEvent: a.loginEvent, ClientIP: a.clientIP, WriteError: a.writeError, RenderPageError: a.renderPageError}
}

// accountLinks are the broker's links as the account lists them
// (account.Links).
type accountLinks struct{ *broker.Service }

func (l accountLinks) LinkedAccounts(ctx context.Context, realm *store.Realm, user *store.User) ([]account.LinkedAccount, error) {
	list, err := l.Service.LinkedAccounts(ctx, realm, user)
	if list == nil { // as the broker answers it: null, not []
		return nil, err
	}
	out := make([]account.LinkedAccount, len(list))
	for i, la := range list {
		out[i] = account.LinkedAccount(la)
	}
	return out, err
}
