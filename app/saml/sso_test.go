package saml_test

import (
	"testing"

	crewsaml "github.com/crewjam/saml"
)

func TestSSO(t *testing.T) {
	e := newIdP(t)
	for _, tc := range []struct {
		name string
		o    spOptions
	}{
		{"redirect binding, unsigned request", spOptions{}},
		{"redirect binding, signed request", spOptions{sign: true}},
		{"POST binding, unsigned request", spOptions{binding: crewsaml.HTTPPostBinding}},
		{"POST binding, signed request", spOptions{binding: crewsaml.HTTPPostBinding, sign: true}},
		{"signed assertion only", spOptions{register: map[string]any{"signResponses": false, "signAssertions": true}}},
		{"signed response only", spOptions{register: map[string]any{"signResponses": true, "signAssertions": false}}},
		{"encrypted assertion", spOptions{register: map[string]any{"encryptAssertions": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := newSP(t, e, tc.o)
			b := newBrowser(t)
			got := mustSignedIn(t, b.visit(sp.url+"/app", testPassword))
			if got.NameID == "" {
				t.Fatal("no NameID")
			}
			// Signed in now: the next sign-in at another SP needs no password.
			other := newSP(t, e, spOptions{})
			mustSignedIn(t, b.visit(other.url+"/app", ""))
		})
	}
}
