package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// configRun runs a command in this process and answers its output and
// error.
func configRun(args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	err := run(args, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func writeConfigAs(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFilePrecedence: a flag given beats its environment variable,
// which beats the configuration file, which beats the default.
func TestConfigFilePrecedence(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "IDENPLANE_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	t.Setenv("IDENPLANE_MASTER_KEY", cliMasterKey(t))
	t.Setenv("IDENPLANE_LOG_FORMAT", "text")
	for _, f := range []struct{ name, text string }{
		{"idenplane.toml", `# the file
base-url = "https://id.example.com"
addr = ":8443"
log-format = "json"
trusted-proxies = ["10.0.0.0/8", "192.0.2.1"]
`},
		{"idenplane.yaml", `# the file
base-url: https://id.example.com
addr: ":8443"
log-format: json
trusted-proxies: [10.0.0.0/8, 192.0.2.1]
`},
	} {
		t.Run(f.name, func(t *testing.T) {
			path := writeConfigAs(t, f.name, f.text)
			out, errOut, err := configRun("config", "check", "--config", path, "--addr", ":9000")
			if err != nil {
				t.Fatalf("config check: %v\n%s", err, errOut)
			}
			for _, want := range []string{
				`addr = ":9000"  # flag`,
				`log-format = "text"  # environment`,
				`base-url = "https://id.example.com"  # file`,
				`trusted-proxies = "10.0.0.0/8,192.0.2.1"  # file`,
				`db = "./idenplane.db"  # default`,
			} {
				if !strings.Contains(out, want+"\n") {
					t.Errorf("config check lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestConfigFileRefusals: a key no flag has, a table, a value of the
// wrong kind and bad syntax are refused with their line; a value a flag
// refuses, with its line and key; and serve's own checks apply.
func TestConfigFileRefusals(t *testing.T) {
	t.Setenv("IDENPLANE_MASTER_KEY", cliMasterKey(t))
	for _, tc := range []struct{ name, file, text, want string }{
		{"unknown key", "c.toml", "addr = \":3000\"\n\nbase_url = \"https://x.example\"\n", `line 3: unknown key "base_url"`},
		{"table", "c.toml", "addr = \":3000\"\n[server]\nport = 1\n", `line 2: unknown key "server"`},
		{"list of numbers", "c.toml", "trusted-proxies = [1, 2]\n", "line 1: trusted-proxies must be a list of strings"},
		{"syntax", "c.toml", "addr = \":3000\"\nbase-url = \n", "line 2"},
		{"invalid setting", "c.toml", "addr = \"nowhere\"\n", "--addr (IDENPLANE_ADDR) must be host:port"},
		{"yaml unknown key", "c.yaml", "addr: \":3000\"\n\nbase_url: https://x.example\n", `line 3: unknown key "base_url"`},
		{"yaml nested", "c.yml", "addr: \":3000\"\nserver:\n  port: 1\n", `line 2: unknown key "server"`},
		{"yaml list of numbers", "c.yaml", "trusted-proxies: [1, 2]\n", "line 1: trusted-proxies must be a list of strings"},
		{"yaml twice", "c.yaml", "addr: \":3000\"\naddr: \":4000\"\n", "line 2: addr is set twice (first at line 1)"},
		{"yaml no value", "c.yaml", "base-url:\n", "line 1: base-url has no value"},
		{"yaml syntax", "c.yaml", "addr: \":3000\"\nbase-url: [\n", "line 2"},
		{"yaml not a mapping", "c.yaml", "- addr\n", "line 1: the file must be a mapping"},
		{"yaml invalid setting", "c.yaml", "addr: nowhere\n", "--addr (IDENPLANE_ADDR) must be host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := configRun("config", "check", "--config", writeConfigAs(t, tc.file, tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("config check: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestConfigExampleRoundTrips: the example, every setting uncommented, is
// a file that config check takes, each setting coming from it.
func TestConfigExampleRoundTrips(t *testing.T) {
	t.Setenv("IDENPLANE_MASTER_KEY", cliMasterKey(t))
	for _, f := range []struct{ format, file, setting string }{
		{"toml", "idenplane.toml", `(?m)^#([a-z-]+ = .*)$`},
		{"yaml", "idenplane.yaml", `(?m)^#([a-z-]+: .*)$`},
	} {
		t.Run(f.format, func(t *testing.T) {
			example, _, err := configRun("config", "example", "--format", f.format)
			if err != nil {
				t.Fatal(err)
			}
			settings := regexp.MustCompile(f.setting)
			if n := len(settings.FindAllString(example, -1)); n < 10 {
				t.Fatalf("the example holds %d settings:\n%s", n, example)
			}
			file := writeConfigAs(t, f.file, settings.ReplaceAllString(example, "$1"))
			out, errOut, err := configRun("config", "check", "--config", file)
			if err != nil {
				t.Fatalf("config check of the example: %v\n%s", err, errOut)
			}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if !strings.HasSuffix(l, "# file") && !strings.HasPrefix(l, "config = ") && !strings.HasSuffix(l, "# environment") {
					t.Errorf("not from the file: %s", l)
				}
			}
		})
	}
	if _, _, err := configRun("config", "example", "--format", "ini"); err == nil {
		t.Fatal("config example --format ini was taken")
	}
}

// TestServeReadsConfigFile: serve takes its settings from the file the
// environment names.
func TestServeReadsConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idenplane.toml")
	if err := os.WriteFile(path, []byte("log-format = \"json\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := cliStartServer(t, filepath.Join(dir, "a.db"), "IDENPLANE_MASTER_KEY="+cliMasterKey(t), "IDENPLANE_CONFIG="+path)
	s.stopGracefully()
	lines := strings.Split(strings.TrimSpace(s.stderr.String()), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "{") {
		t.Fatalf("the server did not log JSON as its file says:\n%s", s.stderr)
	}
}
