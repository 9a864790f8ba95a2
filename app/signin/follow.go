package signin

import (
	"fmt"
	"slices"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// runnableKinds are the kinds of step the sign-in runs today (CoreSteps);
// a flow with another kind may be written, not yet bound.
var runnableKinds = []StepKind{KindUsernamePassword, KindTOTP, KindRecoveryCode, KindUsername, KindPasskey, KindSecurityKey,
	KindEmailCode, KindTerms}

// moduleKinds are the kinds of step modules provide (app/broker's,
// app/orgs', app/plugins'): a provider's callback passes the step of the
// flow that sent the browser there, whatever its requester; the plugin
// step decides or asks on the flow's own pages.
var moduleKinds = []StepKind{KindIdentityProvider, KindOrgDiscovery, KindPlugin}

// webAuthnKinds are the steps of a WebAuthn ceremony, which browsers hold
// only with a server whose base URL names a host, never an IP address.
var webAuthnKinds = []StepKind{KindPasskey, KindSecurityKey}

// CanFollow refuses a binding whose sign-ins could not follow the flow.
// The browser sign-ins of OpenID Connect clients and SAML service
// providers, and the device approvals of OpenID Connect clients, follow a
// bound flow through the steps in runnableKinds and moduleKinds, through a
// passkey or security key only when webAuthn (the base URL names a host);
// the password grant's bindings are checked by CheckDefinition alone
// (docs/auth-flows.md). field prefixes the fields it names.
func CanFollow(field, clientKind string, usage Usage, d *Definition, webAuthn bool) error {
	switch {
	case usage == UsageBrowser && (clientKind == store.ClientKindOIDC || clientKind == store.ClientKindSAML):
	case usage == UsageDevice && clientKind == store.ClientKindOIDC:
	default:
		return nil
	}
	for i, st := range d.Steps {
		kind := fmt.Sprintf("%ssteps[%d].kind", field, i)
		if !slices.Contains(runnableKinds, st.Kind) && !slices.Contains(moduleKinds, st.Kind) {
			return apperr.Field(kind,
				"the sign-in does not run %s steps for the %s sign-ins of a %s client yet: a flow with one can be written, not bound to them",
				st.Kind, usage, clientKind)
		}
		if !webAuthn && slices.Contains(webAuthnKinds, st.Kind) {
			return apperr.Field(kind,
				"a %s step needs WebAuthn, which browsers refuse on a server whose base URL is an IP address: set --base-url to a host name (such as localhost)", st.Kind)
		}
	}
	return nil
}
