package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// directGrantSteps checks what the password grant owes after the
// password: the steps of the direct-grant flow bound to the client (a TOTP
// code in the form's totp field, as Keycloak's direct grant takes it), or
// without a flow the realm's rule that a user with a second factor signs
// in through the browser. It answers how the user authenticated.
func directGrantSteps(a *App, ctx context.Context, r *http.Request, realm *store.Realm, client *store.Client, user *store.User) ([]string, error) {
	ip := a.clientIP(r)
	def, err := signin.Bound(ctx, a.store, realm.ID, store.ClientKindOIDC, client.ID, signin.UsageDirectGrant)
	if err != nil {
		return nil, err
	} else if def == nil {
		return []string{amrPassword}, a.passwordGrantSecondFactor(ctx, realm, client, user, ip)
	}
	refuse := func(reason, description string) error {
		a.loginEvent(ctx, realm, store.LoginEvent{Type: signin.EventLoginError, UserID: user.ID, ClientID: client.ClientID,
			IPAddress: ip, Error: reason, Details: map[string]string{"username": user.Username, "grant_type": identity.GrantPassword}})
		return oidc.ErrInvalidGrant().WithDescription("%s", description)
	}
	kinds, err := a.signin.DirectSteps(ctx, realm, def, user, client.ClientID)
	if cannot := (*signin.CannotPassError)(nil); errors.As(err, &cannot) {
		return nil, refuse("invalid_user_credentials", "the client's sign-in flow asks for a one-time code, and the user has no authenticator app")
	} else if err != nil {
		return nil, err
	}
	amr := []string{amrPassword}
	for range kinds { // a direct-grant flow's only step after the password is totp
		code := r.PostForm.Get("totp")
		if code == "" {
			return nil, refuse("invalid_user_credentials", "the client's sign-in flow asks for a one-time code: send it as totp")
		}
		err := a.id.CheckOneTimeCode(ctx, realm, user, code, false, ip)
		var throttled *identity.ThrottledError
		switch {
		case errors.Is(err, identity.ErrInvalidTOTP): // a lockout too: it answers as a wrong code
			return nil, refuse("invalid_totp", "invalid one-time code")
		case errors.As(err, &throttled):
			return nil, err // passwordGrant answers 429
		case err != nil:
			return nil, err
		}
		amr = append(amr, amrOTP)
	}
	return amr, nil
}
