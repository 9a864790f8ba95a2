package app

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// directGrantSteps checks what the password grant owes after the
// password: the steps of the direct-grant flow bound to the client (a TOTP
// code in the form's totp field, as Keycloak's direct grant takes it), or
// without a flow the realm's rule that a user with a second factor signs
// in through the browser. It answers how the user authenticated, and the
// grant's flow, whose sign-in the caller marks succeeded
// (Engine.DirectSucceeded) once it has the SSO session.
func directGrantSteps(a *App, ctx context.Context, r *http.Request, realm *store.Realm, client *store.Client, user *store.User) ([]string, *signin.Flow, error) {
	ip := a.clientIP(r)
	refuse := func(reason, description string) error {
		a.loginEvent(ctx, realm, store.LoginEvent{Type: signin.EventLoginError, UserID: user.ID, ClientID: client.ClientID,
			IPAddress: ip, Error: reason, Details: map[string]string{"username": user.Username, "grant_type": identity.GrantPassword}})
		return oidc.ErrInvalidGrant().WithDescription("%s", description)
	}
	otp := func(what string) error {
		code := r.PostForm.Get("totp")
		if code == "" {
			return refuse("invalid_user_credentials", what)
		}
		err := a.id.CheckOneTimeCode(ctx, realm, user, code, false, ip)
		if errors.Is(err, identity.ErrInvalidTOTP) { // a lockout too: it answers as a wrong code
			return refuse("invalid_totp", "invalid one-time code")
		}
		return err // a *ThrottledError: passwordGrant answers 429
	}
	// The risk assessment (app/risk) decides first: a denied grant asks
	// nothing more (docs/risk.md).
	g, err := a.signin.DirectFlow(r, realm, user, client.ClientID)
	if err != nil {
		return nil, nil, err
	}
	if g.Risk != nil && g.Risk.Action == signin.RiskDeny {
		return nil, nil, refuse("risk_denied", "sign-in refused by the realm's risk policy")
	}
	amr := []string{amrPassword}
	def, err := signin.Bound(ctx, a.store, realm.ID, store.ClientKindOIDC, client.ID, signin.UsageDirectGrant)
	if err != nil {
		return nil, nil, err
	} else if def == nil {
		if err := a.passwordGrantSecondFactor(ctx, realm, client, user, ip); err != nil {
			return nil, nil, err
		}
	} else {
		kinds, err := a.signin.DirectSteps(ctx, g, def)
		if cannot := (*signin.CannotPassError)(nil); errors.As(err, &cannot) {
			return nil, nil, refuse("invalid_user_credentials", "the client's sign-in flow asks for a one-time code, and the user has no authenticator app")
		} else if err != nil {
			return nil, nil, err
		}
		for range kinds { // a direct-grant flow's only step after the password is totp
			if err := otp("the client's sign-in flow asks for a one-time code: send it as totp"); err != nil {
				return nil, nil, err
			}
			amr = append(amr, amrOTP)
		}
	}
	if g.Risk != nil && g.Risk.Action == signin.RiskSecondFactor && !slices.Contains(amr, amrOTP) {
		if err := otp("a second factor is required: send the one-time code as totp"); err != nil {
			return nil, nil, err
		}
		amr = append(amr, amrOTP)
	}
	return amr, g, nil
}
