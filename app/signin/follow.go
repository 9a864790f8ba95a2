package signin

import (
	"fmt"
	"slices"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// runnableKinds are the kinds of step the sign-in runs today (CoreSteps);
// a flow with another kind may be written, not yet bound.
var runnableKinds = []StepKind{KindUsernamePassword, KindTOTP, KindRecoveryCode, KindUsername, KindPasskey, KindSecurityKey}

// CanFollow refuses a binding whose sign-ins could not follow the flow.
// The browser sign-ins of OpenID Connect clients follow a bound flow,
// through the steps in runnableKinds; other bindings (a SAML service
// provider's, the password grant's) are kept for the sign-ins that will
// follow them (docs/auth-flows.md). field prefixes the fields it names.
func CanFollow(field, clientKind string, usage Usage, d *Definition) error {
	if clientKind != store.ClientKindOIDC || usage != UsageBrowser {
		return nil
	}
	for i, st := range d.Steps {
		if !slices.Contains(runnableKinds, st.Kind) {
			return apperr.Field(fmt.Sprintf("%ssteps[%d].kind", field, i),
				"the sign-in does not run %s steps yet: a flow with one can be written, not bound to a client's browser sign-ins", st.Kind)
		}
	}
	return nil
}
