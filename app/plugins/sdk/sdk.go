// Package sdk is for writing the server's plugins in Go (docs/plugins.md).
// A plugin is a package main built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugin.wasm
//
// that exports each of its hooks with //go:wasmexport (on_event,
// on_claims, on_signin: func(inputLen uint32) uint32, 0 for success) and
// reads the call's JSON input with Input and answers with Output.
// Outside GOOS=wasip1 the package builds, and its functions panic.
package sdk

import "encoding/json"

// Level is a log line's severity.
type Level uint32

const (
	Debug Level = 0
	Info  Level = 1
	Warn  Level = 2
	Error Level = 3
)

// Input is the call's input: JSON, as docs/plugins.md shows for each hook.
func Input() []byte { return input() }

// Output answers b; a later Output replaces it.
func Output(b []byte) { output(b) }

// OutputJSON answers v as JSON.
func OutputJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	output(b)
	return nil
}

// Log writes msg to the server's log under the plugin's name. It needs
// the permission "log": the server refuses a module that imports it
// without.
func Log(level Level, msg string) { logLine(level, msg) }
