package setup

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/identity"
)

// The snippets are code their language reads: Go parses, Python
// compiles, Node.js checks the JavaScript (each where the tool is on the
// machine). Values that a quote or a backslash could break out of are
// written as literals of the language.
func TestSDKSnippetsParse(t *testing.T) {
	for _, c := range []ClientStep{
		{ClientID: "shop", ClientType: identity.ClientPublic, RedirectURIs: []string{"https://shop.test/callback"}},
		{ClientID: "web.app_1", ClientType: identity.ClientConfidential, RedirectURIs: []string{`http://localhost:8080/auth/cb?x="y"\`}},
	} {
		out, err := generateSDK(`https://id.test/realms/acme`, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Snippets) != 3 {
			t.Fatalf("snippets %+v", out.Snippets)
		}
		dir := t.TempDir()
		for _, sn := range out.Snippets {
			if !strings.Contains(sn.Code, `"https://id.test/realms/acme"`) {
				t.Errorf("%s: no issuer:\n%s", sn.Language, sn.Code)
			}
			public := c.ClientType == identity.ClientPublic
			if strings.Contains(sn.Code, SecretEnv) == public {
				t.Errorf("%s of a %s client: mentions %s %v", sn.Language, c.ClientType, SecretEnv, !public)
			}
			file := filepath.Join(dir, sn.Filename)
			if err := os.WriteFile(file, []byte(sn.Code), 0o644); err != nil {
				t.Fatal(err)
			}
			switch sn.Language {
			case "go":
				if _, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.AllErrors); err != nil {
					t.Errorf("go snippet: %v\n%s", err, sn.Code)
				}
			case "python":
				runIfThere(t, sn.Code, "python3", "-m", "py_compile", file)
			case "javascript":
				if public {
					// An ES module of the browser: node checks it as one.
					mjs := strings.TrimSuffix(file, filepath.Ext(file)) + ".mjs"
					if err := os.Rename(file, mjs); err != nil {
						t.Fatal(err)
					}
					file = mjs
				}
				runIfThere(t, sn.Code, "node", "--check", file)
			}
		}
	}
}

func runIfThere(t *testing.T, code, tool string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Logf("%s is not installed: its snippet is not checked", tool)
		return
	}
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Errorf("%s %v: %v\n%s\n%s", tool, args, err, out, code)
	}
}
