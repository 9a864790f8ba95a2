package policies

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
)

// Nesting past MaxDepth is refused, naming the path down to the first
// free-form object on the way; brackets inside strings do not count.
func TestCheckDepth(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, c := range []struct {
		name, body, field string
	}{
		{"flat", `{"a":1,"b":[1,2,{"c":"{{{{"}]}`, ""},
		{"at the limit", nest(`{"a":`, `}`, MaxDepth), ""},
		{"an array past it", `{"context":` + nest(`[`, `]`, MaxDepth) + `}`, "context"},
		{"under context", `{"subject":{"type":"user"},"context":` + nest(`{"x":`, `}`, MaxDepth) + `}`, "context"},
		{"under properties", `{"resource":{"type":"t","properties":` + nest(`{"x":`, `}`, MaxDepth) + `}}`, "resource.properties"},
		{"in a list", `{"cases":[{"expected":"permit"},{"context":` + nest(`{"x":`, `}`, MaxDepth) + `}]}`, "cases[1].context"},
		{"elsewhere", nest(`{"deep":`, `}`, MaxDepth+1), "deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep." +
			"deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep.deep"},
		{"strings hold brackets", `{"context":{"s":"` + strings.Repeat("[{", 100) + `\"` + `"}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkDepth([]byte(c.body))
			var ae *apperr.Error
			switch {
			case c.field == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.field != "" && (!errors.As(err, &ae) || ae.Field != c.field):
				t.Errorf("%v, want a refusal of %s", err, c.field)
			}
		})
	}
}

// Deny overrides permit; a failed deny denies; a failed permit denies
// unless another permits; nothing applied is the default.
func TestCombine(t *testing.T) {
	permit := Outcome{Name: "p", Effect: Permit, Applied: true}
	deny := Outcome{Name: "d", Effect: Deny, Applied: true}
	failedPermit := Outcome{Name: "fp", Effect: Permit, failed: true}
	failedDeny := Outcome{Name: "fd", Effect: Deny, failed: true}
	idle := Outcome{Name: "i", Effect: Deny}
	for _, c := range []struct {
		name     string
		outcomes []Outcome
		def      Effect
		want     Effect
		reason   string
	}{
		{"nothing", nil, Deny, Deny, "default"},
		{"nothing, default permit", nil, Permit, Permit, "default"},
		{"idle policies", []Outcome{idle}, Permit, Permit, "default"},
		{"a permit", []Outcome{idle, permit}, Deny, Permit, `"p"`},
		{"deny overrides", []Outcome{permit, deny}, Permit, Deny, `"d"`},
		{"a failed deny", []Outcome{permit, failedDeny}, Permit, Deny, `"fd"`},
		{"a failed permit alone", []Outcome{failedPermit}, Permit, Deny, `"fp"`},
		{"a failed permit beside a permit", []Outcome{failedPermit, permit}, Deny, Permit, `"p"`},
	} {
		d := &Decision{Policies: c.outcomes}
		combine(d, Settings{DefaultDecision: c.def})
		if d.Decision != c.want || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s: %s (%s), want %s naming %s", c.name, d.Decision, d.Reason, c.want, c.reason)
		}
	}
}

// A condition compiles to a boolean program within the cost limit; the
// errors say where.
func TestCompileCondition(t *testing.T) {
	for _, c := range []struct {
		condition, err string
	}{
		{"", ""},
		{`"admin" in subject.roles && resource.properties.owner == subject.email`, ""},
		{`context.time.getHours("UTC") < 9`, ""},
		{`resource.properties.public`, ""}, // dyn: checked at run time
		{`subject.rolez`, "line 1, column 8: undefined field 'rolez'"},
		{"true &&\n  (", "line 2, column"},
		{`"a"`, "must be a boolean"},
		{strings.Repeat("(", 200) + "true" + strings.Repeat(")", 200), "condition"},
		{strings.Repeat("x", MaxConditionLength+1), "longer than"},
	} {
		_, err := compileCondition(c.condition)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%.40q: %v", c.condition, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%.40q: %v, want %q", c.condition, err, c.err)
		}
	}
	prg, err := compileCondition(`context.time.getHours("UTC") >= 9`)
	if err != nil {
		t.Fatal(err)
	}
	for hour, want := range map[int]bool{8: false, 9: true} {
		held, err := evalBool(prg, map[string]any{"subject": &SubjectVars{}, "resource": &ResourceVars{}, "action": &ActionVars{},
			"context": map[string]any{"time": time.Date(2026, 1, 1, hour, 0, 0, 0, time.UTC)}})
		if err != nil || held != want {
			t.Errorf("at %d: %v %v", hour, held, err)
		}
	}
}
