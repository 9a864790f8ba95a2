package signin

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stepFiles parses the files that hold steps (step_*.go), each with the
// names of the types it declares.
func stepFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob("step_*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	if len(files) == 0 {
		t.Fatal("no step files found")
	}
	return files
}

func declaredTypes(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				out = append(out, s.(*ast.TypeSpec).Name.Name)
			}
		}
	}
	return out
}

// Steps never call one another, nor the dispatcher: a step file that
// names another file's step, or the engine's ordering, fails.
func TestStepsNameNoOtherStep(t *testing.T) {
	files := stepFiles(t)
	owner := map[string]string{}
	for name, f := range files {
		for _, typ := range declaredTypes(f) {
			owner[typ] = name
		}
	}
	forbidden := []string{"next", "Engine", "groups"}
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			if other, isStep := owner[id.Name]; isStep && other != name {
				t.Errorf("%s names %s, a step of %s: steps never call one another", name, id.Name, other)
			}
			if slices.Contains(forbidden, id.Name) {
				t.Errorf("%s names %s: only the dispatcher decides the order of steps", name, id.Name)
			}
			return true
		})
	}
}

// registeredAMR are the values of RFC 8176 a step may add.
var registeredAMR = []string{"face", "fpt", "geo", "hwk", "iris", "kba", "mca", "mfa", "otp", "pin", "pop", "pwd", "rba",
	"retina", "sc", "sms", "swk", "tel", "user", "vbm", "wia", "fed"}

// Every step declares the AMR it adds and the events it records, as the
// routes declare their permissions: each AMR is registered, each event a
// type of the sign-in, and each event a step's file names is one it
// declares. A step adds an AMR exactly when the flows' checks count it as
// proving who signs in, so that a flow the checks let through never
// lands without one.
func TestStepsDeclareAMRAndEvents(t *testing.T) {
	known := []EventType{EventLogin, EventLoginError, EventUpdatePassword, EventUpdateTOTP}
	files := stepFiles(t)
	owner := map[string]string{}
	for name, f := range files {
		for _, typ := range declaredTypes(f) {
			owner[typ] = name
		}
	}
	// declared are the events the steps of each file declare.
	declared := map[string][]EventType{}
	steps := CoreSteps(nil, Keys{}, nil, nil, StepDeps{})
	// A required action is in no flow, so the checks know nothing of it:
	// it may prove something (a TOTP set up) without counting for them.
	actions := map[StepKind]bool{}
	for _, s := range OwedSteps(nil, nil, nil, nil, nil, nil) {
		steps = append(steps, s)
		actions[s.Kind()] = true
	}
	for _, s := range steps {
		if _, known := checkKinds[s.Kind()]; actions[s.Kind()] && known {
			t.Errorf("required action %s is a kind of step a flow may name", s.Kind())
		}
		if proves := checkKinds[s.Kind()].proves; !actions[s.Kind()] && proves != (len(s.AMR()) > 0) {
			t.Errorf("step %s adds amr %v, and the checks say it proves who signs in: %t", s.Kind(), s.AMR(), proves)
		}
		for _, m := range s.AMR() {
			if !slices.Contains(registeredAMR, m) {
				t.Errorf("step %s adds amr %q, not a value of RFC 8176", s.Kind(), m)
			}
		}
		for _, e := range s.Events() {
			if !slices.Contains(known, e) {
				t.Errorf("step %s declares event %s, not a type of the sign-in", s.Kind(), e)
			}
		}
		file, ok := owner[strings.TrimPrefix(fmt.Sprintf("%T", s), "signin.")]
		if !ok {
			t.Fatalf("step %s (%T) is not declared in a step file", s.Kind(), s)
		}
		declared[file] = append(declared[file], s.Events()...)
	}
	// What a step file records is found by the constants it names, and
	// the emitter's helper, which records EventLoginError.
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			var used EventType
			switch x := n.(type) {
			case *ast.Ident:
				used = eventConst(x.Name)
			case *ast.SelectorExpr:
				if x.Sel.Name == "stepFailed" {
					used = EventLoginError
				}
			}
			if used != "" && !slices.Contains(declared[name], used) {
				t.Errorf("%s records %s, which its steps do not declare", name, used)
			}
			return true
		})
	}
}

// eventConst is the event type an identifier of this package names, ""
// for none.
func eventConst(name string) EventType {
	switch name {
	case "EventLogin":
		return EventLogin
	case "EventLoginError":
		return EventLoginError
	case "EventUpdatePassword":
		return EventUpdatePassword
	}
	return ""
}

// The kinds a binding may use are those the sign-in has steps for.
func TestRunnableKindsAreTheCoreSteps(t *testing.T) {
	var kinds []StepKind
	for _, s := range CoreSteps(nil, Keys{}, nil, nil, StepDeps{}) {
		kinds = append(kinds, s.Kind())
	}
	if !slices.Equal(kinds, runnableKinds) {
		t.Fatalf("core steps %v, runnable kinds %v", kinds, runnableKinds)
	}
}
