package plugins

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// hostModule is the name of the module of the server's host functions.
const hostModule = "idenplane"

// The host functions, each with the permission that defines it for a
// plugin; nil, every plugin has it.
var hostFunctions = map[string]*Permission{"input": nil, "output": nil, "log": ptr(PermLog)}

func ptr[T any](v T) *T { return &v }

const (
	// maxOutput bounds what a call may answer.
	maxOutput = 1 << 20
	// maxLogLine bounds a line of the log host function.
	maxLogLine = 4096
	// startTimeout bounds making an instance: the module's own start
	// (a Go module's runtime), which has no per-call limit to go by.
	startTimeout = 5 * time.Second
)

// sandbox is a plugin's compiled module in a runtime of its own, holding
// the manifest's memory cap, with one instance at a time: a module's
// instance is not safe for concurrent calls, so calls take turns.
type sandbox struct {
	man      *Manifest
	log      *slog.Logger
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	mu       sync.Mutex
	inst     api.Module  // nil until made, and after a failed call
	stderr   *headBuffer // what the instance wrote to its stdout and stderr: a panic's message
	closed   bool
}

// newSandbox compiles the module and makes its first instance: a module
// that imports what the server does not define for it (a host function
// its manifest does not grant, a filesystem) or lacks the export of one
// of its hooks is refused here, before it runs.
func newSandbox(ctx context.Context, man *Manifest, wasm []byte, log *slog.Logger) (*sandbox, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithMemoryLimitPages(man.Limits.MemoryPages).WithCloseOnContextDone(true))
	sb := &sandbox{man: man, log: log, rt: rt, stderr: &headBuffer{max: 4096}}
	err := sb.build(ctx, wasm)
	if err == nil {
		err = sb.start(ctx)
	}
	if err != nil {
		_ = rt.Close(ctx)
		return nil, err
	}
	return sb, nil
}

func (sb *sandbox) build(ctx context.Context, wasm []byte) error {
	// A module built for WASI (every Go module) imports its clocks,
	// randomness and output; its filesystem stays unmounted and its
	// network unreachable, whatever it asks.
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, sb.rt); err != nil {
		return fmt.Errorf("WASI: %w", err)
	}
	if _, err := sb.hostFunctions().Instantiate(ctx); err != nil {
		return fmt.Errorf("host functions: %w", err)
	}
	compiled, err := sb.rt.CompileModule(ctx, wasm)
	if err != nil {
		return fmt.Errorf("plugin.wasm: %w", err)
	}
	sb.compiled = compiled
	var errs []error
	for _, f := range compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch mod {
		case wasi_snapshot_preview1.ModuleName:
		case hostModule:
			perm, known := hostFunctions[name]
			switch {
			case !known:
				errs = append(errs, fmt.Errorf("imports %s.%s, which the server does not have", mod, name))
			case perm != nil && !sb.man.Grants(*perm):
				errs = append(errs, fmt.Errorf("imports %s.%s, which needs the permission %q its manifest does not grant", mod, name, *perm))
			}
		default:
			errs = append(errs, fmt.Errorf("imports %s.%s: the server provides only %s and %s", mod, name, wasi_snapshot_preview1.ModuleName, hostModule))
		}
	}
	exports := compiled.ExportedFunctions()
	for _, h := range sb.man.Hooks {
		f, ok := exports[h.export()]
		if !ok {
			errs = append(errs, fmt.Errorf("hook %s: the module exports no function %s", h, h.export()))
			continue
		}
		if p, r := f.ParamTypes(), f.ResultTypes(); len(p) != 1 || p[0] != api.ValueTypeI32 || len(r) != 1 || r[0] != api.ValueTypeI32 {
			errs = append(errs, fmt.Errorf("hook %s: %s must take one i32 and return one i32", h, h.export()))
		}
	}
	return errors.Join(errs...)
}

// hostFunctions are the server's functions this plugin may import: those
// its manifest's permissions grant, and no other.
func (sb *sandbox) hostFunctions() wazero.HostModuleBuilder {
	i32 := api.ValueTypeI32
	b := sb.rt.NewHostModuleBuilder(hostModule)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostInput), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("ptr", "cap").Export("input")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostOutput), []api.ValueType{i32, i32}, nil).
		WithParameterNames("ptr", "len").Export("output")
	if sb.man.Grants(PermLog) {
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(sb.hostLog), []api.ValueType{i32, i32, i32}, nil).
			WithParameterNames("level", "ptr", "len").Export("log")
	}
	return b
}

