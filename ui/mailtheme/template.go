package mailtheme

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"io"
	"slices"
	"strings"
	texttemplate "text/template"
	"text/template/parse"
	"unicode/utf8"
)

// Override is a theme's replacement of a mail's subject, HTML part and
// text part; an empty one keeps the mail's own.
type Override struct {
	Subject string `json:"subject,omitempty"`
	HTML    string `json:"html,omitempty"`
	Text    string `json:"text,omitempty"`
}

// Limits of a template's source, in bytes.
const (
	MaxSubject = 1000
	MaxHTML    = 100 << 10
	MaxText    = 50 << 10
)

// Error is a template refused: the part at fault and why.
type Error struct {
	Part    string // subject, html or text
	Message string
}

func (e *Error) Error() string { return e.Part + ": " + e.Message }

// functions are the only functions a template may call: comparisons and
// logic. Those that format (printf and its width), index, call or loop
// could print without bound or reach beyond the variables.
var functions = []string{"and", "or", "not", "eq", "ne"}

// Template is a kind's override, parsed and checked.
type Template struct {
	kind    Kind
	subject *texttemplate.Template
	html    *htmltemplate.Template
	text    *texttemplate.Template
}

// Compile parses o's parts as templates of the mail kind: the subject
// and text with text/template, the HTML with html/template, which
// escapes every value for where it lands. A part is refused when it does
// not parse, uses a variable the kind does not offer, or does anything
// but print variables, compare them and choose with if and with (no
// range, template, define, block, variables or other functions); each is
// then run once on sample values, which is where html/template finds a
// value in a place it cannot escape for.
func Compile(kindName string, o Override) (*Template, error) {
	k, ok := KindNamed(kindName)
	if !ok {
		return nil, &Error{Part: "", Message: fmt.Sprintf("no mail %q; the mails are %s", kindName, strings.Join(Names(), ", "))}
	}
	t := &Template{kind: k}
	var err error
	if o.Subject != "" {
		if t.subject, err = parseText(k, PartSubject, o.Subject, MaxSubject); err != nil {
			return nil, err
		}
	}
	if o.Text != "" {
		if t.text, err = parseText(k, PartText, o.Text, MaxText); err != nil {
			return nil, err
		}
	}
	if o.HTML != "" {
		if err := checkSource(PartHTML, o.HTML, MaxHTML); err != nil {
			return nil, err
		}
		h, err := htmltemplate.New(PartHTML).Option("missingkey=error").Parse(o.HTML)
		if err != nil {
			return nil, &Error{Part: PartHTML, Message: cleanParseError(err)}
		}
		if len(h.Templates()) > 1 {
			return nil, &Error{Part: PartHTML, Message: "define and block are not allowed"}
		}
		if err := checkTree(k, PartHTML, h.Tree); err != nil {
			return nil, err
		}
		t.html = h
	}
	// A run on the samples finds what parsing cannot: html/template's
	// escaping errors.
	subject, html, text := "s", "h", "t"
	if err := t.Execute(samples(k), &subject, &html, &text); err != nil {
		return nil, err
	}
	return t, nil
}

func checkSource(part, src string, max int) error {
	switch {
	case len(src) > max:
		return &Error{Part: part, Message: fmt.Sprintf("is longer than %d bytes", max)}
	case !utf8.ValidString(src):
		return &Error{Part: part, Message: "is not valid UTF-8"}
	}
	return nil
}

func parseText(k Kind, part, src string, max int) (*texttemplate.Template, error) {
	if err := checkSource(part, src, max); err != nil {
		return nil, err
	}
	t, err := texttemplate.New(part).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, &Error{Part: part, Message: cleanParseError(err)}
	}
	if len(t.Templates()) > 1 {
		return nil, &Error{Part: part, Message: "define and block are not allowed"}
	}
	if err := checkTree(k, part, t.Tree); err != nil {
		return nil, err
	}
	return t, nil
}

// cleanParseError drops the template's name, which is the part, from a
// parse error: "template: html:3: unexpected EOF" is "line 3: unexpected EOF".
func cleanParseError(err error) string {
	msg := err.Error()
	for _, p := range []string{PartSubject, PartHTML, PartText} {
		if rest, ok := strings.CutPrefix(msg, "template: "+p+":"); ok {
			return "line " + rest
		}
	}
	return msg
}

// checkTree walks a parsed template and refuses what it may not do.
func checkTree(k Kind, part string, tree *parse.Tree) error {
	if tree == nil || tree.Root == nil {
		return nil // only text, or nothing at all
	}
	c := &checker{kind: k, part: part, vars: k.VariableNames(part)}
	return c.node(tree.Root)
}

type checker struct {
	kind Kind
	part string
	vars []string
}

