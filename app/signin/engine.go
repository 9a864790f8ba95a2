package signin

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the sign-in is built from.
type Deps struct {
	Store   *store.Store
	Pages   *Pages
	Now     func() time.Time
	BaseURL string
	// Definition loads an authentication flow of the realm by its ID.
	Definition func(ctx context.Context, realm *store.Realm, id string) (*Definition, error)
	// Steps are the kinds of step flows may use; Requesters what may
	// start a flow.
	Steps      []Step
	Requesters []Requester
	// Owed are the required actions every flow ends with when owed.
	Owed []OwedStep
	// ClientIP is the address of a request's caller.
	ClientIP func(r *http.Request) string
	// Assessor scores each sign-in once its user is known (app/risk);
	// nil assesses none.
	Assessor Assessor
}

// Engine runs flows: it starts them for their requesters, shows and takes
// their steps in the order the one dispatcher (next) decides, and hands
// each finished flow back to its requester.
type Engine struct {
	deps       Deps
	steps      map[StepKind]Step
	owed       []OwedStep
	requesters map[RequesterKind]Requester
	subject    Subject
}

func New(d Deps) *Engine {
	e := &Engine{deps: d, owed: d.Owed, steps: map[StepKind]Step{}, requesters: map[RequesterKind]Requester{}}
	e.subject = stepsSubject{storeSubject{d.Store}, e.steps}
	for _, s := range d.Steps {
		e.steps[s.Kind()] = s
	}
	for _, r := range d.Requesters {
		e.requesters[r.Kind()] = r
	}
	return e
}

// Offers says whether the engine has a step of every kind def uses, so
// that a flow of def can run.
func (e *Engine) Offers(def *Definition) error {
	for i, st := range def.Steps {
		if _, ok := e.steps[st.Kind]; !ok {
			return fmt.Errorf("step %d: the sign-in has no %s step yet", i, st.Kind)
		}
	}
	return nil
}

// Start is what a requester asks of a new flow.
type Start struct {
	Requester   RequesterKind
	RequesterID string
	Definition  *Definition
	Wants       Wants
	ExpiresAt   time.Time
	// User is the user the flow is for from its start, when the
	// requester knows (a step-up's); nil for the steps to tell.
	User *store.User
}

// Begin stores a new flow bound to the browser, and answers the URL of its
// first page.
func (e *Engine) Begin(w http.ResponseWriter, r *http.Request, realm *store.Realm, s Start) (string, error) {
	if _, ok := e.requesters[s.Requester]; !ok {
		return "", fmt.Errorf("sign-in: no requester %s", s.Requester)
	}
	if err := e.Offers(s.Definition); err != nil {
		return "", err
	}
	wants, err := (&Flow{Wants: s.Wants}).wantsJSON()
	if err != nil {
		return "", err
	}
	rec := &store.SignInFlow{ID: uuid.NewString(), RealmID: realm.ID, Requester: string(s.Requester), RequesterID: s.RequesterID,
		DefinitionID: s.Definition.ID, Wants: wants, BrowserHash: store.HashToken(e.deps.Pages.BrowserSecret(w, r, realm)),
		CreatedAt: e.deps.Now().UnixMilli(), ExpiresAt: s.ExpiresAt.UnixMilli()}
	if s.User != nil {
		rec.UserID = s.User.ID
	}
	if err := e.deps.Store.CreateSignInFlow(r.Context(), rec); err != nil {
		return "", err
	}
	return e.flowURL(realm, rec.ID), nil
}

// URL is the page of the flow id.
func (e *Engine) URL(realm *store.Realm, id string) string { return e.flowURL(realm, id) }

func (e *Engine) flowURL(realm *store.Realm, id string) string {
	return e.deps.BaseURL + "/realms/" + url.PathEscape(realm.Name) + "/signin/" + url.PathEscape(id)
}

// errStaleFlow is a page of a flow that is unknown, expired, finished, or
// another browser's.
var errStaleFlow = apperr.New(http.StatusBadRequest, apperr.CodeInvalidRequest, "").WithKey("error.staleAuthRequest")

// errFlowMoved is a step's form posted after the flow moved on: from
// another tab, or posted twice.
var errFlowMoved = apperr.New(http.StatusConflict, apperr.CodeConflict, "").WithKey("signin.error.moved")

