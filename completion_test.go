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
	{"copy's flag", []string{"idenplane", "copy", "--fr"}, []string{"--from"}},
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

// completionShells runs a shell's real completion of the script the
// binary prints, for a command line being typed.
var completionShells = []struct {
	shell string
	// command asks the shell what it offers for words.
	command func(shell, script string, words []string) *exec.Cmd
	// prefixOnly: the shell's own layer answers every word and the
	// shell then keeps those the typed word begins, as done here.
	prefixOnly bool
}{
	{"bash", func(bash, script string, words []string) *exec.Cmd {
		return exec.Command(bash, "--norc", "-c", "source "+script+"; COMP_WORDS=("+shellWords(words)+"); COMP_CWORD="+
			strconv.Itoa(len(words)-1)+"; _idenplane; printf '%s\\n' \"${COMPREPLY[@]}\"")
	}, false},
	// zsh's bash layer calls the function with KSH_ARRAYS, as here;
	// compinit comes first in any zsh with completion.
	{"zsh", func(zsh, script string, words []string) *exec.Cmd {
		return exec.Command(zsh, "-f", "-c", "autoload -U compinit && compinit -u -D; source "+script+
			"; setopt ksharrays; COMP_WORDS=("+shellWords(words)+"); COMP_CWORD="+strconv.Itoa(len(words)-1)+
			"; _idenplane; print -l -- \"${COMPREPLY[@]}\"")
	}, true},
	{"fish", func(fish, script string, words []string) *exec.Cmd {
		return exec.Command(fish, "--no-config", "-c", "source "+script+"; complete -C "+strconv.Quote(strings.Join(words, " ")))
	}, false},
}

func TestCompletion(t *testing.T) {
	for _, sh := range completionShells {
		t.Run(sh.shell, func(t *testing.T) {
			path := needTool(t, sh.shell, sh.shell)
			script := completionScript(t, sh.shell)
			for _, tc := range completionCases {
				t.Run(tc.name, func(t *testing.T) {
					cmd := sh.command(path, script, tc.words)
					cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
					out, err := cmd.CombinedOutput()
					got := offered(t, out, err)
					if sh.prefixOnly {
						got = slices.DeleteFunc(got, func(w string) bool { return !strings.HasPrefix(w, tc.words[len(tc.words)-1]) })
					}
					if !slices.Equal(got, tc.want) {
						t.Fatalf("%s offers %q, want %q", sh.shell, got, tc.want)
					}
				})
			}
		})
	}
}

func TestCompletionRefusesUnknownShell(t *testing.T) {
	if _, errOut, err := configRun("completion", "tcsh"); err == nil || !strings.Contains(errOut, "usage: idenplane completion bash|zsh|fish") {
		t.Fatalf("completion tcsh: %v %q", err, errOut)
	}
}
