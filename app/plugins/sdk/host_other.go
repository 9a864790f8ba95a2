//go:build !wasip1

package sdk

// Outside a WebAssembly sandbox there is no server to call.
const outside = "sdk: only in a plugin built with GOOS=wasip1 GOARCH=wasm"

func input() []byte                 { panic(outside) }
func output([]byte)                 { panic(outside) }
func logLine(level Level, _ string) { panic(outside) }
