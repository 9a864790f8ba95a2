package app

import (
	"context"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// The TOTP second factor: its enrolment (identity.BeginTOTP, ConfirmTOTP)
// and the check of a code (identity.CheckOneTimeCode) are the identity
// core's; the pages and the account API show them.

// amrOTP is how a TOTP or recovery code authenticates (RFC 8176).
const amrOTP = "otp"

// looksLikeTOTP says whether a code typed in a field that takes either
// kind is a TOTP code (six digits, spaces aside) rather than a recovery
// code (sixteen characters).
func looksLikeTOTP(code string) bool {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	return len(code) == identity.TOTPDigits.Length() && strings.Trim(code, "0123456789") == ""
}

// passwordGrantSecondFactor refuses the password grant to a user who owes
// a second factor: the grant has no field for it (Keycloak's totp
// parameter is not offered), so the user signs in through the browser.
func (a *App) passwordGrantSecondFactor(ctx context.Context, realm *store.Realm, client *store.Client, user *store.User, ip string) error {
	pending, err := a.id.NeedsSecondFactor(ctx, realm, user.ID)
	if err != nil || pending == "" {
		return err
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: user.ID, ClientID: client.ClientID, IPAddress: ip,
		Error: "invalid_user_credentials", Details: map[string]string{"username": user.Username, "grant_type": identity.GrantPassword,
			"reason": "second factor required"}})
	return oidc.ErrInvalidGrant().WithDescription("second factor required: sign in through the browser")
}
