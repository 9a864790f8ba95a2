package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
)

// docsShellBlock is a fenced sh block of a how-to page.
var docsShellBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// docsPage is what a how-to page's examples need beyond bash, curl, jq and
// the server the test starts for them.
type docsPage struct {
	tools     []string                    // commands the examples run
	serverEnv []string                    // settings of the server the test starts
	setup     func(t *testing.T) []string // starts what the examples talk to; gives them its variables
}

var docsPages = map[string]docsPage{
	"mfa.md":  {tools: []string{"oathtool", "openssl"}},
	"saml.md": {tools: []string{"xmllint"}},
	// The upstream provider is a realm of the same server, on loopback,
	// which outbound calls reach only when allowed.
	"brokering.md":     {serverEnv: []string{"IDENPLANE_OUTBOUND_ALLOW=127.0.0.1"}},
	"ldap.md":          {tools: []string{"ldapmodify"}, setup: docsDirectory},
	"reverse-proxy.md": {tools: []string{"openssl", "caddy", "nginx"}},
}

// docsDirectory starts slapd with two people and a group, for ldap.md.
func docsDirectory(t *testing.T) []string {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "ann-password")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "bob-password")+
		apptest.Group("engineering", apptest.PersonDN("ann"), apptest.PersonDN("bob")))
	return []string{"LDAP_URL=" + d.URL, "LDAP_BIND_DN=" + d.AdminDN, "LDAP_BIND_PASSWORD=" + d.AdminPassword,
		"LDAP_USERS_DN=" + d.PeopleDN, "LDAP_GROUPS_DN=" + d.GroupsDN,
		"LDAP_USER=ann", "LDAP_USER_PASSWORD=ann-password"}
}

// TestDocsExamples runs the shell examples of every how-to page in
// docs/howto, in order, as one script against a fresh server, so that an
// example the server no longer answers as written fails the tests. The
// script runs in a folder of its own, with the built idenplane first on
// PATH and free ports in PORT, PORT2 and PORT3 for servers it starts
// itself; whatever it leaves running is stopped with it.
func TestDocsExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			docsMissingTool(t, tool)
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
			needs := docsPages[filepath.Base(page)]
			for _, tool := range needs.tools {
				if _, err := exec.LookPath(tool); err != nil {
					docsMissingTool(t, tool)
				}
			}
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
			var vars []string
			if needs.setup != nil {
				vars = needs.setup(t)
			}
			env := append([]string{masterKey, "IDENPLANE_ADMIN_API_KEY=" + cliAPIKey}, needs.serverEnv...)
			s := cliStartServer(t, filepath.Join(t.TempDir(), "docs.db"), env...)
			vars = append(vars, "BASE="+s.base, "KEY="+cliAPIKey,
				"PATH="+filepath.Dir(cliBinary)+string(os.PathListSeparator)+os.Getenv("PATH"),
				"PORT="+docsPort(t), "PORT2="+docsPort(t), "PORT3="+docsPort(t))
			out, err := docsRun(t, script.String(), vars)
			if err != nil {
				t.Fatalf("the examples of %s failed: %v\n%s", page, err, out)
			}
			t.Logf("%s:\n%s", page, out)
		})
	}
}

// docsRun runs script with bash in a new folder and process group, and
// ends the group after: servers the script started in the background
// included. The output goes to a file, which, unlike a pipe, a server left
// running cannot hold open.
func docsRun(t *testing.T, script string, vars []string) ([]byte, error) {
	dir := t.TempDir()
	log, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = dir, cliEnv(vars...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := time.AfterFunc(docsWaitBound, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err = cmd.Wait()
	stop.Stop()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	out, readErr := os.ReadFile(log.Name())
	if readErr != nil {
		t.Fatal(readErr)
	}
	return out, err
}

// docsWaitBound caps a page's examples, which may start servers of their
// own: a safety net against hangs, never an expectation of speed.
const docsWaitBound = 5 * time.Minute

// docsPort is a free loopback port, as a number.
func docsPort(t *testing.T) string {
	addr := cliFreeAddr(t)
	return addr[strings.LastIndexByte(addr, ':')+1:]
}

func docsMissingTool(t *testing.T, tool string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, and CI=true needs it", tool)
	}
	t.Skipf("%s is not installed: skipping the docs' examples", tool)
}

// The examples run in a folder of their own, not in the source tree, and
// a server they leave running in the background neither holds the test
// up nor outlives it.
func TestDocsRunContainsTheScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		docsMissingTool(t, "bash")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := docsRun(t, "sleep 300 & echo $!; pwd", nil)
	if err != nil {
		t.Fatalf("the script failed: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a background process held the run for %v", d)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		t.Fatalf("output %q: want the background pid and the folder", out)
	}
	if lines[1] == wd {
		t.Errorf("the script ran in the source tree %s", wd)
	}
	pid, err := strconv.Atoi(lines[0])
	if err != nil {
		t.Fatal(err)
	}
	// Signal 0 checks existence: the killed process is gone once init,
	// its parent after bash, has reaped it.
	for range 100 {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("the background process %d outlived the run", pid)
}

// Every how-to page is linked from the README's list.
func TestDocsHowtosLinked(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("docs/howto/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		if !strings.Contains(string(readme), "]("+page+")") {
			t.Errorf("README.md does not link %s", page)
		}
	}
}
