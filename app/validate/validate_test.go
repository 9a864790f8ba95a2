package validate

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/idenplane/idenplane/app/apperr"
)

func TestChars(t *testing.T) {
	kinds := map[TextKind]string{IdentifierText: "identifier", PersonNameText: "person name", DisplayText: "display name",
		SettingText: "setting", FreeText: "free text"}
	all := []TextKind{IdentifierText, PersonNameText, DisplayText, SettingText, FreeText}
	for _, tc := range []struct {
		s  string
		ok []TextKind
	}{
		{"alice", all},
		{"Jürgen 日本 محمد Ελένη", all},
		{"R&D 'team' \"x\" 100%", all},
		{"<b>", []TextKind{DisplayText, SettingText, FreeText}},
		{"line\nbreak", []TextKind{FreeText}},
		{"tab\there", []TextKind{FreeText}},
		{"cr\rhere", []TextKind{FreeText}},
		{"nul\x00", nil},
		{"esc\x1b[31m", nil},
		{"del\x7f", nil},
		{"nel\u0085", nil},
		{"rlo\u202e", nil},
		{"pdf\u202c", nil},
		{"lri\u2066", nil},
		{"pdi\u2069", nil},
		{"rlm\u200f", []TextKind{FreeText}},
		{"alm\u061c", []TextKind{FreeText}},
		{"zwsp\u200b", nil},
		{"soft\u00adhyphen", nil},
		{"bom\ufeff", nil},
		{"wj\u2060", nil},
		{"tag\U000e0041", nil},
		{"\u3164", nil},
		{"cgj\u034f", nil},
		{"ls\u2028", nil},
		{"pua\ue000", nil},
		{"non\ufffe", nil},
		{"non\U0001ffff", nil},
		{"nb\u00a0sp", []TextKind{PersonNameText, DisplayText, FreeText}},
		{"ideo\u3000space", []TextKind{PersonNameText, DisplayText, FreeText}},
		{"👩\u200d💻", []TextKind{PersonNameText, DisplayText, FreeText}},
		{"می\u200cخواهم", []TextKind{PersonNameText, DisplayText, FreeText}},
		{"❤\ufe0f", []TextKind{PersonNameText, DisplayText, FreeText}},
		{"\u200dx", nil},
		{"x\u200d", nil},
		{"x\u200d\u200dy", nil},
		{"x \u200dy", nil},
		{"\ufe0f", nil},
		{"bad\xffutf8", nil},
	} {
		for _, kind := range all {
			err := Chars("f", tc.s, 100, kind)
			if want := slices.Contains(tc.ok, kind); (err == nil) != want {
				t.Errorf("%q as %s: error %v, want accepted %v", tc.s, kinds[kind], err, want)
			}
		}
	}
	err := Chars("name", "ab\u202ecd", 100, IdentifierText)
	if ae, ok := err.(*apperr.Error); !ok || ae.Field != "name" || !strings.Contains(ae.Message, "U+202E") {
		t.Fatalf("error %#v", err)
	}
	if err := Chars("name", strings.Repeat("é", 5), 4, DisplayText); err == nil {
		t.Fatal("5 characters accepted where 4 are allowed")
	}
}

// FuzzChars: whatever it is given, the check does not panic, and what
// it accepts holds no control character (but the free-text line breaks),
// no bidi override, embedding or isolate, and in an identifier nothing
// invisible at all.
func FuzzChars(f *testing.F) {
	for _, s := range []string{"alice", "👩\u200d💻", "a\u202eb", "\xff", "x\u200d", "line\n", "\u200f", "<b>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, kind := range []TextKind{IdentifierText, PersonNameText, DisplayText, SettingText, FreeText} {
			if Chars("f", s, 1000, kind) != nil {
				continue
			}
			for _, r := range s {
				switch {
				case unicode.IsControl(r) && !(kind == FreeText && strings.ContainsRune("\t\n\r", r)):
					t.Fatalf("kind %d accepted control U+%04X in %q", kind, r, s)
				case isBidiControl(r):
					t.Fatalf("kind %d accepted bidi control U+%04X in %q", kind, r, s)
				case kind == IdentifierText && (unicode.Is(unicode.Cf, r) || (unicode.IsSpace(r) && r != ' ')):
					t.Fatalf("identifier accepted U+%04X in %q", r, s)
				}
			}
		}
	})
}
