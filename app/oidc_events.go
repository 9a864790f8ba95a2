package app

import (
	"context"
	"errors"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/store"
)

// clientIPCtxKey holds the caller's address for the login events: the
// library hands the provider's methods a context but not the request.
type clientIPCtxKey struct{}

// loginEvent records e when the realm records login events of its type
// (events.Service.Record), with the caller's address when e has none.
func (a *App) loginEvent(ctx context.Context, realm *store.Realm, e store.LoginEvent) {
	completeLoginEvent(ctx, a, &e)
	a.metrics.identity.loginEvent(realm, &e)
	a.events.Record(ctx, realm, e)
}

// loginEventIn is loginEvent in the caller's transaction tx
// (events.Service.RecordIn), for a module that writes its sign-in in one:
// the metrics count the event once tx has committed, as committed says.
func loginEventIn(a *App) func(context.Context, *store.Store, *store.Realm, store.LoginEvent) (func(), error) {
	return func(ctx context.Context, tx *store.Store, realm *store.Realm, e store.LoginEvent) (func(), error) {
		completeLoginEvent(ctx, a, &e)
		committed, err := a.events.RecordIn(ctx, tx, realm, e)
		if err != nil {
			return nil, err
		}
		return func() {
			a.metrics.identity.loginEvent(realm, &e)
			committed()
		}, nil
	}
}

// completeLoginEvent gives e the caller's address when it has none, and
// an impersonation's marks when its session is one.
func completeLoginEvent(ctx context.Context, a *App, e *store.LoginEvent) {
	if e.IPAddress == "" {
		e.IPAddress, _ = ctx.Value(clientIPCtxKey{}).(string)
	}
	a.impersonation.Mark(ctx, e)
}

// oauthErrorCode is the OAuth error code an error answers with, for the
// error field of a login event.
func oauthErrorCode(err error) string {
	var oe *oidc.Error
	if errors.As(err, &oe) {
		return string(oe.ErrorType)
	}
	return string(oidc.ServerError)
}

// grantEvent records a token grant: e as given when it succeeded, or its
// _ERROR twin with the OAuth error code when it failed.
func (a *App) grantEvent(ctx context.Context, realm *store.Realm, e store.LoginEvent, err error) {
	if err != nil {
		e.Type += "_ERROR"
		e.Error = oauthErrorCode(err)
	}
	a.loginEvent(ctx, realm, e)
}
