package saml

import (
	"errors"
	"testing"

	"github.com/beevik/etree"
)

// What each comparison states for a one-factor (rank 1) and a two-factor
// (rank 2) session; "" is a session below the request.
func TestRequestedContextClasses(t *testing.T) {
	const unknown = "urn:oasis:names:tc:SAML:2.0:ac:classes:Kerberos"
	for _, tc := range []struct {
		comparison string
		classes    []string
		one, two   string
		never      bool // no sign-in meets it
	}{
		{"", nil, classPassword, classMFA, false}, // no RequestedAuthnContext
		{"exact", []string{classPassword}, classPassword, classPassword, false},
		{"exact", []string{classMFA}, "", classMFA, false},
		{"exact", []string{classMFA, classPassword}, classPassword, classMFA, false},
		{"exact", []string{unknown, classMFA}, "", classMFA, false},
		{"minimum", []string{classPassword}, classPassword, classMFA, false},
		{"minimum", []string{classMFA, classPassword}, classPassword, classMFA, false},
		{"minimum", []string{classMFA}, "", classMFA, false},
		{"better", []string{classPassword}, "", classMFA, false},
		{"better", []string{classMFA}, "", "", true},
		{"maximum", []string{classPassword}, classPassword, classPassword, false},
		{"maximum", []string{classMFA}, classPassword, classMFA, false},
		{"exact", []string{unknown}, "", "", true},
		{"minimum", nil, "", "", true},
	} {
		root := etree.NewElement("samlp:AuthnRequest")
		root.CreateAttr("xmlns:samlp", nsProtocol)
		root.CreateAttr("xmlns:saml", nsAssertion)
		if tc.comparison != "" {
			rac := root.CreateElement("samlp:RequestedAuthnContext")
			rac.CreateAttr("Comparison", tc.comparison)
			for _, c := range tc.classes {
				rac.CreateElement("saml:AuthnContextClassRef").SetText(c)
			}
		}
		rc, err := requestedContext(root)
		if tc.never {
			if !errors.Is(err, errNoAuthnContext) {
				t.Errorf("%s %v: %+v %v, want it refused", tc.comparison, tc.classes, rc, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %v: %v", tc.comparison, tc.classes, err)
		}
		if one, two := rc.class(1), rc.class(2); one != tc.one || two != tc.two {
			t.Errorf("%s %v: states %q and %q, want %q and %q", tc.comparison, tc.classes, one, two, tc.one, tc.two)
		}
	}
}
