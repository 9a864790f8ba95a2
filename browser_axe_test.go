package main

// The accessibility check of the browser tests: axe-core, installed by
// npm ci --prefix testdata/browser, injected into each page of the server
// a test lands on.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// browserAxeRules are the axe-core tags checked: WCAG 2.0 and 2.1, A and AA.
var browserAxeRules = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa"}

// browserKnownViolations are axe rules that existing pages break today,
// by the page's path under /realms/{realm}: they are reported in the log,
// not failed, until the page is fixed. Remove an entry with its fix.
var browserKnownViolations = map[string][]string{}

// axeViolation is one failed axe-core rule with the elements that fail it.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		HTML    string `json:"html"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

func (v axeViolation) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (%s): %s", v.ID, v.Impact, v.Help)
	for _, n := range v.Nodes {
		fmt.Fprintf(&sb, "\n    %v %s", n.Target, n.HTML)
	}
	return sb.String()
}

// browserAxeRun runs axe-core on the document and returns the violations
// only. Evaluating through the DevTools protocol is not subject to the
// page's Content-Security-Policy, so the nonce-guarded pages need no
// exception for it.
var browserAxeRun = fmt.Sprintf(`axe.run(document, {runOnly: {type: 'tag', values: %s}, resultTypes: ['violations']})
	.then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
		nodes: v.nodes.map(n => ({target: n.target, html: n.html, summary: n.failureSummary}))})))`,
	mustJSON(browserAxeRules))

func mustJSON(v any) string {
	j, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(j)
}

// checkA11y runs axe-core (WCAG 2.1 A and AA) on the page of b and fails
// with every violation, except those browserKnownViolations lists for
// the page, which it logs.
func (b *browserTab) checkA11y(loc string) {
	b.t.Helper()
	checkA11y(b.t, b.ctx, b.e.axe, browserKnownViolations[browserPagePath(loc)])
}

// browserPagePath is a page's path under its realm: /login for
// /realms/acme/login.
func browserPagePath(loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return loc
	}
	parts := strings.SplitN(strings.TrimPrefix(u.Path, "/realms/"), "/", 2)
	if !strings.HasPrefix(u.Path, "/realms/") || len(parts) < 2 {
		return u.Path
	}
	return "/" + parts[1]
}

func checkA11y(t *testing.T, ctx context.Context, axe string, known []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browserWaitBound)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	violations, err := axeViolations(ctx, axe)
	if err != nil {
		t.Fatalf("axe-core on %s: %v", loc, err)
	}
	for _, v := range violations {
		if slices.Contains(known, v.ID) {
			t.Logf("known accessibility violation on %s, to fix: %s", loc, v)
			continue
		}
		t.Errorf("accessibility violation on %s: %s", loc, v)
	}
}

// axeViolations injects axe-core into the page, unless it is there
// already, and runs it.
func axeViolations(ctx context.Context, axe string) ([]axeViolation, error) {
	present, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe !== 'undefined'`))
	if err != nil {
		return nil, err
	}
	if !present {
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
			return nil, fmt.Errorf("inject: %w", err)
		}
	}
	return chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](browserAxeRun, chromedp.EvalAwaitPromise))
}
