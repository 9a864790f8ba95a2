package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/plugins"
)

// describePlugins describes the plugins' administration (docs/plugins.md).
func describePlugins(describe func(method, path string, o openapi.Op)) {
	const all, one = "/admin/plugins", "/admin/plugins/{name}"
	example := map[string]any{"name": "acme-claims", "version": "1.2.0", "hooks": []string{"claims"}, "permissions": []string{"log"},
		"limits": map[string]any{"memoryPages": 256, "timeoutMs": 100}, "state": "enabled", "calls": 1520, "errors": 0,
		"dropped": 0, "p99Ms": 0.42}
	describe(http.MethodGet, all, openapi.Op{Summary: "List the plugins",
		Description: "Every plugin of `--plugins-dir`, by name: its manifest, its state (`enabled`, `disabled`, `failed` with " +
			"`reason`: refused at load, or turned off by a call that failed) and its calls since the server started.",
		Response: []plugins.Rep{}})
	describe(http.MethodGet, one, openapi.Op{Summary: "Get a plugin", Response: plugins.Rep{}, Example: example})
	describe(http.MethodDelete, one, openapi.Op{Summary: "Remove a plugin",
		Description: "Takes it out of the running server and forgets its stored state. Its files stay in `--plugins-dir`, " +
			"and the next start loads them again: remove the directory to be rid of it.",
		Status: http.StatusNoContent})
	describe(http.MethodPost, one+"/enable", openapi.Op{Summary: "Enable a plugin",
		Description: "Lasting across restarts; a failed plugin runs again, in a new instance. 409 for a plugin refused at load.",
		Response:    plugins.Rep{}})
	describe(http.MethodPost, one+"/disable", openapi.Op{Summary: "Disable a plugin",
		Description: "Lasting across restarts. A disabled sign-in plugin no longer decides; a failed one denies until enabled or disabled.",
		Response:    plugins.Rep{}})
}
