// Command gatekeeper is an example plugin of the sign-in hook: it denies
// the users whose attribute blocked is "yes", asks a second factor of
// those whose attribute risk is "high", and allows the others.
package main

import (
	"encoding/json"

	"github.com/idenplane/idenplane/app/plugins/sdk"
)

type input struct {
	User struct {
		Username   string            `json:"username"`
		Attributes map[string]string `json:"attributes"`
	} `json:"user"`
	AMR []string `json:"amr"`
}

//go:wasmexport on_signin
func onSignIn(uint32) uint32 {
	var in input
	if err := json.Unmarshal(sdk.Input(), &in); err != nil {
		return 1
	}
	decision, reason := "allow", ""
	switch {
	case in.User.Attributes["blocked"] == "yes":
		decision, reason = "deny", "the account is blocked by policy"
	case in.User.Attributes["risk"] == "high":
		decision = "mfa"
	}
	sdk.Log(sdk.Info, "gatekeeper: "+in.User.Username+": "+decision)
	if sdk.OutputJSON(map[string]string{"decision": decision, "reason": reason}) != nil {
		return 1
	}
	return 0
}

func main() {}
