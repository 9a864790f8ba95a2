package main

import (
	"regexp"
	"strings"
	"testing"
)

// cliVersionLine is what version prints for a build without -ldflags:
// the commit and time the go command recorded, or "unknown" when it
// recorded none.
var cliVersionLine = regexp.MustCompile(`^idenplane dev \(commit ([0-9a-f]{40}|unknown), built (\S+Z|unknown)\)\n$`)

var cliCommands = []string{"serve", "routes", "version", "health", "backup", "restore", "export", "import", "copy", "loadtest", "help"}

// TestCLIHelp: help asked for goes to stdout with exit status 0; a command
// line that makes no sense gets the usage on stderr and exit status 2.
func TestCLIHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}, {"help", "-h"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			res := cliRun(t, t.TempDir(), cliEnv(), "", args...)
			if res.code != 0 || res.stderr != "" {
				t.Fatalf("code %d, stderr %q; want 0 and nothing", res.code, res.stderr)
			}
			for _, c := range cliCommands {
				if !strings.Contains(res.stdout, "\n  "+c+" ") {
					t.Errorf("the usage does not list %s:\n%s", c, res.stdout)
				}
			}
		})
	}

	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			res := cliRun(t, t.TempDir(), cliEnv(), "", args...)
			if res.code != 0 || !cliVersionLine.MatchString(res.stdout) || res.stderr != "" {
				t.Fatalf("code %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
			}
		})
	}

	// Each command's help names it and every one of its flags.
	flags := map[string][]string{
		"serve":    {"-addr", "-base-url", "-db", "-log-format", "-tls-cert", "-tls-key", "-acme-domain", "-acme-email", "-acme-directory"},
		"health":   {"-addr", "-tls-cert", "-acme-domain", "-timeout"},
		"routes":   {"-addr", "-base-url", "-db"},
		"version":  nil,
		"backup":   {"-db", "-passphrase-file", "-without-key"},
		"restore":  {"-db", "-passphrase-file", "-force"},
		"export":   {"-db", "-realm", "-include-users", "-include-secrets"},
		"import":   {"-db", "-overwrite"},
		"copy":     {"-from", "-to", "-master-key-file", "-batch-size"},
		"loadtest": {"-duration", "-concurrency", "-scenarios", "-dir"},
	}
	for cmd, want := range flags {
		for _, args := range [][]string{{cmd, "--help"}, {cmd, "-h"}, {"help", cmd}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				res := cliRun(t, dir, cliEnv(), "", args...)
				if res.code != 0 || res.stderr != "" {
					t.Fatalf("code %d, stderr %q; want 0 and nothing", res.code, res.stderr)
				}
				if !strings.HasPrefix(res.stdout, "Usage: idenplane "+cmd) {
					t.Errorf("help does not start with the command's usage:\n%s", res.stdout)
				}
				for _, f := range want {
					if !strings.Contains(res.stdout, "  "+f+" ") && !strings.Contains(res.stdout, "  "+f+"\n") {
						t.Errorf("help does not list %s:\n%s", f, res.stdout)
					}
				}
			})
		}
		t.Run(cmd+" unknown flag", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			res := cliRun(t, dir, cliEnv(), "", cmd, "--no-such-flag")
			if res.code != 2 || res.stdout != "" {
				t.Fatalf("code %d, stdout %q; want 2 and nothing", res.code, res.stdout)
			}
			if !strings.Contains(res.stderr, "-no-such-flag") || !strings.Contains(res.stderr, "Usage: idenplane "+cmd) {
				t.Errorf("stderr lacks the flag or the usage:\n%s", res.stderr)
			}
		})
	}

	misuse := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"help for an unknown command", []string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{"backup without a file", []string{"backup", "--without-key"}, "FILE is missing"},
		{"restore without a file", []string{"restore"}, "FILE is missing"},
		{"import with two files", []string{"import", "a.json", "b.json"}, `unexpected argument "b.json"`},
		{"routes with an argument", []string{"routes", "extra"}, `unexpected argument "extra"`},
		{"serve with an argument", []string{"serve", "extra"}, `unexpected argument "extra"`},
		{"version with an argument", []string{"version", "extra"}, `unexpected argument "extra"`},
		{"export without a realm", []string{"export"}, "--realm is required"},
		{"copy without a target", []string{"copy", "--from", "a.db"}, "--to is required"},
		{"copy with an argument", []string{"copy", "--from", "a.db", "--to", "b.db", "extra"}, `unexpected argument "extra"`},
		{"copy from PostgreSQL without a key", []string{"copy", "--from", "postgres://db.invalid/x", "--to", "b.db"}, "--master-key-file"},
	}
	for _, tc := range misuse {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			res := cliRun(t, dir, cliEnv(), "", tc.args...)
			if res.code != 2 || res.stdout != "" {
				t.Fatalf("code %d, stdout %q; want 2 and nothing", res.code, res.stdout)
			}
			if !strings.Contains(res.stderr, tc.want) || !strings.Contains(res.stderr, "Usage: idenplane") {
				t.Errorf("stderr does not say %q with the usage:\n%s", tc.want, res.stderr)
			}
		})
	}
}
