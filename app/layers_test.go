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

// modules are the packages of the server's areas: each below app and
// beside the others, so that none imports app or another module.
var modules = []string{"events", "saml", "broker", "scim", "nhi", "clients", "orgs", "adminkeys", "adminaccounts", "attributes", "impersonation",
	"ldapfed", "console", "authflows", "mail", "groups", "roles", "signingkeys", "sessions", "registration", "scopes", "recovery",
	"account", "webhooks", "plugins", "auditstreams", "risk", "migration", "policies", "themes", "system", "setup", "upgrade"}

// moduleAlsoNever is what a module must not reach beyond app and the
// other modules. The modules without pages never reach ui; app/saml is a
// requester of the sign-in (app/signin), whose page kit carries ui.
var moduleAlsoNever = map[string][]string{
	"events": {module + "/ui"}, "scim": {module + "/ui"}, "nhi": {module + "/ui"}, "clients": {module + "/ui"},
	"adminkeys": {module + "/ui"}, "adminaccounts": {module + "/ui"},
	"roles": {module + "/ui"}, "signingkeys": {module + "/ui"}, "sessions": {module + "/ui"}, "groups": {module + "/ui"},
	"scopes": {module + "/ui"}, "webhooks": {module + "/ui"}, "auditstreams": {module + "/ui"}, "migration": {module + "/ui"}, "policies": {module + "/ui"},
	"system":  {module + "/ui", module + "/app/identity"},
	"upgrade": {module + "/ui"},
	// The console reaches the rest of the server only through the API.
	"console": {module + "/app/identity"},
}

// layers are the rows of docs/architecture.md: each package under app, and
// what it must not depend on, directly or through anything it imports.
func layers() map[string][]string {
	rows := map[string][]string{
		// The store knows its Tracer hook, never a tracing library.
		"store":      {module + "/app/...", module + "/ui", "go.opentelemetry.io/..."},
		"app/apperr": httpPackages,
		"app/authz":  {module + "/store", module + "/app/...", module + "/ui"},
		"app/httpx":  {module + "/app", module + "/ui"},
		// The server never reaches the load tester or the test support
		// (nor the OpenAPI validator, which the test support brings).
		"app": {module + "/app/loadtest", testSupport, "github.com/pb33f/..."},
		// The OpenAPI document: built from what the app passes in.
		"app/openapi": {module + "/app", module + "/store", module + "/ui", testSupport},
		// Leaves of the command line: nothing of the server.
		"app/configfile": {module + "/app/...", module + "/store", module + "/ui"},
		"app/completion": {module + "/app/...", module + "/store", module + "/ui"},
		// A tool beside the server: it starts the server through app.
		"app/loadtest": {testSupport},
		// Test support: below app and the modules, whose own tests import
		// it; the whole server only through realapp.
		"app/apptest":             append([]string{module + "/app", module + "/app/loadtest", module + "/ui"}, moduleDirs()...),
		"app/apptest/openapitest": {module + "/app", module + "/store", module + "/ui"},
		"app/apptest/tlstest":     {module + "/app", module + "/store", module + "/ui"},
		"app/apptest/realapp":     {module + "/app/loadtest"},
		// The event bus: below the modules, which publish on it and
		// subscribe to it; no HTTP.
		"app/bus": slices.Concat(httpPackages, moduleDirs()),
		// The identity core: rules, no HTTP; its hash below it.
		"app/identity": httpPackages,
		// The sign-in: below the modules, which plug steps into it; no
		// protocol library, so that each protocol stays a requester.
		"app/signin": slices.Concat([]string{module + "/app", module + "/app/loadtest", testSupport,
			"github.com/zitadel/oidc/...", "github.com/crewjam/saml/..."}, moduleDirs()),
		"app/identity/argon2id": {module + "/...", "net/http"},
		// WebAuthn's rules, beside the core: go-webauthn brings net/http,
		// and nothing else of the handlers may come with it.
		"app/identity/webauthnrp": {"github.com/gorilla/mux", "github.com/zitadel/oidc/...", "github.com/a-h/templ/...",
			module + "/ui", module + "/app", module + "/app/httpx", module + "/app/signin"},
		// The server's own TLS and tracing, which main.go sets up: nothing
		// of the server.
		"app/tlsserver": {module + "/app/...", module + "/store", module + "/ui"},
		"app/telemetry": {module + "/app/...", module + "/store", module + "/ui"},
		// Built into plugins (GOOS=wasip1), never into the server: nothing
		// of it.
		"app/plugins/sdk": {module + "/app/...", module + "/store", module + "/ui"},
		// A leaf: the standard library and the error vocabulary only.
		"app/validate": slices.Concat(httpPackages, []string{module + "/app/authz", module + "/app/identity"}),
	}
	for _, m := range modules {
		never := []string{module + "/app", module + "/app/loadtest", testSupport}
		for _, other := range modules {
			if other != m {
				never = append(never, module+"/app/"+other+"/...")
			}
		}
		rows["app/"+m] = append(never, moduleAlsoNever[m]...)
	}
	return rows
}

func moduleDirs() []string {
	out := make([]string, len(modules))
	for i, m := range modules {
		out[i] = module + "/app/" + m + "/..."
	}
	return out
}

// The layers of docs/architecture.md, each package's row checked against
// what the go command says it depends on. Every package under app has a
// row: a new package without one fails here until its layer is written
// down.
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the packages' dependencies with the go command")
	}
	rows := layers()
	out, err := exec.Command("go", "list", module+"/app/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if _, ok := rows[strings.TrimPrefix(p, module+"/")]; !ok {
			t.Errorf("%s has no row in layers(): write down what it may not depend on (docs/architecture.md)", p)
		}
	}
	for pkg, never := range rows {
		for _, d := range goDeps(t, module+"/"+pkg) {
			if d == module+"/"+pkg {
				continue
			}
			for _, n := range never {
				prefix, tree := strings.CutSuffix(n, "/...")
				if d == prefix || tree && strings.HasPrefix(d, prefix+"/") {
					t.Errorf("%s depends on %s", pkg, d)
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