// load reads a flow of the realm for the browser that started it.
func (e *Engine) load(w http.ResponseWriter, r *http.Request, realm *store.Realm, id string) (*Flow, error) {
	ctx := r.Context()
	rec, err := e.deps.Store.GetSignInFlow(ctx, realm.ID, id, e.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return nil, errStaleFlow
	} else if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(rec.BrowserHash, store.HashToken(e.deps.Pages.BrowserSecret(w, r, realm))) != 1 {
		return nil, errStaleFlow
	}
	f := &Flow{rec: rec, Realm: realm}
	if f.Wants, err = decodeWants(rec); err != nil {
		return nil, err
	}
	if f.Def, err = e.deps.Definition(ctx, realm, rec.DefinitionID); errors.Is(err, store.ErrNotFound) {
		return nil, errStaleFlow
	} else if err != nil {
		return nil, err
	}
	if rec.UserID != "" {
		if f.User, err = e.deps.Store.GetUser(ctx, realm.ID, rec.UserID); errors.Is(err, store.ErrNotFound) {
			return nil, errStaleFlow
		} else if err != nil {
			return nil, err
		}
		if !f.User.Enabled {
			return nil, errStaleFlow
		}
	}
	if err := e.assess(w, r, f); err != nil {
		return nil, err
	}
	return f, nil
}

// stepAt is the step at index i of what next offers: the flow's own,
// then the required actions.
func (e *Engine) stepAt(f *Flow, i int) Step {
	if i < len(f.Def.Steps) {
		return e.steps[f.Def.Steps[i].Kind]
	}
	return e.owed[i-len(f.Def.Steps)]
}

// view is the dispatcher's side of step i's page, among the offered
// steps.
func (e *Engine) view(w http.ResponseWriter, r *http.Request, f *Flow, i int, offer []int) (View, error) {
	base := e.flowURL(f.Realm, f.ID())
	v := View{Action: base, Step: i, CSRF: e.deps.Pages.CSRFToken(w, r, f.Realm, csrfForm, f.ID()), ClientIP: e.deps.ClientIP(r)}
	if i < len(f.Def.Steps) {
		v.Provider = f.Def.Steps[i].Provider
	}
	for _, j := range offer {
		if j == i {
			continue
		}
		step := e.stepAt(f, j)
		c := Choice{Kind: step.Kind(), URL: base + "?step=" + strconv.Itoa(j)}
		if j < len(f.Def.Steps) {
			c.Provider = f.Def.Steps[j].Provider
		}
		v.Others = append(v.Others, c)
		if o, ok := step.(Offerer); ok {
			ways, err := o.Offer(r.Context(), f, c)
			if err != nil {
				return View{}, err
			}
			v.Ways = append(v.Ways, ways...)
		}
	}
	return v, nil
}

const csrfForm = "signin"

// pick is the offered step the request names (its step parameter), or
// the first offered.
func pick(offer []int, asked string) (int, bool) {
	if asked == "" {
		return offer[0], true
	}
	i, err := strconv.Atoi(asked)
	return i, err == nil && slices.Contains(offer, i)
}

// Page shows the step the flow is at.
func (e *Engine) Page(w http.ResponseWriter, r *http.Request, realm *store.Realm, id string) error {
	f, err := e.load(w, r, realm, id)
	if err != nil {
		return err
	}
	offer, err := next(r.Context(), f, e.subject, e.owed)
	if err != nil {
		return err
	}
	if offer == nil {
		return e.finish(w, r, f)
	}
	i, ok := pick(offer, r.URL.Query().Get("step"))
	if !ok {
		i = offer[0]
	}
	FormsLeaveServer(r.Context())
	v, err := e.view(w, r, f, i, offer)
	if err != nil {
		return err
	}
	return e.stepAt(f, i).Show(w, r, f, v)
}

