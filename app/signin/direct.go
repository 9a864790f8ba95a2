package signin

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// RequesterPasswordGrant names the flow of a password grant: it lives for
// one request and is never stored.
const RequesterPasswordGrant RequesterKind = "password-grant"

// DirectFlow is the flow of one password grant of user for client, once
// its password is checked, assessed (Flow.Risk) when the engine has an
// assessor.
func (e *Engine) DirectFlow(r *http.Request, realm *store.Realm, user *store.User, client string) (*Flow, error) {
	f := &Flow{rec: &store.SignInFlow{ID: uuid.NewString(), RealmID: realm.ID, Requester: string(RequesterPasswordGrant)},
		Realm: realm, Wants: Wants{Client: client}, User: user}
	if err := e.assess(nil, r, f); err != nil {
		return nil, err
	}
	return f, nil
}

// PagesFlow is the flow of a sign-in on the pages that predate flows,
// once they know its user, assessed (Flow.Risk) when the engine has an
// assessor. Those pages serve only realms whose risk policies do not act
// (Definition), so the assessment records the sign-in's signals for the
// user's history and the session's profile; a decision other than allow
// means a policy was enabled meanwhile, and the caller refuses.
func (e *Engine) PagesFlow(w http.ResponseWriter, r *http.Request, realm *store.Realm, user *store.User, client string) (*Flow, error) {
	f := &Flow{rec: &store.SignInFlow{ID: uuid.NewString(), RealmID: realm.ID, Requester: string(RequesterOIDC)},
		Realm: realm, Wants: Wants{Client: client}, User: user}
	if err := e.assess(w, r, f); err != nil {
		return nil, err
	}
	return f, nil
}

// DirectSucceeded records that f, a flow the dispatcher did not run (a
// password grant, a sign-in on the older pages), signed its user in, to
// the session f.SessionID names when it has one.
func (e *Engine) DirectSucceeded(ctx context.Context, f *Flow) error {
	if f.Risk == nil {
		return nil
	}
	return e.deps.Assessor.Succeeded(ctx, f)
}

// DirectSteps is what a direct-grant flow asks of the user of the
// password grant g once the password it carried is checked: the kinds of
// the steps that apply to this user and client, in order. The same
// dispatcher decides as in a browser (conditions, what the user can
// pass). A step the user cannot pass is a CannotPassError.
func (e *Engine) DirectSteps(ctx context.Context, g *Flow, def *Definition) ([]StepKind, error) {
	f := &Flow{rec: &store.SignInFlow{ID: g.ID()}, Realm: g.Realm, Def: def, Wants: g.Wants, User: g.User, Risk: g.Risk}
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
