package policies

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/ext"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The CEL environment every condition is compiled in: the variables
// subject, resource and action, typed (a field a condition names that they
// lack is an error at save), and context, a map of anything; the standard
// library with the strings, sets, lists and network extensions.

// SubjectVars is subject in a condition: the request's subject, and for a
// subject of type user whose id is a user's ID, username or email, that
// user.
type SubjectVars struct {
	Type       string         `cel:"type"`
	ID         string         `cel:"id"`
	Properties map[string]any `cel:"properties"`
	// Found: the subject is a user of the realm; the fields below are
	// that user's, and empty when not found.
	Found         bool   `cel:"found"`
	UserID        string `cel:"userId"`
	Username      string `cel:"username"`
	Email         string `cel:"email"`
	EmailVerified bool   `cel:"emailVerified"`
	Enabled       bool   `cel:"enabled"`
	// Roles are the realm roles the user holds, directly, through a group
	// or a composite.
	Roles []string `cel:"roles"`
	// ClientRoles are the client roles the user holds, by clientId.
	ClientRoles map[string][]string `cel:"clientRoles"`
	// Groups are the paths of the user's groups ("/staff/ops").
	Groups []string `cel:"groups"`
	// Organizations are the slugs of the enabled organizations the user
	// is a member of.
	Organizations []string `cel:"organizations"`
	// Attributes are the user's custom attributes, each a list of values.
	Attributes map[string][]string `cel:"attributes"`
}

// ResourceVars is resource in a condition.
type ResourceVars struct {
	Type       string         `cel:"type"`
	ID         string         `cel:"id"`
	Properties map[string]any `cel:"properties"`
}

// ActionVars is action in a condition.
type ActionVars struct {
	Name       string         `cel:"name"`
	Properties map[string]any `cel:"properties"`
}

const (
	// MaxCost bounds a condition's cost, in CEL's cost units: a condition
	// whose estimate, with every list, map and string at most
	// costSizeBound long, exceeds it is refused at save, and an evaluation
	// that reaches it stops and fails, which denies.
	MaxCost       = 1_000_000
	costSizeBound = 100
	// maxNesting bounds the nesting of a condition's parse tree.
	maxNesting = 64
)

var (
	envOnce sync.Once
	celEnv  *cel.Env
	errEnv  error
)

// environment is the one CEL environment, made once.
func environment() (*cel.Env, error) {
	envOnce.Do(func() {
		celEnv, errEnv = cel.NewEnv(
			ext.NativeTypes(reflect.TypeFor[SubjectVars](), reflect.TypeFor[ResourceVars](), reflect.TypeFor[ActionVars](),
				ext.ParseStructTags(true)),
			cel.Variable("subject", cel.ObjectType("policies.SubjectVars")),
			cel.Variable("resource", cel.ObjectType("policies.ResourceVars")),
			cel.Variable("action", cel.ObjectType("policies.ActionVars")),
			cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
			cel.CrossTypeNumericComparisons(true),
			cel.ParserExpressionSizeLimit(MaxConditionLength),
			cel.ParserRecursionLimit(maxNesting),
			ext.Strings(), ext.Sets(), ext.Lists(), ext.Network())
	})
	return celEnv, errEnv
}

// boundedSizes is the cost estimator's view of the data: every list, map
// and string at most costSizeBound long.
type boundedSizes struct{}

func (boundedSizes) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

func (boundedSizes) EstimateSize(cost.AstNode) *cost.SizeEstimate {
	return &cost.SizeEstimate{Min: 0, Max: costSizeBound}
}

// compile checks a condition and makes its program: a syntax or type
// error is a 400 naming the field condition, with the line and column; a
// condition that is not a boolean, or may cost more than MaxCost, too.
func (s *Service) compile(condition string) (cel.Program, error) {
	return s.programs.get(condition)
}

func compileCondition(condition string) (cel.Program, error) {
	if len(condition) > MaxConditionLength {
		return nil, apperr.Field("condition", "is longer than %d bytes", MaxConditionLength)
	}
	if condition == "" {
		condition = "true"
	}
	env, err := environment()
	if err != nil {
		return nil, fmt.Errorf("policies: the CEL environment: %w", err)
	}
	ast, iss := env.Compile(condition)
	if iss != nil && iss.Err() != nil {
		errs := iss.Errors()
		if len(errs) == 0 {
			return nil, apperr.Field("condition", "%v", iss.Err())
		}
		first := errs[0]
		return nil, apperr.Field("condition", "line %d, column %d: %s", first.Location.Line(), first.Location.Column()+1,
			first.Message)
	}
	if !ast.OutputType().IsExactType(cel.BoolType) && !ast.OutputType().IsExactType(cel.DynType) {
		return nil, apperr.Field("condition", "line 1, column 1: must be a boolean expression, not %s", ast.OutputType())
	}
	est, err := env.EstimateCost(ast, boundedSizes{})
	if err != nil {
		return nil, apperr.Field("condition", "its cost cannot be bounded: %v", err)
	}
	if est.Max > MaxCost {
		return nil, apperr.Field("condition", "may cost up to %d, over the limit of %d (lists, maps and strings taken at %d entries): "+
			"nest fewer comprehensions", est.Max, MaxCost, costSizeBound)
	}
	prg, err := env.Program(ast, cel.CostLimit(MaxCost), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, apperr.Field("condition", "%v", err)
	}
	return prg, nil
}

// programCache holds the programs of the conditions compiled, by their
// text: a program is the same whichever realm or policy has it, and safe
// to run concurrently.
type programCache struct {
	mu       sync.RWMutex
	programs map[string]cel.Program
}

const maxCachedPrograms = 10_000

func newProgramCache() *programCache { return &programCache{programs: map[string]cel.Program{}} }

func (c *programCache) get(condition string) (cel.Program, error) {
	c.mu.RLock()
	p, ok := c.programs[condition]
	c.mu.RUnlock()
	if ok {
		return p, nil
	}
	p, err := compileCondition(condition)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.programs) >= maxCachedPrograms {
		clear(c.programs)
	}
	c.programs[condition] = p
	c.mu.Unlock()
	return p, nil
}

// compiled is a stored policy ready to decide.
type compiled struct {
	id, name string
	effect   Effect
	target   Target
	program  cel.Program
	// usesRisk: the condition reads context.riskLevel, which costs a
	// query when the caller does not send it.
	usesRisk bool
}

// compiledOf compiles a stored policy; a stored condition that no longer
// compiles (written by an older version) is an error of the policy, which
// denies whatever its target covers (decide.go).
func (s *Service) compiledOf(sp *store.AuthzPolicy) (*compiled, error) {
	c := &compiled{id: sp.ID, name: sp.Name, effect: Effect(sp.Effect), usesRisk: strings.Contains(sp.Expression, "riskLevel")}
	if err := json.Unmarshal([]byte(sp.ResourceTypes), &c.target.ResourceTypes); err != nil {
		return nil, fmt.Errorf("authorization policy %s: %w", sp.ID, err)
	}
	if err := json.Unmarshal([]byte(sp.Actions), &c.target.Actions); err != nil {
		return nil, fmt.Errorf("authorization policy %s: %w", sp.ID, err)
	}
	prg, err := s.compile(sp.Expression)
	var ae *apperr.Error
	if errors.As(err, &ae) {
		s.deps.Log.Warn("authorization policy does not compile; it fails closed", "policy", sp.ID, "error", ae.Message)
		return c, nil // program nil: fails
	} else if err != nil {
		return nil, err
	}
	c.program = prg
	return c, nil
}
