// Command loop is a plugin that never answers: the server stops it at its
// time limit.
package main

var spins uint64

//go:wasmexport on_claims
func onClaims(uint32) uint32 {
	for {
		spins++
	}
}

func main() {}