// start makes the module's instance: no filesystem, no arguments or
// environment, the clocks and randomness the manifest grants.
func (sb *sandbox) start(ctx context.Context) error {
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithStdout(sb.stderr).WithStderr(sb.stderr)
	if sb.man.Grants(PermClock) {
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	}
	if sb.man.Grants(PermRandom) {
		cfg = cfg.WithRandSource(rand.Reader)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	inst, err := sb.rt.InstantiateModule(ctx, sb.compiled, cfg)
	if err != nil {
		return sb.describe(err, startTimeout)
	}
	sb.inst = inst
	return nil
}

// call runs hook with input in the time the manifest allows, and answers
// what the module output. A call that fails leaves no instance behind:
// the next makes one anew, from a clean memory.
func (sb *sandbox) call(ctx context.Context, h Hook, input []byte) ([]byte, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.closed {
		return nil, errors.New("the plugin was removed")
	}
	if sb.inst == nil {
		if err := sb.start(ctx); err != nil {
			return nil, err
		}
	}
	c := &callState{input: input}
	// The caller going away (a browser closing) is no fault of the plugin.
	ctx, cancel := context.WithTimeout(context.WithValue(context.WithoutCancel(ctx), callKey{}, c), sb.man.Limits.Timeout())
	defer cancel()
	sb.stderr.Reset()
	res, err := sb.inst.ExportedFunction(h.export()).Call(ctx, uint64(len(input)))
	if err != nil {
		err = sb.describe(err, sb.man.Limits.Timeout())
		_ = sb.inst.Close(context.Background())
		sb.inst = nil
		return nil, err
	}
	if c.err != nil {
		return nil, c.err
	}
	if res[0] != 0 {
		return nil, fmt.Errorf("%s returned %d", h.export(), int32(res[0]))
	}
	return c.output, nil
}

// describe says why a call failed as an administrator can act on it.
func (sb *sandbox) describe(err error, limit time.Duration) error {
	var exit *sys.ExitError
	out := strings.TrimSpace(sb.stderr.String())
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded:
		return fmt.Errorf("exceeded its time limit of %v", limit)
	case strings.Contains(out, "out of memory"):
		return fmt.Errorf("ran out of its memory limit of %d pages (%d MiB)", sb.man.Limits.MemoryPages, sb.man.Limits.MemoryPages/16)
	case strings.Contains(out, "panic: "):
		line, _, _ := strings.Cut(out[strings.Index(out, "panic: "):], "\n")
		return fmt.Errorf("crashed: %s", line)
	case errors.As(err, &exit):
		return fmt.Errorf("exited with code %d", exit.ExitCode())
	}
	if first, _, _ := strings.Cut(err.Error(), "\n"); first != "" {
		return fmt.Errorf("crashed: %s", first)
	}
	return err
}

func (sb *sandbox) close(ctx context.Context) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.closed = true
	_ = sb.rt.Close(ctx)
}

// callState is one call's input and output, which the host functions
// reach through the call's context.
type callState struct {
	input  []byte
	output []byte
	err    error
}

type callKey struct{}

func stateOf(ctx context.Context) *callState {
	c, _ := ctx.Value(callKey{}).(*callState)
	if c == nil {
		c = &callState{} // the module's own start: no call, no input
	}
	return c
}

// hostInput copies the call's input to the module's memory at ptr, as
// much as cap holds, and answers its whole length: a module given too
// small a buffer asks again with one of that size.
func hostInput(ctx context.Context, m api.Module, stack []uint64) {
	c := stateOf(ctx)
	ptr, capacity := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	n := min(int(capacity), len(c.input))
	if n > 0 && !m.Memory().Write(ptr, c.input[:n]) {
		panic(fmt.Errorf("input: %d bytes at %d are outside the module's memory", n, ptr))
	}
	stack[0] = api.EncodeU32(uint32(len(c.input)))
}

// hostOutput takes the call's answer from the module's memory; a later
// call replaces an earlier one.
func hostOutput(ctx context.Context, m api.Module, stack []uint64) {
	c := stateOf(ctx)
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if n > maxOutput {
		c.err = fmt.Errorf("output of %d bytes: at most %d", n, maxOutput)
		return
	}
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		panic(fmt.Errorf("output: %d bytes at %d are outside the module's memory", n, ptr))
	}
	c.output = bytes.Clone(b)
}

// hostLog writes a line to the server's log, under the plugin's name.
func (sb *sandbox) hostLog(ctx context.Context, m api.Module, stack []uint64) {
	level, ptr, n := int32(api.DecodeU32(stack[0])), api.DecodeU32(stack[1]), min(api.DecodeU32(stack[2]), maxLogLine)
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		panic(fmt.Errorf("log: %d bytes at %d are outside the module's memory", n, ptr))
	}
	lv := slog.LevelInfo
	switch {
	case level <= 0:
		lv = slog.LevelDebug
	case level == 2:
		lv = slog.LevelWarn
	case level >= 3:
		lv = slog.LevelError
	}
	sb.log.Log(ctx, lv, string(b), "plugin", sb.man.Name)
}

// headBuffer keeps the first max bytes written to it: a crash's message
// comes first, then its goroutines' stacks.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.b)
}

func (h *headBuffer) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.b = h.b[:0]
}
