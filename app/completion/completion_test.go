package completion

import (
	"bytes"
	"flag"
	"slices"
	"strings"
	"testing"
)

// TestFlagsOf reads the names a real flag set's help lists, whatever the
// flag's kind, in order and once each.
func TestFlagsOf(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.String("addr", ":3000", "listen address")
	fs.Bool("json", false, "print JSON")
	fs.Duration("timeout", 0, "how long\n    \t-not-a-flag on a second line")
	fs.Int("n", 1, "")
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	got := FlagsOf("Usage of serve:\n" + help.String() + "  -h same as above\n")
	want := []string{"addr", "json", "n", "timeout", "h"}
	if !slices.Equal(got, want) {
		t.Fatalf("FlagsOf = %q, want %q, from:\n%s", got, want, help.String())
	}
}

func TestWriteRefusesUnknownShell(t *testing.T) {
	err := Write(&bytes.Buffer{}, "powershell", "idenplane", nil)
	if err == nil || !strings.Contains(err.Error(), `no completion for shell "powershell"`) {
		t.Fatalf("Write(powershell) = %v", err)
	}
}

// TestFunctionName: a program's name with a dash or dot still makes a
// shell function's name.
func TestFunctionName(t *testing.T) {
	if got := function("idenplane-linux.amd64"); got != "_idenplane_linux_amd64" {
		t.Fatalf("function = %q", got)
	}
}
