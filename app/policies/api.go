package policies

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The admin API: the policies, their evaluation and test, the settings.

// EvaluateInput is the body of POST …/policies/evaluate: one request.
type EvaluateInput = Request

// TestInput is the body of POST …/policies/{id}/test: cases to run the
// policy on.
type TestInput struct {
	Cases []TestCase `json:"cases"`
}

// TestCase is a request and the outcome the policy should give it:
// permit or deny (it applies: its target covers the request and its
// condition holds), or not_applicable.
type TestCase struct {
	Name     string         `json:"name"`
	Subject  *Subject       `json:"subject"`
	Action   *Action        `json:"action"`
	Resource *Resource      `json:"resource"`
	Context  map[string]any `json:"context,omitempty"`
	Expected string         `json:"expected"`
}

// TestResult is how one case went.
type TestResult struct {
	Name     string `json:"name"`
	Expected string `json:"expected"`
	// Outcome: permit, deny, not_applicable, or error (its condition
	// failed; in a decision, that denies).
	Outcome string `json:"outcome"`
	Passed  bool   `json:"passed"`
	Reason  string `json:"reason"`
}

// TestReport is the answer of a test.
type TestReport struct {
	PolicyID string       `json:"policyId"`
	Passed   int          `json:"passed"`
	Failed   int          `json:"failed"`
	Results  []TestResult `json:"results"`
}

// The outcomes of a policy on one request, beside permit and deny.
const (
	NotApplicable = "not_applicable"
	OutcomeError  = "error"
)

// MaxTestCases bounds the cases of one test.
const MaxTestCases = 100

func (s *Service) policyLocation(realm *store.Realm, id string) string {
	return s.deps.BaseURL + "/admin/realms/" + url.PathEscape(realm.Name) + "/policies/" + url.PathEscape(id)
}

