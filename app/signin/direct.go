package signin

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// DirectSteps is what a direct-grant flow asks of user once the password
// the grant carried is checked: the kinds of the steps that apply to this
// user and client, in order. The same dispatcher decides as in a browser
// (conditions, what the user can pass), over a flow that lives for one
// request and is never stored. A step the user cannot pass is a
// CannotPassError.
func (e *Engine) DirectSteps(ctx context.Context, realm *store.Realm, def *Definition, user *store.User, client string) ([]StepKind, error) {
	f := &Flow{rec: &store.SignInFlow{}, Realm: realm, Def: def, Wants: Wants{Client: client}, User: user}
	var kinds []StepKind
	for {
		offer, err := next(ctx, f, e.subject, nil)
		if err != nil || offer == nil {
			return kinds, err
		}
		i := offer[0] // a direct-grant flow has no alternatives (CheckDefinition)
		if kind := def.Steps[i].Kind; kind != KindUsernamePassword {
			kinds = append(kinds, kind)
		}
		f.rec.Passed = append(f.rec.Passed, i)
	}
}
