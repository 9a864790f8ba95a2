package app

import (
	"context"
	"slices"

	"github.com/idenplane/idenplane/store"
)

// Levels of authentication, as Keycloak numbers them in acr: "1" for one
// factor, "2" for two. An SSO session's level follows from its amr alone
// (acrOf), so tokens, the step-up API and the authorization endpoint
// agree on it. docs/decisions.md, "Step-up and acr", records the rules.
const (
	acrOneFactor  = "1"
	acrTwoFactors = "2"
)

// acrValuesSupported is what discovery advertises.
var acrValuesSupported = []string{acrOneFactor, acrTwoFactors}

// acrOf is the level amr amounts to: two factors when the authenticator
// verified its user (mfa: a passkey with PIN or biometrics), or when two
// kinds of factor were given among a password (pwd), a one-time code
// (otp) and a key (hwk or swk; two keys are one kind); one otherwise.
func acrOf(amr []string) string {
	if slices.Contains(amr, amrMFA) {
		return acrTwoFactors
	}
	kinds := 0
	for _, kind := range [][]string{{amrPassword}, {amrOTP}, {amrHardwareKey, amrSoftwareKey}} {
		if slices.ContainsFunc(kind, func(m string) bool { return slices.Contains(amr, m) }) {
			kinds++
		}
	}
	if kinds >= 2 {
		return acrTwoFactors
	}
	return acrOneFactor
}

// raiseAMR is amr with the methods a step-up proved added after it, each
// once: ["pwd"] and ["otp"] make ["pwd","otp"], as a sign-in with both.
func raiseAMR(amr, proved []string) []string {
	out := slices.Clone(amr)
	for _, m := range proved {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// ssoShortfall says what an SSO session of user lacks before it may
// answer an authorization request. A user with a second factor gives it
// at every sign-in, so every session of such a user must be at acr 2; one
// at acr 1 (begun before the user enrolled, or with a key registered at
// the enrolment step) is stepped up: step is the factor's sign-in step
// (store.StepTOTP or store.StepWebAuthn), taken in that session without
// the password. A realm requiring a second factor of a user who has none
// sends the user to sign in again (login), the enrolment following the
// password. Anything else answers as it is: a user without a factor
// reaches acr 1 at most, and acr_values is a voluntary claim.
func (a *App) ssoShortfall(ctx context.Context, realm *store.Realm, user *store.User, sso *store.Session) (step string, login bool, err error) {
	if acrOf(sso.AMR) == acrTwoFactors {
		return "", false, nil
	}
	pending, err := a.id.NeedsSecondFactor(ctx, realm, user.ID)
	if err != nil {
		return "", false, err
	}
	if pending == store.StepTOTPSetup {
		return "", true, nil
	}
	return pending, false, nil
}