// CreatePolicy adds a policy.
func (s *Service) CreatePolicy(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	in, err := s.readPolicy(body)
	if err != nil {
		return err
	}
	n, err := s.deps.Store.CountAuthzPolicies(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	if n >= MaxPoliciesPerRealm {
		return apperr.Conflict("", "the realm has %d authorization policies, the most it may have", n)
	}
	now := s.deps.Now().UnixMilli()
	p := stored(realm.ID, uuid.NewString(), in, now, now)
	if err := s.deps.Store.CreateAuthzPolicy(r.Context(), p); errors.Is(err, store.ErrConflict) {
		return errNameTaken("name", in.Name)
	} else if err != nil {
		return err
	}
	rep, err := policyRep(p)
	if err != nil {
		return err
	}
	return httpx.Created(w, s.policyLocation(realm, p.ID), rep)
}

// ListPolicies lists the realm's policies by name.
func (s *Service) ListPolicies(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	ps, err := s.deps.Store.ListAuthzPolicies(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	out := make([]Policy, 0, len(ps))
	for _, p := range ps {
		rep, err := policyRep(p)
		if err != nil {
			return err
		}
		out = append(out, rep)
	}
	return httpx.OK(w, out)
}

func (s *Service) policy(r *http.Request) (*store.Realm, *store.AuthzPolicy, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := httpx.ChildOf(r, realm.ID, "id", "authorization policy", s.deps.Store.GetAuthzPolicy)
	return realm, p, err
}

// GetPolicy shows a policy.
func (s *Service) GetPolicy(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.policy(r)
	if err != nil {
		return err
	}
	rep, err := policyRep(p)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// PutPolicy replaces a policy, whole.
func (s *Service) PutPolicy(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.policy(r)
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	in, err := s.readPolicy(body)
	if err != nil {
		return err
	}
	next := stored(p.RealmID, p.ID, in, p.CreatedAt, s.deps.Now().UnixMilli())
	if err := s.deps.Store.UpdateAuthzPolicy(r.Context(), next); errors.Is(err, store.ErrConflict) {
		return errNameTaken("name", in.Name)
	} else if err != nil {
		return err
	}
	rep, err := policyRep(next)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// DeletePolicy deletes a policy.
func (s *Service) DeletePolicy(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.policy(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteAuthzPolicy(r.Context(), p.RealmID, p.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// mayReadUsers refuses to draw on a stored user's roles, groups and
// attributes for a caller who may not read users.
func (s *Service) mayReadUsers(r *http.Request, subjects ...*Subject) error {
	if s.deps.CallerPermissions == nil || s.deps.CallerPermissions(r).Has(authz.UsersRead) {
		return nil
	}
	for _, sub := range subjects {
		if sub != nil && sub.Type == SubjectUser {
			return apperr.Forbidden("a subject of type user is resolved to the realm's user, whose roles, groups and attributes "+
				"need the permission %s", authz.UsersRead)
		}
	}
	return nil
}

// facts are a request's facts: now, and the caller's address.
func (s *Service) facts(r *http.Request) Facts {
	f := Facts{Now: s.deps.Now()}
	if s.deps.ClientIP != nil {
		f.ClientAddress = s.deps.ClientIP(r)
	}
	return f
}

// Evaluate answers a request from the realm's policies, with the policies
// whose target covers it, and for each whether it applied and why.
func (s *Service) Evaluate(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var in EvaluateInput
	if err := strictJSON(body, &in); err != nil {
		return err
	}
	if err := in.check(""); err != nil {
		return err
	}
	if err := s.mayReadUsers(r, in.Subject); err != nil {
		return err
	}
	d, err := s.Decide(r.Context(), realm, &in, s.facts(r))
	if err != nil {
		return err
	}
	return httpx.OK(w, d)
}

// Test runs one policy, enabled or not, on each case, and reports its
// outcome against the expected one.
func (s *Service) Test(w http.ResponseWriter, r *http.Request) error {
	realm, p, err := s.policy(r)
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var in TestInput
	if err := strictJSON(body, &in); err != nil {
		return err
	}
	switch {
	case len(in.Cases) == 0:
		return apperr.Field("cases", "names at least one case")
	case len(in.Cases) > MaxTestCases:
		return apperr.Field("cases", "holds at most %d cases", MaxTestCases)
	}
	subjects := make([]*Subject, len(in.Cases))
	for i, c := range in.Cases {
		prefix := fmt.Sprintf("cases[%d].", i)
		q := Request{Subject: c.Subject, Action: c.Action, Resource: c.Resource, Context: c.Context}
		if err := q.check(prefix); err != nil {
			return err
		}
		switch c.Expected {
		case string(Permit), string(Deny), NotApplicable:
		default:
			return apperr.Field(prefix+"expected", "must be permit, deny or not_applicable, not %q", c.Expected)
		}
		subjects[i] = c.Subject
	}
	if err := s.mayReadUsers(r, subjects...); err != nil {
		return err
	}
	cp, err := s.compiledOf(p)
	if err != nil {
		return err
	}
	rep := TestReport{PolicyID: p.ID, Results: make([]TestResult, 0, len(in.Cases))}
	facts := s.facts(r)
	for i, c := range in.Cases {
		res := TestResult{Name: c.Name, Expected: c.Expected}
		if res.Name == "" {
			res.Name = fmt.Sprintf("case %d", i+1)
		}
		if !cp.target.covers(c.Resource.Type, c.Action.Name) {
			res.Outcome, res.Reason = NotApplicable, "its target does not cover the request"
		} else {
			q := Request{Subject: c.Subject, Action: c.Action, Resource: c.Resource, Context: c.Context}
			vars, err := s.variables(r.Context(), realm, &q, facts, cp.usesRisk)
			if err != nil {
				return err
			}
			o := cp.run(vars)
			switch {
			case o.failed:
				res.Outcome = OutcomeError
			case o.Applied:
				res.Outcome = string(cp.effect)
			default:
				res.Outcome = NotApplicable
			}
			res.Reason = o.Reason
		}
		res.Passed = res.Outcome == res.Expected
		if res.Passed {
			rep.Passed++
		} else {
			rep.Failed++
		}
		rep.Results = append(rep.Results, res)
	}
	return httpx.OK(w, rep)
}

// GetSettings shows the realm's policy settings, the defaults filled in.
func (s *Service) GetSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	set, err := s.settings(r.Context(), realm)
	if err != nil {
		return err
	}
	return httpx.OK(w, set)
}

// PutSettings replaces the realm's policy settings; fields left out keep
// their defaults.
func (s *Service) PutSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	set := DefaultSettings()
	if err := httpx.DecodeJSON(r, &set); err != nil {
		return err
	}
	if err := set.check(); err != nil {
		return err
	}
	b, err := json.Marshal(set)
	if err != nil {
		return err
	}
	if err := s.deps.Store.PutAuthzPolicySettings(r.Context(), realm.ID, string(b), s.deps.Now().UnixMilli()); err != nil {
		return err
	}
	return httpx.OK(w, set)
}
