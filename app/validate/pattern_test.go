package validate

import (
	"regexp"
	"strings"
	"testing"
)

// A Pattern matches exactly what the counted repetition it stands for
// matches, at and around both ends of its range.
func TestPatternAsCountedRepetition(t *testing.T) {
	for _, tc := range []struct {
		counted  string
		pattern  Pattern
		alphabet string // characters the class holds, then one it does not
	}{
		{`^[A-Za-z0-9._~-]{43,128}$`, MustPattern(`^[A-Za-z0-9._~-]+$`, 43, 128), "aZ9._~-" + "+"},
		{`^[a-z][a-z0-9_-]{0,63}$`, MustPattern(`^[a-z][a-z0-9_-]*$`, 1, 64), "a0_-" + "A"},
		{`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`, MustPattern(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`, 1, 63), "a0-" + "_"},
	} {
		counted := regexp.MustCompile(tc.counted)
		allowed, refused := tc.alphabet[:len(tc.alphabet)-1], tc.alphabet[len(tc.alphabet)-1:]
		for n := range 131 {
			for _, s := range []string{
				strings.Repeat(allowed[:1], n),
				strings.Repeat(allowed, n/len(allowed)+1)[:n],
				refused + strings.Repeat(allowed[:1], max(n-1, 0)),
				strings.Repeat(allowed[:1], max(n-1, 0)) + refused,
				strings.Repeat(allowed[:1], max(n-1, 0)) + "é",
			} {
				if got, want := tc.pattern.MatchString(s), counted.MatchString(s); got != want {
					t.Errorf("%s: %q (length %d): pattern %v, counted repetition %v", tc.counted, s, len(s), got, want)
				}
			}
		}
	}
}
