package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// completionCases are command lines being typed, the last word unfinished,
// and what the shell offers for it.
var completionCases = []struct {
	name  string
	words []string
	want  []string
}{
	{"command", []string{"idenplane", "ser"}, []string{"serve"}},
	{"serve flag", []string{"idenplane", "serve", "--ad"}, []string{"--addr"}},
	{"another command's flag", []string{"idenplane", "backup", "--pass"}, []string{"--passphrase-file"}},
	{"subcommand", []string{"idenplane", "config", "ch"}, []string{"check"}},
	{"subcommand's flag", []string{"idenplane", "config", "example", "--for"}, []string{"--format"}},
	{"help's command", []string{"idenplane", "help", "conf"}, []string{"config"}},
	{"no such flag", []string{"idenplane", "serve", "--nope"}, nil},
}

func completionScript(t *testing.T, shell string) string {
	t.Helper()
	out, errOut, err := configRun("completion", shell)
	if err != nil {
		t.Fatalf("completion %s: %v\n%s", shell, err, errOut)
	}
	path := filepath.Join(t.TempDir(), "idenplane."+shell)
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// shellWords is a shell array of words, each quoted.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, " ")
}

func offered(t *testing.T, out []byte, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatalf("shell: %v\n%s", err, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l, _, _ = strings.Cut(l, "\t"); l != "" {
			got = append(got, l)
		}
	}
	return got
}

// TestCompletionBash and its twins run each shell's real completion of
// the script the binary prints.
func TestCompletionBash(t *testing.T) {
	bash := needTool(t, "bash", "bash")
	script := completionScript(t, "bash")
	for _, tc := range completionCases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bash, "--norc", "-c", "source "+script+"; COMP_WORDS=("+shellWords(tc.words)+"); COMP_CWORD="+
				strconv.Itoa(len(tc.words)-1)+"; _idenplane; printf '%s\\n' \"${COMPREPLY[@]}\"")
			out, err := cmd.CombinedOutput()
			if got := offered(t, out, err); !slices.Equal(got, tc.want) {
				t.Fatalf("bash offers %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompletionZsh(t *testing.T) {
	zsh := needTool(t, "zsh", "zsh")
	script := completionScript(t, "zsh")
	for _, tc := range completionCases {
		t.Run(tc.name, func(t *testing.T) {
			// zsh's bash layer calls the function with KSH_ARRAYS, as
			// here; compinit comes first in any zsh with completion.
			cmd := exec.Command(zsh, "-f", "-c", "autoload -U compinit && compinit -u -D; source "+script+
				"; setopt ksharrays; COMP_WORDS=("+shellWords(tc.words)+"); COMP_CWORD="+strconv.Itoa(len(tc.words)-1)+
				"; _idenplane; print -l -- \"${COMPREPLY[@]}\"")
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			// zsh's compgen answers every word; zsh itself then keeps
			// those the typed word begins, as done here.
			var got []string
			for _, w := range offered(t, out, err) {
				if strings.HasPrefix(w, tc.words[len(tc.words)-1]) {
					got = append(got, w)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("zsh offers %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompletionFish(t *testing.T) {
	fish := needTool(t, "fish", "fish")
	script := completionScript(t, "fish")
	for _, tc := range completionCases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(fish, "--no-config", "-c", "source "+script+"; complete -C "+strconv.Quote(strings.Join(tc.words, " ")))
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if got := offered(t, out, err); !slices.Equal(got, tc.want) {
				t.Fatalf("fish offers %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompletionRefusesUnknownShell(t *testing.T) {
	if _, errOut, err := configRun("completion", "tcsh"); err == nil || !strings.Contains(errOut, "usage: idenplane completion bash|zsh|fish") {
		t.Fatalf("completion tcsh: %v %q", err, errOut)
	}
}
