package apptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildPlugin builds the example plugin testdata/plugins/<example> with
// the go tool (GOOS=wasip1, -buildmode=c-shared, as docs/plugins.md says)
// into dir/<example>, beside a copy of its plugin.json: a plugin of a
// --plugins-dir. Without the go tool the test is skipped, or failed under
// CI=true.
func BuildPlugin(t testing.TB, dir, example string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the go tool is not installed, and CI=true needs it to build the example plugins")
		}
		t.Skip("the go tool is not installed: skipping the tests that build the example plugins")
	}
	root := moduleRoot(t)
	src := filepath.Join(root, "testdata", "plugins", example)
	out := filepath.Join(dir, example)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(src, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-o", filepath.Join(out, "plugin.wasm"), "./testdata/plugins/"+example)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin %s: %v\n%s", example, err, b)
	}
}

// moduleRoot is the directory of the repository's go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
