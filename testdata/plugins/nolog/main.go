// Command nolog calls the log host function, which its manifest does not
// grant: the server refuses it at load.
package main

import "github.com/idenplane/idenplane/app/plugins/sdk"

//go:wasmexport on_claims
func onClaims(uint32) uint32 {
	sdk.Log(sdk.Warn, "nolog: this line never reaches the server's log")
	return 0
}

func main() {}
