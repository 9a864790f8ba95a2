package webhooks

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// docs/events.md lists every event type, in the order of EventTypes, and
// nothing else.
func TestEventTypesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []EventType
	for _, m := range regexp.MustCompile(`(?m)^### (\S+)$`).FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, EventType(m[1]))
	}
	if !slices.Equal(documented, EventTypes) {
		t.Fatalf("docs/events.md lists %v; the code has %v", documented, EventTypes)
	}
}

func TestPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		valid   bool
		matches []EventType
	}{
		{"*", true, EventTypes},
		{"user.*", true, []EventType{UserCreated, UserUpdated, UserDeleted}},
		{"login.failed", true, []EventType{LoginFailed}},
		{"login.*", true, []EventType{LoginSucceeded, LoginFailed}},
		{"user", false, nil},
		{"users.*", false, nil},
		{"user.created.*", false, nil},
		{"*.created", false, nil},
		{"", false, nil},
	} {
		if got := validPattern(tc.pattern); got != tc.valid {
			t.Errorf("validPattern(%q) = %v", tc.pattern, got)
		}
		if !tc.valid {
			continue
		}
		var got []EventType
		for _, e := range EventTypes {
			if matches([]string{tc.pattern}, e) {
				got = append(got, e)
			}
		}
		if !slices.Equal(got, tc.matches) {
			t.Errorf("%q matches %v, want %v", tc.pattern, got, tc.matches)
		}
	}
}

func TestNumericHost(t *testing.T) {
	for host, want := range map[string]bool{"2130706433": true, "0x7f.1": true, "127.1": true, "017700000001": true,
		"127.0.0.1": false, "hooks.example.com": false, "beef.dead": false, "cafe.example": false, "::1": false} {
		if got := numericHost(host); got != want {
			t.Errorf("numericHost(%q) = %v", host, got)
		}
	}
}
