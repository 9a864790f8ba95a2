package policies

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The OpenID AuthZEN Authorization API 1.0 under each realm: the Access
// Evaluation API (one request), the Access Evaluations API (a batch), and
// the policy decision point's metadata. A caller is a client of the
// realm entitled to ask; the decisions are the realm's policies'.

// A client is entitled to ask when its access token carries the scope
// AuthZENScope or the realm role AuthZENRole, or, authenticated by its
// credentials, when that scope is linked to it or its service account
// holds that role.
const (
	AuthZENScope = "authzen"
	AuthZENRole  = "authzen"
)

// The paths, under /realms/{realm}.
const (
	PathEvaluation  = "/access/v1/evaluation"
	PathEvaluations = "/access/v1/evaluations"
	PathMetadata    = "/.well-known/authzen-configuration"
)

// The evaluation semantics of a batch.
const (
	ExecuteAll          = "execute_all"
	DenyOnFirstDeny     = "deny_on_first_deny"
	PermitOnFirstPermit = "permit_on_first_permit"
)

// MaxEvaluations bounds the evaluations of one batch.
const MaxEvaluations = 100

// AccessDecision is AuthZEN's Decision: the boolean, and a context with
// the reason (reason_admin: for the enforcement point's operators, not
// its users).
type AccessDecision struct {
	Decision bool           `json:"decision"`
	Context  map[string]any `json:"context,omitempty"`
}

// EvaluationsRequest is the body of the Access Evaluations API: defaults
// for each evaluation, the evaluations, and options.
type EvaluationsRequest struct {
	Request
	Evaluations []Request           `json:"evaluations"`
	Options     *EvaluationsOptions `json:"options"`
}

// EvaluationsOptions are a batch's options; others are ignored.
type EvaluationsOptions struct {
	EvaluationsSemantic string `json:"evaluations_semantic"`
}

// EvaluationsResponse answers a batch with its decisions, in the order
// of the evaluations; a request without evaluations is a single one,
// answered with its decision.
type EvaluationsResponse struct {
	Decision    *bool            `json:"decision,omitempty"`
	Context     map[string]any   `json:"context,omitempty"`
	Evaluations []AccessDecision `json:"evaluations,omitempty"`
}

// Metadata is the policy decision point's metadata document.
type Metadata struct {
	PolicyDecisionPoint       string `json:"policy_decision_point"`
	AccessEvaluationEndpoint  string `json:"access_evaluation_endpoint"`
	AccessEvaluationsEndpoint string `json:"access_evaluations_endpoint"`
}

// echoRequestID answers the caller's X-Request-ID, as the API asks, on
// every answer, errors included.
func echoRequestID(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-ID")
	if id == "" || len(id) > 256 {
		return
	}
	for _, c := range id {
		if c < 0x20 || c > 0x7e {
			return
		}
	}
	w.Header().Set("X-Request-ID", id)
}

// caller authenticates the request's client: 401 without a credential or
// with a bad one (a Bearer challenge), 403 for a client not entitled.
// Nothing of a decision is answered to either.
func (s *Service) caller(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	var c *Caller
	if s.deps.Caller != nil {
		var err error
		if c, err = s.deps.Caller(r, realm); err != nil {
			return err
		}
	}
	if c == nil {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer realm=%q", s.deps.Issuer(realm)))
		return apperr.Unauthorized("a client's access token, or its credentials (Basic), is required")
	}
	if !c.Entitled {
		return apperr.Forbidden("client %s may not ask for decisions: it needs the scope %q or the realm role %q", c.ClientID,
			AuthZENScope, AuthZENRole)
	}
	return nil
}

