package signin

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// A Step is one kind of step of a sign-in. Steps never call one another
// and never know which step came before or comes next: the dispatcher
// (next) alone reads the flow's definition.
type Step interface {
	Kind() StepKind
	// AMR is what passing the step adds to how the user authenticated
	// (RFC 8176 values); none for a step that proves nothing.
	AMR() []string
	// Events are the types of the login events the step records.
	Events() []EventType
	// Show answers the step's page.
	Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error
	// Submit takes the step's form. It answers the user the step proved
	// (or, for a step that needs the user, the flow's user; or Unnamed)
	// when the step is passed; nil when it has answered the browser
	// itself, with the form again and its message. A step whose proof
	// varies (a WebAuthn key's) says which of its AMR it proved with
	// f.Prove. With a Shown error, the step passed and has a page of its
	// own to show, which leads to the flow's next page.
	Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error)
}

// Shown is what a step's Submit answers with the user when it passed and
// has a page that only this answer can show (the recovery codes an
// enrolment gives, once): the flow moves on, then the page is rendered
// instead of sending the browser on, and its link leads on.
type Shown func() error

func (Shown) Error() string { return "signin: the step shows a page of its own" }

// A Skipper is a step the known user may owe no more, whatever the
// flow says: the dispatcher asks it before offering the step, and passes
// over it as if passed when it answers true.
type Skipper interface {
	Skip(ctx context.Context, f *Flow) (bool, error)
}

// An OwedStep is a required action: a step no flow names, which every
// flow of a browser ends with when the user owes it (a password change
// the realm asks for).
type OwedStep interface {
	Step
	Owed(ctx context.Context, f *Flow) (bool, error)
}

// View is what a step's page needs of the dispatcher.
type View struct {
	Action string // where the step's form posts
	Step   int    // the step's index in the flow's definition, posted back as the form's step field
	CSRF   string
	// Others are the alternatives offered with the step; Ways their
	// buttons on its page (Offerer).
	Others []Choice
	Ways   []ui.OtherWay
	// ClientIP is the caller's address, for the credential checks'
	// throttles and the events.
	ClientIP string
	// Provider is the identity provider an idp-redirect step names; ""
	// for every provider of the realm.
	Provider string
}

// A Choice is another step the person may take instead.
type Choice struct {
	Kind StepKind
	URL  string // the step's page
	// Provider is the identity provider the step names; "" for any.
	Provider string
}

// An Offerer is a step that shows itself on the page of another step of
// its run of alternatives: buttons to its own page (c.URL) or straight to
// where it leads (an identity provider); none when it has nothing to offer
// (a realm without providers). A step that is no Offerer is reached by
// its URL alone, as the code steps link one another.
type Offerer interface {
	Offer(ctx context.Context, f *Flow, c Choice) ([]ui.OtherWay, error)
}

// FormAction is where the step's form posts: the flow, naming the step.
func (v View) FormAction() string { return v.Action + "?step=" + strconv.Itoa(v.Step) }

// Other is the URL of the alternative of kind, "" when it is not offered.
func (v View) Other(kind StepKind) string {
	for _, c := range v.Others {
		if c.Kind == kind {
			return c.URL
		}
	}
	return ""
}

// A Requester is what asked for a sign-in: it finishes the flow its own
// way once every step is passed, and never renders a step.
type Requester interface {
	Kind() RequesterKind
	// Finish ends a flow that passed every step it owes: f.User is
	// known, f.AMR() says how it authenticated.
	Finish(w http.ResponseWriter, r *http.Request, f *Flow) error
}

// StepDeps is what the core steps need besides the identity core, the
// pages and the events.
type StepDeps struct {
	Store *store.Store
	Now   func() time.Time
	// MailCode queues the mail of an email one-time code.
	MailCode CodeMailer
	// ForgotURL and RegisterURL are the pages the password step links to:
	// the forgot-password page and the register page, each leading back
	// to the flow flowID.
	ForgotURL, RegisterURL func(realm *store.Realm, flowID string) string
}

// A CodeMailer queues the mail carrying code to u, valid for lifetime,
// in the transaction in which record stores the code: both or neither.
// It answers record's error as it is.
type CodeMailer func(ctx context.Context, r *http.Request, realm *store.Realm, u *store.User, code string,
	lifetime time.Duration, record func(tx *store.Store) error) error

// OwedSteps are the required actions the sign-in provides, in the order
// they are owed. ended tells the clients of sessions a step ended.
func OwedSteps(core *identity.Core, st *store.Store, pages *Pages, emit Emitter, now func() time.Time,
	ended func(ctx context.Context, realm *store.Realm, sessions []*store.Session)) []OwedStep {
	return []OwedStep{configureTOTPStep{core: core, store: st, pages: pages, emit: emit},
		updatePasswordStep{core: core, store: st, pages: pages, emit: emit, now: now, ended: ended}}
}

// CoreSteps are the steps the sign-in itself provides; modules provide the
// others (an identity provider's, an organization's).
func CoreSteps(core *identity.Core, keys Keys, pages *Pages, emit Emitter, d StepDeps) []Step {
	return []Step{passwordStep{core: core, pages: pages, emit: emit, deps: d}, codeStep{core: core, pages: pages, emit: emit},
		codeStep{core: core, pages: pages, emit: emit, recovery: true}, usernameStep{core: core, pages: pages},
		passkeyStep{keys: keys, pages: pages, emit: emit}, securityKeyStep{keys: keys, pages: pages},
		emailCodeStep{pages: pages, emit: emit, deps: d}, termsStep{pages: pages, emit: emit, deps: d}}
}

// Unnamed is what a step's Submit answers to pass without naming a user:
// a username step given a login that names nobody who may sign in. The
// flow moves on with its user unknown, as it would with one, and only a
// later step's proof names the user.
var Unnamed = &store.User{}
