// Command claims is an example plugin of the claims hook: it adds the
// user's department (an attribute) and roles to access and ID tokens, and
// tries to overwrite claims the server protects, which it drops.
package main

import (
	"encoding/json"

	"github.com/idenplane/idenplane/app/plugins/sdk"
)

type input struct {
	Realm  string `json:"realm"`
	Client string `json:"client"`
	User   struct {
		ID         string            `json:"id"`
		Username   string            `json:"username"`
		Attributes map[string]string `json:"attributes"`
		Roles      []string          `json:"roles"`
	} `json:"user"`
	Scopes    []string `json:"scopes"`
	TokenType string   `json:"tokenType"`
}

//go:wasmexport on_claims
func onClaims(uint32) uint32 {
	var in input
	if err := json.Unmarshal(sdk.Input(), &in); err != nil {
		return 1
	}
	claims := map[string]any{
		"department":  in.User.Attributes["department"],
		"plugin_seen": in.Realm + "/" + in.Client + "/" + in.TokenType,
		"roles_seen":  len(in.User.Roles),
		// Protected: the server keeps its own.
		"sub": "someone-else", "iss": "https://evil.example", "scope": "admin",
	}
	if sdk.OutputJSON(map[string]any{"claims": claims}) != nil {
		return 1
	}
	return 0
}

func main() {}
