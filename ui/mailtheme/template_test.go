package mailtheme

import (
	"errors"
	"strings"
	"testing"
)

// A template prints the kind's variables and chooses with if and with;
// anything else is refused at compile time, naming the part and why.
func TestCompile(t *testing.T) {
	for _, c := range []struct {
		name, kind string
		o          Override
		part, err  string // the refusal; "" for none
	}{
		{"plain subject", "verify-email", Override{Subject: "Welcome to {{.Realm}}, {{.Name}}"}, "", ""},
		{"html with the link", "verify-email", Override{HTML: `<p>{{.Greeting}}</p><a href="{{.Link}}">{{.Action}}</a>`}, "", ""},
		{"text with if and with", "email-code", Override{Text: `{{if eq .Lang "de"}}Code{{else}}Your code{{end}}: {{.Code}}{{with .LogoURL}} {{.}}{{end}}`}, "", ""},
		{"the subject in the body", "test", Override{HTML: "<h1>{{.Subject}}</h1>"}, "", ""},
		{"comments", "test", Override{Text: "{{/* a note */}}{{.Done}}"}, "", ""},
		{"no mail of that name", "welcome", Override{Subject: "x"}, "", "no mail"},
		{"an unknown variable", "verify-email", Override{HTML: "<p>{{.Password}}</p>"}, PartHTML, "unknown variable .Password"},
		{"another mail's variable", "verify-email", Override{Text: "{{.Code}}"}, PartText, "unknown variable .Code"},
		{"the subject in the subject", "test", Override{Subject: "{{.Subject}}"}, PartSubject, "unknown variable .Subject"},
		{"an unknown variable in a branch", "test", Override{Text: "{{if .Done}}{{else}}{{.Nope}}{{end}}"}, PartText, "unknown variable .Nope"},
		{"a field of a variable", "test", Override{Text: "{{.Realm.Name}}"}, PartText, "no fields"},
		{"range", "test", Override{Text: "{{range .Realm}}x{{end}}"}, PartText, "range"},
		{"define", "test", Override{Text: `{{define "x"}}y{{end}}`}, PartText, "define"},
		{"template", "test", Override{Text: `{{template "x"}}`}, PartText, "template"},
		{"printf", "test", Override{Text: `{{printf "%999999999d" 1}}`}, PartText, "only the functions"},
		{"call through a pipe", "test", Override{Text: `{{.Realm | printf "%s"}}`}, PartText, "only the functions"},
		{"variables", "test", Override{Text: `{{$x := .Realm}}{{$x}}`}, PartText, "variables"},
		{"a parse error", "test", Override{HTML: "<p>{{.Realm</p>"}, PartHTML, "line 1"},
		{"an escaping error", "test", Override{HTML: `<a href="{{.Realm}}`}, PartHTML, ""},
		{"too long", "test", Override{Subject: strings.Repeat("x", MaxSubject+1)}, PartSubject, "longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(c.kind, c.o)
			var e *Error
			switch {
			case c.part == "" && c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case (c.part != "" || c.err != "") && !errors.As(err, &e):
				t.Fatalf("%v, want a refusal of %s", err, c.part)
			case e != nil && (e.Part != c.part || !strings.Contains(e.Message, c.err)):
				t.Fatalf("refused %s: %s, want %s: %q", e.Part, e.Message, c.part, c.err)
			}
		})
	}
}

// Execute fills the parts a template overrides and leaves the others; the
// HTML part escapes the values; the subject is one line.
func TestExecute(t *testing.T) {
	tm, err := Compile("verify-email", Override{Subject: "Hi {{.Name}}\r\nBcc: x@example.com",
		HTML: `<p>{{.Name}}</p><a href="{{.Link}}">{{.Subject}}</a>`})
	if err != nil {
		t.Fatal(err)
	}
	vars := samples(mustKind(t, "verify-email"))
	vars["Name"] = `<b>Alex</b>`
	vars["Link"] = "javascript:alert(1)"
	subject, html, text := "default subject", "default html", "default text"
	if err := tm.Execute(vars, &subject, &html, &text); err != nil {
		t.Fatal(err)
	}
	if subject != "Hi <b>Alex</b> Bcc: x@example.com" {
		t.Errorf("subject %q", subject)
	}
	if !strings.Contains(html, "&lt;b&gt;Alex&lt;/b&gt;") || strings.Contains(html, "javascript:") || !strings.Contains(html, "#ZgotmplZ") {
		t.Errorf("html not escaped: %s", html)
	}
	if text != "default text" {
		t.Errorf("text %q, want the mail's own", text)
	}
	delete(vars, "Link")
	if err := tm.Execute(vars, &subject, &html, &text); err == nil {
		t.Error("a missing variable printed as nothing")
	}
}

// Every kind's variables are distinct, the common ones included, and
// their samples run.
func TestKinds(t *testing.T) {
	for _, k := range Kinds {
		seen := map[string]bool{}
		for _, v := range k.AllVariables(PartHTML) {
			if seen[v.Name] {
				t.Errorf("%s: %s twice", k.Name, v.Name)
			}
			seen[v.Name] = true
		}
		var src strings.Builder
		for _, v := range k.VariableNames(PartHTML) {
			src.WriteString("{{." + v + "}}")
		}
		if _, err := Compile(k.Name, Override{HTML: src.String(), Text: src.String()}); err != nil {
			t.Errorf("%s: every variable: %v", k.Name, err)
		}
	}
}

func mustKind(t *testing.T, name string) Kind {
	t.Helper()
	k, ok := KindNamed(name)
	if !ok {
		t.Fatalf("no kind %s", name)
	}
	return k
}

// FuzzCompile: any source compiles or is refused with an *Error, never
// a panic; what compiles runs on the samples.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"", "{{.Realm}}", "{{if .Name}}{{.Link}}{{end}}", "{{range .}}{{end}}", `<a href="{{.Link}}">`,
		`{{define "a"}}{{end}}`, "{{.Nope}}", "{{printf}}", `{{eq .Lang "de" | not}}`, "{{(eq .Lang .Dir)}}", "{{with $}}{{end}}"} {
		f.Add("verify-email", s)
	}
	f.Fuzz(func(t *testing.T, kind, src string) {
		for _, o := range []Override{{Subject: src}, {HTML: src}, {Text: src}} {
			tm, err := Compile(kind, o)
			var e *Error
			if err != nil {
				if !errors.As(err, &e) {
					t.Fatalf("%q: not an *Error: %v", src, err)
				}
				continue
			}
			k, _ := KindNamed(kind)
			s, h, x := "", "", ""
			if err := tm.Execute(samples(k), &s, &h, &x); err != nil {
				t.Fatalf("%q compiled but does not run: %v", src, err)
			}
		}
	})
}
