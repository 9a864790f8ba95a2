package scopes

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

func TestConvertClaim(t *testing.T) {
	cases := []struct {
		label, in string
		want      any
		ok        bool
	}{
		{"", "x", "x", true},
		{"String", " 1 ", " 1 ", true},
		{"long", "-9223372036854775808", int64(-9223372036854775808), true},
		{"long", "9223372036854775808", nil, false},
		{"long", "1.5", nil, false},
		{"int", "2147483647", 2147483647, true},
		{"int", "2147483648", nil, false},
		{"boolean", "TRUE", true, true},
		{"boolean", "false", false, true},
		{"boolean", "1", nil, false},
		{"JSON", `[1, "a"]`, []any{json.Number("1"), "a"}, true},
		{"JSON", `"s"`, "s", true},
		{"JSON", `{`, nil, false},
		{"JSON", `1 2`, nil, false},
		{"JSON", ``, nil, false},
		{"float", "1", nil, false},
	}
	for _, c := range cases {
		got, ok := ConvertClaim(c.label, c.in)
		if ok != c.ok || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("ConvertClaim(%q, %q) = %#v, %v; want %#v, %v", c.label, c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestSplitClaimName(t *testing.T) {
	for in, want := range map[string][]string{
		"sub_claim":        {"sub_claim"},
		"a.b.c":            {"a", "b", "c"},
		`a\.b`:             {"a.b"},
		`a\.b.c`:           {"a.b", "c"},
		`a\b`:              {`a\b`},
		"a..b":             {"a", "", "b"},
		"a.":               {"a", ""},
		`trailing\`:        {`trailing\`},
		"resource_access.": {"resource_access", ""},
	} {
		if got := SplitClaimName(in); !slices.Equal(got, want) {
			t.Errorf("SplitClaimName(%q) = %q, want %q", in, got, want)
		}
	}
}
