package app

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/idenplane/idenplane"

// httpPackages are what the layers below the handlers must not depend on.
// A name ending in "/..." stands for the packages under it too.
var httpPackages = []string{"net/http", "github.com/gorilla/mux", "github.com/zitadel/oidc/...", "github.com/a-h/templ/...",
	module + "/ui", module + "/app", module + "/app/httpx"}

// The layers of docs/architecture.md: each package, and what it must not
// depend on, directly or through anything it imports.
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the packages' dependencies with the go command")
	}
	for _, c := range []struct {
		pkg   string
		never []string
	}{
		// The store knows its Tracer hook, never a tracing library.
		{"store", []string{module + "/app/...", module + "/ui", "go.opentelemetry.io/..."}},
		{"app/apperr", httpPackages},
		{"app/authz", []string{module + "/store", module + "/app/...", module + "/ui"}},
		{"app/httpx", []string{module + "/app", module + "/ui"}},
		// The server never reaches the load tester or the test support
		// (nor the OpenAPI validator, which the test support brings).
		{"app", []string{module + "/app/loadtest", testSupport, "github.com/pb33f/..."}},
		// The OpenAPI document: built from what the app passes in.
		{"app/openapi", []string{module + "/app", module + "/store", module + "/ui", testSupport}},
		// A module: below app, beside the other modules.
		{"app/events", []string{module + "/app", module + "/app/loadtest", module + "/ui", testSupport}},
		{"app/saml", []string{module + "/app", module + "/app/events", module + "/app/loadtest", module + "/ui", testSupport}},
		{"app/broker", []string{module + "/app", module + "/app/events", module + "/app/loadtest", testSupport}},
		{"app/scim", []string{module + "/app", module + "/app/loadtest", module + "/app/events", module + "/ui", testSupport}},
		{"app/nhi", []string{module + "/app", module + "/app/events", module + "/app/loadtest", module + "/ui", testSupport}},
		{"app/orgs", []string{module + "/app", module + "/app/events", module + "/app/loadtest", testSupport}},
		{"app/adminkeys", []string{module + "/app", module + "/app/events", module + "/app/nhi", module + "/app/loadtest",
			module + "/ui", testSupport}},
		{"app/adminaccounts", []string{module + "/app", module + "/app/events", module + "/app/adminkeys", module + "/app/loadtest",
			module + "/ui", testSupport}},
		{"app/attributes", []string{module + "/app", module + "/app/orgs", module + "/app/loadtest", testSupport}},
		{"app/configfile", []string{module + "/app", module + "/store", module + "/app/httpx", testSupport}},
		// The console reaches the rest of the server only through the API.
		{"app/console", []string{module + "/app", module + "/app/events", module + "/app/nhi", module + "/app/orgs",
			module + "/app/scim", module + "/app/saml", module + "/app/broker", module + "/app/ldapfed",
			module + "/app/adminkeys", module + "/app/attributes", module + "/app/identity", module + "/app/loadtest", testSupport}},
		// A tool beside the server: it starts the server through app.
		{"app/loadtest", []string{testSupport}},
		// Below app and the modules, whose own tests import it.
		{"app/apptest", []string{module + "/app", module + "/app/events", module + "/app/loadtest", module + "/ui",
			module + "/app/scim", module + "/app/saml", module + "/app/nhi"}},
		// The identity core: rules, no HTTP.
		{"app/identity", httpPackages},
		// The server's own TLS, which main.go sets up: nothing of the server.
		{"app/tlsserver", []string{module + "/app/...", module + "/store", module + "/ui"}},
		{"app/telemetry", []string{module + "/app/...", module + "/store", module + "/ui"}},
		// A leaf: the standard library and the error vocabulary only.
		{"app/validate", slices.Concat(httpPackages, []string{module + "/app/authz", module + "/app/identity"})},
	} {
		for _, d := range goDeps(t, module+"/"+c.pkg) {
			if d == module+"/"+c.pkg {
				continue
			}
			for _, never := range c.never {
				prefix, tree := strings.CutSuffix(never, "/...")
				if d == prefix || tree && strings.HasPrefix(d, prefix+"/") {
					t.Errorf("%s depends on %s", c.pkg, d)
				}
			}
		}
	}
}

// testSupport is the packages only tests may import.
const testSupport = module + "/app/apptest/..."

// No package but a test imports the test support: every other package's
// dependencies, test files left out, stay clear of it.
func TestTestSupportOnlyInTests(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the packages' dependencies with the go command")
	}
	prefix := strings.TrimSuffix(testSupport, "/...")
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if p != prefix && !strings.HasPrefix(p, prefix+"/") {
			pkgs = append(pkgs, p)
		}
	}
	out, err = exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}}: {{join .Deps " "}}`}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), ": ")
		for _, d := range strings.Fields(deps) {
			if d == prefix || strings.HasPrefix(d, prefix+"/") {
				t.Errorf("%s depends on %s, which only tests may import", pkg, d)
			}
		}
	}
}

// goDeps lists the packages pkg depends on, itself included.
func goDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}
