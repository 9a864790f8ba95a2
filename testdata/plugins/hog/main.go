// Command hog is a plugin that allocates without bound: it runs out of its
// memory cap.
package main

var kept [][]byte

//go:wasmexport on_claims
func onClaims(uint32) uint32 {
	for {
		kept = append(kept, make([]byte, 1<<20))
	}
}

func main() {}