// Submit takes a step's form: a step passed moves the flow on, by
// compare-and-swap, to its next page or to its requester.
func (e *Engine) Submit(w http.ResponseWriter, r *http.Request, realm *store.Realm, id string) error {
	if err := r.ParseForm(); err != nil {
		return apperr.New(http.StatusBadRequest, apperr.CodeInvalidRequest, "").WithKey("login.error.unreadable")
	}
	f, err := e.load(w, r, realm, id)
	if err != nil {
		return err
	}
	if err := e.deps.Pages.CheckCSRF(r, csrfForm, f.ID()); err != nil {
		return err
	}
	ctx := r.Context()
	offer, err := next(ctx, f, e.subject, e.owed)
	if err != nil {
		return err
	}
	i, ok := 0, false
	if offer != nil {
		i, ok = pick(offer, r.Form.Get("step"))
	}
	if !ok {
		return errFlowMoved
	}
	FormsLeaveServer(ctx)
	step := e.stepAt(f, i)
	v, err := e.view(w, r, f, i, offer)
	if err != nil {
		return err
	}
	user, err := step.Submit(w, r, f, v)
	var show Shown
	if err != nil && !errors.As(err, &show) || user == nil {
		return err
	}
	return e.advance(w, r, f, i, step, user, nil, show)
}

// Pass passes a step of the flow id that was passed elsewhere: at an
// identity provider, whose callback vouches for user, authenticated as amr
// says besides the step's own. The step is the first of kinds the flow
// offers now; then the flow goes on as after a form.
func (e *Engine) Pass(w http.ResponseWriter, r *http.Request, realm *store.Realm, id string, kinds []StepKind, user *store.User, amr []string) error {
	f, err := e.load(w, r, realm, id)
	if err != nil {
		return err
	}
	offer, err := next(r.Context(), f, e.subject, e.owed)
	if err != nil {
		return err
	}
	for _, i := range offer {
		if step := e.stepAt(f, i); slices.Contains(kinds, step.Kind()) {
			return e.advance(w, r, f, i, step, user, amr, nil)
		}
	}
	return errFlowMoved
}

// advance records step i of f passed by user, by compare-and-swap, and
// goes on to the flow's next page or to its requester; or, with show,
// shows the step's own page.
func (e *Engine) advance(w http.ResponseWriter, r *http.Request, f *Flow, i int, step Step, user *store.User, amr []string, show Shown) error {
	ctx, realm := r.Context(), f.Realm
	if f.User != nil && user.ID != f.User.ID {
		return errStaleFlow // a later step proved someone else
	}
	rec := f.record()
	wants, err := f.wantsJSON()
	if err != nil {
		return err
	}
	rec.UserID, rec.Passed, rec.Wants = user.ID, append(rec.Passed, i), wants
	for _, m := range append(step.AMR(), amr...) {
		if (f.proved == nil || slices.Contains(f.proved, m) || slices.Contains(amr, m)) && !slices.Contains(rec.AMR, m) {
			rec.AMR = append(rec.AMR, m)
		}
	}
	if err := e.deps.Store.AdvanceSignInFlow(ctx, rec, e.deps.Now().UnixMilli()); errors.Is(err, store.ErrConflict) {
		return errFlowMoved
	} else if errors.Is(err, store.ErrNotFound) {
		return errStaleFlow
	} else if err != nil {
		return err
	}
	if user != Unnamed {
		f.User = user
	}
	if err := e.assess(w, r, f); err != nil {
		return err
	}
	if show != nil { // its page leads on: to the next page, or the finish
		return show()
	}
	offer, err := next(ctx, f, e.subject, e.owed)
	if err != nil {
		return err
	}
	if offer != nil {
		http.Redirect(w, r, e.flowURL(realm, f.ID()), http.StatusSeeOther)
		return nil
	}
	return e.finish(w, r, f)
}

// finish hands a flow that passed every step to its requester. The flow
// ends first: of two requests finishing it at once, one deletes it and
// finishes, the other finds it gone.
func (e *Engine) finish(w http.ResponseWriter, r *http.Request, f *Flow) error {
	if f.User == nil {
		return errStaleFlow // a definition that proves no one: refused at save
	}
	if err := e.deps.Store.DeleteSignInFlow(r.Context(), f.Realm.ID, f.ID()); errors.Is(err, store.ErrNotFound) {
		return errStaleFlow
	} else if err != nil {
		return err
	}
	if err := e.requesters[f.Requester()].Finish(w, r, f); err != nil || f.Risk == nil {
		return err
	}
	return e.deps.Assessor.Succeeded(r.Context(), f)
}
