// Command observer is an example plugin of the event hook: it logs the
// type of every event it takes, and fails on user.deleted.
package main

import (
	"encoding/json"

	"github.com/idenplane/idenplane/app/plugins/sdk"
)

//go:wasmexport on_event
func onEvent(uint32) uint32 {
	var e struct {
		Type  string `json:"type"`
		Realm string `json:"realm"`
	}
	if err := json.Unmarshal(sdk.Input(), &e); err != nil {
		return 1
	}
	sdk.Log(sdk.Info, "observed "+e.Type+" in "+e.Realm)
	if e.Type == "user.deleted" {
		return 2
	}
	return 0
}

func main() {}
