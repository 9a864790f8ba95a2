package bus

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// docs/events.md lists every event type, in the order of Types, and
// nothing else.
func TestTypesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []Type
	for _, m := range regexp.MustCompile(`(?m)^### (\S+)$`).FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, Type(m[1]))
	}
	if !slices.Equal(documented, Types) {
		t.Fatalf("docs/events.md lists %v; the code has %v", documented, Types)
	}
}

func TestPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		valid   bool
		matches []Type
	}{
		{"*", true, Types},
		{"user.*", true, []Type{UserCreated, UserUpdated, UserDeleted}},
		{"organization.*", true, []Type{OrganizationMemberAdded, OrganizationMemberRemoved}},
		{"organization.member.*", true, []Type{OrganizationMemberAdded, OrganizationMemberRemoved}},
		{"organization.member", false, nil},
		{"login.failed", true, []Type{LoginFailed}},
		{"login.*", true, []Type{LoginSucceeded, LoginFailed}},
		{"user", false, nil},
		{"users.*", false, nil},
		{"user.created.*", false, nil},
		{"*.created", false, nil},
		{"", false, nil},
	} {
		if got := ValidPattern(tc.pattern); got != tc.valid {
			t.Errorf("ValidPattern(%q) = %v", tc.pattern, got)
		}
		if !tc.valid {
			continue
		}
		var got []Type
		for _, e := range Types {
			if Matches([]string{tc.pattern}, e) {
				got = append(got, e)
			}
		}
		if !slices.Equal(got, tc.matches) {
			t.Errorf("%q matches %v, want %v", tc.pattern, got, tc.matches)
		}
	}
}
