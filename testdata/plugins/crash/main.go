// Command crash is a plugin that panics, at whichever hook it runs.
package main

var counts map[string]int

//go:wasmexport on_claims
func onClaims(uint32) uint32 {
	counts["calls"]++ // a nil map: a panic
	return 0
}

//go:wasmexport on_signin
func onSignIn(uint32) uint32 {
	counts["sign-ins"]++
	return 0
}

func main() {}
