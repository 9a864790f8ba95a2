package saml

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"
)

// An AuthnRequest's RequestedAuthnContext (saml-core §3.3.2.2.1), as
// Keycloak and saml2int read it: the classes this identity provider
// issues are ranked, a password over TLS (PasswordProtectedTransport, 1)
// below the REFEDS MFA profile (2), and the comparison (exact by default,
// minimum, better, maximum) says which ranks answer the request. A class
// this identity provider does not know is left aside; a request naming
// none it knows, or whose comparison no rank meets (better than MFA),
// cannot be met: Requester / NoAuthnContext. A session below every rank
// the request accepts is stepped up (the hosted sign-in asks for the
// second factor) when the user has one, else answered Responder /
// NoAuthnContext. The assertion states the strongest accepted class the
// session reaches: a two-factor session states PasswordProtectedTransport
// when that is what an exact request asks (the stronger sign-in includes
// what the weaker one proves), never the other way round.

const nsAssertion = "urn:oasis:names:tc:SAML:2.0:assertion"

// classRanks are the AuthnContextClassRefs this identity provider issues,
// by strength.
var classRanks = map[string]int{classPassword: 1, classMFA: 2}

// rankClass is the class a session of each rank states by default.
var rankClass = map[int]string{1: classPassword, 2: classMFA}

// authnContext is a RequestedAuthnContext reduced to the known classes;
// it is kept with a request that waits for its browser to sign in.
type authnContext struct {
	Comparison string   `json:"comparison"`
	Classes    []string `json:"classes"`
}

var errNoAuthnContext = errors.New("RequestedAuthnContext names no authentication context class this identity provider issues, or none it can meet")

// requestedContext reads the RequestedAuthnContext of an AuthnRequest: nil
// when it has none; errNoAuthnContext when it can never be met; a bad
// message for a comparison the schema does not allow.
func requestedContext(root *etree.Element) (*authnContext, error) {
	var rac *etree.Element
	for _, c := range root.ChildElements() {
		if c.Tag == "RequestedAuthnContext" && c.NamespaceURI() == nsProtocol {
			rac = c
		}
	}
	if rac == nil {
		return nil, nil
	}
	out := &authnContext{Comparison: rac.SelectAttrValue("Comparison", "")}
	if out.Comparison == "" { // the default; some providers write it empty
		out.Comparison = "exact"
	}
	if !slices.Contains([]string{"exact", "minimum", "better", "maximum"}, out.Comparison) {
		return nil, errBadMessage("RequestedAuthnContext Comparison %q is not exact, minimum, better or maximum", out.Comparison)
	}
	for _, c := range rac.ChildElements() {
		class := strings.TrimSpace(c.Text())
		if c.Tag == "AuthnContextClassRef" && c.NamespaceURI() == nsAssertion && classRanks[class] > 0 &&
			!slices.Contains(out.Classes, class) {
			out.Classes = append(out.Classes, class)
		}
	}
	if !out.accepts(1) && !out.accepts(2) {
		return nil, errNoAuthnContext
	}
	return out, nil
}

// accepts says whether a sign-in of rank answers the request.
func (c *authnContext) accepts(rank int) bool {
	if len(c.Classes) == 0 {
		return false
	}
	ranks := make([]int, len(c.Classes))
	for i, class := range c.Classes {
		ranks[i] = classRanks[class]
	}
	switch c.Comparison {
	case "minimum":
		return rank >= slices.Min(ranks)
	case "better":
		return rank > slices.Min(ranks)
	case "maximum":
		return rank <= slices.Max(ranks)
	}
	return slices.Contains(ranks, rank)
}

// class is what the assertion states for a session of rank: the strongest
// class the request accepts that the session reaches, or "" when the
// session is below all of them. Without a request, the session's own.
func (c *authnContext) class(rank int) string {
	if c == nil {
		return rankClass[rank]
	}
	for r := rank; r >= 1; r-- {
		if !c.accepts(r) {
			continue
		}
		if c.Comparison == "exact" { // the class asked for, not a synonym
			for _, class := range c.Classes {
				if classRanks[class] == r {
					return class
				}
			}
		}
		return rankClass[r]
	}
	return ""
}

// encode is the context as a waiting request keeps it.
func (c *authnContext) encode() string {
	if c == nil {
		return ""
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// decodeContext reads what encode wrote.
func decodeContext(s string) (*authnContext, error) {
	if s == "" {
		return nil, nil
	}
	var c authnContext
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// noAuthnContext is the status of a request whose context the user's
// sign-in does not reach.
func noAuthnContext(req *request) error {
	return &statusError{req: req, top: crewsaml.StatusResponder, second: crewsaml.StatusNoAuthnContext,
		message: "the user's sign-in does not reach the authentication context the request asks for"}
}
