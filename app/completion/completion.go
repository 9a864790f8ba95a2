// Package completion writes the command line's completion scripts for
// bash, zsh and fish from the commands and flags the binary really has,
// so a script never offers a flag that is gone.
package completion

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Command is one command of the binary: its flags (names without dashes)
// and its subcommands (config's check and example).
type Command struct {
	Name        string
	Flags       []string
	Subcommands []Command
}

// Shells are the shells Write writes for.
var Shells = []string{"bash", "zsh", "fish"}

// Write writes the script of shell for the program prog.
func Write(w io.Writer, shell, prog string, cmds []Command) error {
	switch shell {
	case "bash":
		return writeBash(w, prog, cmds)
	case "zsh":
		// zsh runs the bash script through its bash completion layer,
		// as it does for most tools that ship one script.
		if _, err := fmt.Fprint(w, "#compdef "+prog+"\nautoload -U +X bashcompinit && bashcompinit\n"); err != nil {
			return err
		}
		return writeBash(w, prog, cmds)
	case "fish":
		return writeFish(w, prog, cmds)
	}
	return fmt.Errorf("no completion for shell %q: want one of %s", shell, strings.Join(Shells, ", "))
}

func names(cmds []Command) string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	return strings.Join(out, " ")
}

func dashed(flags []string) string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = "--" + f
	}
	return strings.Join(out, " ")
}

// function is the shell function's name: the program's, made a name.
func function(prog string) string {
	return "_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, prog)
}

// writeBash: the command at the first word, a subcommand at the second
// where the command has them, flags after a dash; anything else is a file
// name (complete -o default), as the commands' arguments are files.
func writeBash(w io.Writer, prog string, cmds []Command) error {
	var b strings.Builder
	fn := function(prog)
	fmt.Fprintf(&b, "# %s completion for bash: source it, or install it as /usr/share/bash-completion/completions/%s\n", prog, prog)
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} words=\n")
	b.WriteString("\tCOMPREPLY=()\n")
	fmt.Fprintf(&b, "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\treturn\n\tfi\n", names(cmds))
	b.WriteString("\tcase ${COMP_WORDS[1]} in\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\t%s)\n", c.Name)
		if len(c.Subcommands) == 0 {
			fmt.Fprintf(&b, "\t\twords='%s' ;;\n", dashed(c.Flags))
			continue
		}
		fmt.Fprintf(&b, "\t\tif [ \"$COMP_CWORD\" -eq 2 ]; then\n\t\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\t\treturn\n\t\tfi\n", names(c.Subcommands))
		b.WriteString("\t\tcase ${COMP_WORDS[2]} in\n")
		for _, s := range c.Subcommands {
			fmt.Fprintf(&b, "\t\t%s) words='%s' ;;\n", s.Name, dashed(s.Flags))
		}
		b.WriteString("\t\tesac ;;\n")
	}
	b.WriteString("\tesac\n")
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n\tfi\n")
	b.WriteString("}\n")
	fmt.Fprintf(&b, "complete -o default -F %s %s\n", fn, prog)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFish: fish's own declarations, one per command, subcommand and
// flag; Go's flags take one or two dashes, fish offers the two.
func writeFish(w io.Writer, prog string, cmds []Command) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s completion for fish: install it as ~/.config/fish/completions/%s.fish\n", prog, prog)
	all := names(cmds)
	fmt.Fprintf(&b, "complete -c %s -f -n 'not __fish_seen_subcommand_from %s' -a '%s'\n", prog, all, all)
	for _, c := range cmds {
		if len(c.Subcommands) == 0 {
			for _, f := range c.Flags {
				fmt.Fprintf(&b, "complete -c %s -n '__fish_seen_subcommand_from %s' -l %s\n", prog, c.Name, f)
			}
			continue
		}
		// Offered until one is typed; help's are the commands, itself
		// among them, which the first condition already saw.
		var others []Command
		for _, s := range c.Subcommands {
			if s.Name != c.Name {
				others = append(others, s)
			}
		}
		fmt.Fprintf(&b, "complete -c %s -f -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a '%s'\n",
			prog, c.Name, names(others), names(c.Subcommands))
		for _, s := range c.Subcommands {
			for _, f := range s.Flags {
				fmt.Fprintf(&b, "complete -c %s -n '__fish_seen_subcommand_from %s; and __fish_seen_subcommand_from %s' -l %s\n",
					prog, c.Name, s.Name, f)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FlagsOf reads the flag names out of a command's help as the flag
// package prints it ("  -name value"), in order and once each.
func FlagsOf(help string) []string {
	var out []string
	for _, l := range strings.Split(help, "\n") {
		rest, ok := strings.CutPrefix(l, "  -")
		if !ok || rest == "" || rest[0] == '-' || rest[0] == ' ' {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		name, _, _ = strings.Cut(name, "\t")
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
