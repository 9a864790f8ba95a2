package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsShellBlock is a fenced sh block of a how-to page.
var docsShellBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestDocsExamples runs the shell examples of every how-to page in
// docs/howto, in order, as one script against a fresh server, so that an
// example the server no longer answers as written fails the tests.
func TestDocsExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed, and CI=true needs it", tool)
			}
			t.Skipf("%s is not installed: skipping the docs' examples", tool)
		}
	}
	pages, err := filepath.Glob("docs/howto/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no how-to pages: %v", err)
	}
	masterKey := "IDENPLANE_MASTER_KEY=" + cliMasterKey(t)
	for _, page := range pages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			t.Parallel()
			md, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			var script strings.Builder
			script.WriteString("set -euo pipefail\n")
			blocks := docsShellBlock.FindAllSubmatch(md, -1)
			if len(blocks) == 0 {
				t.Fatalf("%s has no sh example", page)
			}
			for _, b := range blocks {
				script.Write(b[1])
			}
			s := cliStartServer(t, filepath.Join(t.TempDir(), "docs.db"), masterKey, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
			cmd := exec.Command("bash", "-c", script.String())
			cmd.Env = cliEnv("BASE="+s.base, "KEY="+cliAPIKey)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the examples of %s failed: %v\n%s", page, err, out)
			}
			t.Logf("%s:\n%s", page, out)
		})
	}
}
