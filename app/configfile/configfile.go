// Package configfile reads the server's configuration file: TOML, or YAML
// when its name ends in .yaml or .yml, with flat keys named as the command
// line's flags (base-url = "https://…", base-url: https://…). The command
// line applies it under its own flags and the environment: a flag given
// beats its environment variable, which beats the file.
package configfile

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Setting is one key of the file, its value as a flag would take it.
type Setting struct {
	Key, Value string
	Line       int
}

// Parse reads the configuration file named name, in the format its name
// says. Every key must be one known says is a setting; a value is a
// string, a number, a boolean or a list of strings (joined by commas, as
// the flags take lists). Errors name the line.
func Parse(name string, data []byte, known func(string) bool) ([]Setting, error) {
	if IsYAML(name) {
		return parseYAML(data, known)
	}
	return parseTOML(data, known)
}

// IsYAML says whether a file of this name is read as YAML.
func IsYAML(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

func parseTOML(data []byte, known func(string) bool) ([]Setting, error) {
	var raw map[string]any
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("line %d: %s", pe.Position.Line, pe.Message)
		}
		return nil, err
	}
	var out []Setting
	for _, k := range md.Keys() {
		key := k.String()
		line := lineOf(data, k[0])
		if len(k) != 1 {
			continue // inside a table, refused with the table below
		}
		st, err := setting(key, raw[key], line, known)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b Setting) int { return a.Line - b.Line })
	return out, nil
}

// setting checks one key of the file and its value, read from either
// format.
func setting(key string, v any, line int, known func(string) bool) (Setting, error) {
	if !known(key) {
		return Setting{}, fmt.Errorf("line %d: unknown key %q (idenplane config example lists them)", line, key)
	}
	value, err := flagValue(v)
	if err != nil {
		return Setting{}, fmt.Errorf("line %d: %s %w", line, key, err)
	}
	return Setting{Key: key, Value: value, Line: line}, nil
}

func flagValue(v any) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case bool:
		return strconv.FormatBool(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), nil
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			s, ok := e.(string)
			if !ok {
				return "", errors.New("must be a list of strings")
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	case map[string]any:
		return "", errors.New("is a table: the file's keys are flat, named as the flags")
	}
	return "", fmt.Errorf("must be a string, a number, a boolean or a list of strings, not %T", v)
}

// lineOf finds the line where key is set at the top level or opens a
// table; 0 when it cannot tell.
func lineOf(data []byte, key string) int {
	re := regexp.MustCompile(`^\s*(?:\[\s*)?["']?` + regexp.QuoteMeta(key) + `["']?\s*(?:=|\]|\.)`)
	for i, l := range strings.Split(string(data), "\n") {
		if re.MatchString(l) {
			return i + 1
		}
	}
	return 0
}

// Example writes a commented file of every flag of fs but skip, each at
// its default, with its help and environment variable: TOML, or YAML when
// yaml is set.
func Example(w io.Writer, fs *flag.FlagSet, yaml bool, skip ...string) {
	file, sep := "idenplane.toml", " ="
	if yaml {
		file, sep = "idenplane.yaml", ":"
	}
	fmt.Fprint(w, "# Idenplane configuration: idenplane serve --config "+file+"\n"+
		"# Keys are the flags' names. A flag given on the command line beats its\n"+
		"# environment variable, which beats this file. Secrets (the master key,\n"+
		"# the admin API key and password) come from the environment only.\n")
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(skip, f.Name) {
			return
		}
		fmt.Fprintf(w, "\n# %s\n#%s%s %s\n", f.Usage, f.Name, sep, strconv.Quote(f.DefValue))
	})
}