// readAuthZEN decodes an AuthZEN body: unknown fields are ignored, as the
// API asks; a field of the wrong type, or JSON nested past MaxDepth, is a
// 400 naming it.
func readAuthZEN(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if !httpx.IsObject(body) {
		return apperr.InvalidJSON("request body must be a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var typ *json.UnmarshalTypeError
		var syntax *json.SyntaxError
		switch {
		case errors.As(err, &typ) && typ.Field != "":
			return apperr.Field(typ.Field, "must be %s, not a JSON %s", jsonKindOf(typ.Type.Kind()), typ.Value)
		case errors.As(err, &syntax):
			return apperr.InvalidJSON("malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
		}
		return apperr.InvalidJSON("malformed JSON: %v", err)
	}
	return nil
}

// jsonKindOf names the JSON a Go kind decodes from.
func jsonKindOf(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Bool:
		return "a boolean"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return "a number"
}

// AccessEvaluation answers one request: POST …/access/v1/evaluation.
func (s *Service) AccessEvaluation(w http.ResponseWriter, r *http.Request) error {
	echoRequestID(w, r)
	realm, err := s.deps.ProtocolRealm(r)
	if err != nil {
		return err
	}
	if err := s.caller(w, r, realm); err != nil {
		return err
	}
	var q Request
	if err := readAuthZEN(r, &q); err != nil {
		return err
	}
	if err := q.check(""); err != nil {
		return err
	}
	d, err := s.Decide(r.Context(), realm, &q, s.authzenFacts(&q))
	if err != nil {
		return err
	}
	return httpx.OK(w, accessDecision(d, "0"))
}

// AccessEvaluations answers a batch: POST …/access/v1/evaluations. Each
// evaluation takes the top-level subject, action, resource and context
// it leaves out; the semantic says whether all are evaluated
// (execute_all, the default) or the batch stops at the first deny
// (deny_on_first_deny) or the first permit (permit_on_first_permit).
func (s *Service) AccessEvaluations(w http.ResponseWriter, r *http.Request) error {
	echoRequestID(w, r)
	realm, err := s.deps.ProtocolRealm(r)
	if err != nil {
		return err
	}
	if err := s.caller(w, r, realm); err != nil {
		return err
	}
	var in EvaluationsRequest
	if err := readAuthZEN(r, &in); err != nil {
		return err
	}
	semantic := ExecuteAll
	if in.Options != nil && in.Options.EvaluationsSemantic != "" {
		semantic = in.Options.EvaluationsSemantic
	}
	switch semantic {
	case ExecuteAll, DenyOnFirstDeny, PermitOnFirstPermit:
	default:
		return apperr.Field("options.evaluations_semantic", "must be %s, %s or %s, not %q", ExecuteAll, DenyOnFirstDeny,
			PermitOnFirstPermit, semantic)
	}
	if len(in.Evaluations) == 0 { // a single evaluation, as the Access Evaluation API
		q := in.Request
		if err := q.check(""); err != nil {
			return err
		}
		d, err := s.Decide(r.Context(), realm, &q, s.authzenFacts(&q))
		if err != nil {
			return err
		}
		one := accessDecision(d, "0")
		return httpx.OK(w, EvaluationsResponse{Decision: &one.Decision, Context: one.Context})
	}
	if len(in.Evaluations) > MaxEvaluations {
		return apperr.Field("evaluations", "holds at most %d evaluations", MaxEvaluations)
	}
	batch := make([]Request, len(in.Evaluations))
	for i, e := range in.Evaluations {
		q := withDefaults(e, in.Request)
		if err := q.check(fmt.Sprintf("evaluations[%d].", i)); err != nil {
			return err
		}
		batch[i] = q
	}
	out := EvaluationsResponse{Evaluations: make([]AccessDecision, 0, len(batch))}
	for i := range batch {
		d, err := s.Decide(r.Context(), realm, &batch[i], s.authzenFacts(&batch[i]))
		if err != nil {
			return err
		}
		out.Evaluations = append(out.Evaluations, accessDecision(d, strconv.Itoa(i)))
		if semantic == DenyOnFirstDeny && !d.Permitted() || semantic == PermitOnFirstPermit && d.Permitted() {
			break
		}
	}
	return httpx.OK(w, out)
}

// withDefaults is an evaluation with the top-level values for what it
// leaves out; what it gives overrides them, whole.
func withDefaults(e Request, def Request) Request {
	if e.Subject == nil {
		e.Subject = def.Subject
	}
	if e.Action == nil {
		e.Action = def.Action
	}
	if e.Resource == nil {
		e.Resource = def.Resource
	}
	if e.Context == nil {
		e.Context = def.Context
	}
	return e
}

// authzenFacts are an AuthZEN request's facts: the address is the
// subject's (the common property ip_address), not the enforcement
// point's that calls.
func (s *Service) authzenFacts(q *Request) Facts {
	f := Facts{Now: s.deps.Now()}
	if ip, ok := q.Subject.Properties["ip_address"].(string); ok {
		f.ClientAddress = ip
	}
	return f
}

func accessDecision(d *Decision, id string) AccessDecision {
	return AccessDecision{Decision: d.Permitted(), Context: map[string]any{"id": id, "reason_admin": map[string]string{"en": d.Reason}}}
}

// AuthZENMetadata is the policy decision point's metadata: GET
// …/.well-known/authzen-configuration. Its identifier is the realm's
// issuer; the endpoints are the default paths under it.
func (s *Service) AuthZENMetadata(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.ProtocolRealm(r)
	if err != nil {
		return err
	}
	pdp := strings.TrimSuffix(s.deps.Issuer(realm), "/")
	return httpx.OK(w, Metadata{PolicyDecisionPoint: pdp, AccessEvaluationEndpoint: pdp + PathEvaluation,
		AccessEvaluationsEndpoint: pdp + PathEvaluations})
}
