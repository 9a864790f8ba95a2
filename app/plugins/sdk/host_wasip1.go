//go:build wasip1

package sdk

import "unsafe"

//go:wasmimport idenplane input
func hostInput(ptr unsafe.Pointer, capacity uint32) uint32

//go:wasmimport idenplane output
func hostOutput(ptr unsafe.Pointer, size uint32)

//go:wasmimport idenplane log
func hostLog(level uint32, ptr unsafe.Pointer, size uint32)

func input() []byte {
	n := hostInput(nil, 0)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	hostInput(unsafe.Pointer(&b[0]), n)
	return b
}

func output(b []byte) {
	if len(b) == 0 {
		hostOutput(nil, 0)
		return
	}
	hostOutput(unsafe.Pointer(&b[0]), uint32(len(b)))
}

func logLine(level Level, msg string) {
	if msg == "" {
		return
	}
	hostLog(uint32(level), unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
}
