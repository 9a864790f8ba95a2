package ui

import (
	"fmt"
	"strconv"
	"strings"
)

// parseCatalogue reads a catalogue in the UTF-8 flavour of the Java
// properties format, the one translation platforms (Weblate, Crowdin,
// Transifex) read and write: "key = text" (or "key: text"), comments
// starting with # or !, backslash escapes (\n, \t, \\, \=, \:, \#, \!,
// \uXXXX, "\ " for a leading space) and a backslash at
// the end of a line continuing the text on the next one. Texts are not
// MessageFormat patterns: an apostrophe is an apostrophe, and {0}, {1}…
// are the only placeholders. A malformed line is a build defect.
func parseCatalogue(s string) (map[string]string, error) {
	m := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for endsInBackslash(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		sep := keyEnd(line)
		if sep < 0 {
			return nil, fmt.Errorf("line %d: want key = text", n)
		}
		k, err := unescape(strings.TrimSpace(line[:sep]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		v, err := unescape(strings.TrimLeft(line[sep+1:], " \t\f"))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if k == "" {
			return nil, fmt.Errorf("line %d: want key = text", n)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("line %d: %s defined twice", n, k)
		}
		m[k] = v
	}
	return m, nil
}

// endsInBackslash says whether a line continues: an odd number of
// backslashes at its end.
func endsInBackslash(line string) bool {
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}

// keyEnd is the index of the first unescaped = or : of a line, or -1.
func keyEnd(line string) int {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '=', ':':
			return i
		}
	}
	return -1
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i == len(s) {
			return "", fmt.Errorf("a lone backslash ends the line")
		}
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("short \\u escape")
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape %q", s[i-1:i+5])
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