func (c *checker) fail(n parse.Node, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if n != nil {
		msg = fmt.Sprintf("%s: %s", strings.TrimSpace(n.String()), msg)
	}
	return &Error{Part: c.part, Message: msg}
}

func (c *checker) node(n parse.Node) error {
	switch n := n.(type) {
	case nil:
		return nil
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, m := range n.Nodes {
			if err := c.node(m); err != nil {
				return err
			}
		}
		return nil
	case *parse.TextNode, *parse.CommentNode:
		return nil
	case *parse.ActionNode:
		return c.pipe(n.Pipe)
	case *parse.IfNode:
		return c.branch(&n.BranchNode)
	case *parse.WithNode:
		return c.branch(&n.BranchNode)
	case *parse.RangeNode:
		return c.fail(nil, "range is not allowed: every variable is a single string")
	case *parse.TemplateNode:
		return c.fail(nil, "template is not allowed: a mail's template stands alone")
	case *parse.BreakNode, *parse.ContinueNode:
		return c.fail(nil, "break and continue are not allowed")
	}
	return c.fail(n, "is not allowed here")
}

func (c *checker) branch(b *parse.BranchNode) error {
	if err := c.pipe(b.Pipe); err != nil {
		return err
	}
	if err := c.node(b.List); err != nil {
		return err
	}
	return c.node(b.ElseList)
}

func (c *checker) pipe(p *parse.PipeNode) error {
	if p == nil {
		return nil
	}
	if len(p.Decl) > 0 {
		return c.fail(p, "template variables ($x :=) are not allowed: use the mail's variables")
	}
	for _, cmd := range p.Cmds {
		for i, arg := range cmd.Args {
			if err := c.arg(arg, i == 0); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *checker) arg(n parse.Node, first bool) error {
	switch n := n.(type) {
	case *parse.FieldNode:
		if len(n.Ident) != 1 {
			return c.fail(n, "a variable has no fields of its own")
		}
		if !slices.Contains(c.vars, n.Ident[0]) {
			return c.fail(n, "unknown variable .%s; the %s mail's %s may use %s", n.Ident[0], c.kind.Name, c.part,
				"."+strings.Join(c.vars, ", ."))
		}
		return nil
	case *parse.DotNode, *parse.StringNode, *parse.BoolNode:
		return nil
	case *parse.IdentifierNode:
		if !first || !slices.Contains(functions, n.Ident) {
			return c.fail(n, "only the functions %s may be called", strings.Join(functions, ", "))
		}
		return nil
	case *parse.PipeNode:
		return c.pipe(n)
	case *parse.VariableNode:
		return c.fail(n, "template variables are not allowed: use the mail's variables")
	}
	return c.fail(n, "is not allowed here")
}

// samples are the kind's variables at their sample values.
func samples(k Kind) map[string]string {
	out := map[string]string{}
	for _, v := range k.AllVariables(PartHTML) {
		out[v.Name] = v.Sample
	}
	return out
}

// Execute replaces the parts t overrides with their rendering over vars,
// which must hold every variable of the kind (a missing one is an error,
// never an empty string). The subject comes first: the other parts see
// it as Subject. A subject is one line, whatever the template printed.
func (t *Template) Execute(vars map[string]string, subject, html, text *string) error {
	data := make(map[string]string, len(vars)+1)
	for k, v := range vars {
		data[k] = v
	}
	delete(data, Subject)
	if t.subject != nil {
		s, err := run(PartSubject, func(w io.Writer) error { return t.subject.Execute(w, data) })
		if err != nil {
			return err
		}
		*subject = strings.Join(strings.Fields(s), " ")
	}
	data[Subject] = *subject
	if t.html != nil {
		s, err := run(PartHTML, func(w io.Writer) error { return t.html.Execute(w, data) })
		if err != nil {
			return err
		}
		*html = s
	}
	if t.text != nil {
		s, err := run(PartText, func(w io.Writer) error { return t.text.Execute(w, data) })
		if err != nil {
			return err
		}
		*text = s
	}
	return nil
}

func run(part string, exec func(w io.Writer) error) (string, error) {
	var b bytes.Buffer
	if err := exec(&b); err != nil {
		msg := err.Error()
		for _, p := range []string{"html/template:" + part + ":", "template: " + part + ":"} {
			if rest, ok := strings.CutPrefix(msg, p); ok {
				msg = "line " + rest
			}
		}
		return "", &Error{Part: part, Message: msg}
	}
	return b.String(), nil
}

// Theme is what a realm's published email theme changes of its mails.
type Theme struct {
	// Primary and PrimaryText colour the button; "" keeps the mail's.
	Primary, PrimaryText string
	// LogoURL is the absolute address of the logo the mail shows at its
	// top; "" for none.
	LogoURL string
	// Messages are the theme's own texts, by language tag and key.
	Messages map[string]map[string]string
	// Templates are its overrides, by kind of mail.
	Templates map[string]*Template
}
