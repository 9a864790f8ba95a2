package broker_test

import (
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// mustFormsLeave checks that p's policy has no form-action, as a page whose
// forms lead off the server (to the provider, or on to the application)
// needs, and keeps the rest of the pages' policy.
func mustFormsLeave(t *testing.T, p *apptest.Page) {
	t.Helper()
	csp := p.Header.Get("Content-Security-Policy")
	if strings.Contains(csp, "form-action") || !strings.Contains(csp, "default-src 'none'") ||
		!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "base-uri 'none'") {
		t.Fatalf("page %s: CSP %q, want the pages' policy without form-action", p.URL, csp)
	}
}
