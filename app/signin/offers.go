package signin

import (
	"context"

	"github.com/idenplane/idenplane/ui"
)

// The core steps' buttons on the pages of the steps they are alternatives
// to (Offerer): a password's page offers a passkey, a passkey's page a
// password, as the sign-in without a flow shows them on one page.

func (passwordStep) Offer(_ context.Context, _ *Flow, c Choice) ([]ui.OtherWay, error) {
	return []ui.OtherWay{{Label: "signin.offer.password", URL: c.URL}}, nil
}

// Offer: a username then a passkey, which is how the person sees it.
func (usernameStep) Offer(_ context.Context, _ *Flow, c Choice) ([]ui.OtherWay, error) {
	return []ui.OtherWay{{Label: "login.passkey", URL: c.URL}}, nil
}

// Offer: none on a server without WebAuthn (no origin to bind keys to).
func (s passkeyStep) Offer(_ context.Context, _ *Flow, c Choice) ([]ui.OtherWay, error) {
	if !s.keys.RP.Available() {
		return nil, nil
	}
	return []ui.OtherWay{{Label: "login.passkey", URL: c.URL}}, nil
}
