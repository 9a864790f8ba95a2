package saml_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/saml"
)

const (
	classPPT = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
	classMFA = "https://refeds.org/profile/mfa"
)

// contextRequest is an AuthnRequest of s over HTTP-Redirect with a
// RequestedAuthnContext: comparison ("" for none: exact) and the class
// references ("decl:" and a reference: an AuthnContextDeclRef instead);
// none of either: no RequestedAuthnContext.
func (s *sp) contextRequest(t *testing.T, passive bool, comparison string, refs ...string) (id, target string) {
	t.Helper()
	req := s.authnRequest(t)
	if passive {
		req.IsPassive = &passive
	}
	req.RequestedAuthnContext = nil
	el := req.Element()
	if comparison == "" && len(refs) == 0 {
		return req.ID, s.redirect(t, req, "", "")
	}
	rac := el.CreateElement("samlp:RequestedAuthnContext")
	if comparison != "" {
		rac.CreateAttr("Comparison", comparison)
	}
	for _, ref := range refs {
		if decl, ok := strings.CutPrefix(ref, "decl:"); ok {
			rac.CreateElement("saml:AuthnContextDeclRef").SetText(decl)
		} else {
			rac.CreateElement("saml:AuthnContextClassRef").SetText(ref)
		}
	}
	doc := etree.NewDocument()
	doc.SetRoot(el)
	b, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return req.ID, ssoPath + "?SAMLRequest=" + deflated(b)
}

// answer is the SAML Response the browser last carried to s: its status
// codes and the AuthnContextClassRef of its assertion.
func (b *browser) answer(t *testing.T, s *sp) (top, second, class, inResponseTo string) {
	t.Helper()
	for i := len(b.posted) - 1; i >= 0; i-- {
		m := b.posted[i]
		if m.action != s.url+"/saml/acs" {
			continue
		}
		saml.ValidateXSD(t, saml.SchemaProtocol, m.xml)
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(m.xml); err != nil {
			t.Fatal(err)
		}
		if el := doc.FindElement("/Response/Status/StatusCode"); el != nil {
			top = el.SelectAttrValue("Value", "")
		}
		if el := doc.FindElement("/Response/Status/StatusCode/StatusCode"); el != nil {
			second = el.SelectAttrValue("Value", "")
		}
		if el := doc.FindElement("//AuthnStatement/AuthnContext/AuthnContextClassRef"); el != nil {
			class = el.Text()
		}
		return top, second, class, doc.Root().SelectAttrValue("InResponseTo", "")
	}
	t.Fatal("no SAML Response was carried to the SP")
	return
}

// RequestedAuthnContext: a password session answers what a password
// meets, a request for a second factor steps the session up when the
// user has one and is answered NoAuthnContext when not, and a request no
// sign-in here can meet is NoAuthnContext at once.
func TestRequestedAuthnContext(t *testing.T) {
	e := newIdP(t)
	s := newSP(t, e, spOptions{})
	b := newBrowser(t)
	mustSignedIn(t, b.visit(s.url+"/app", testPassword))
	b.stopAtResponse = true // the answers go to requests the SP did not make
	const unknown = "urn:oasis:names:tc:SAML:2.0:ac:classes:Smartcard"
	success := crewsaml.StatusSuccess
	type want struct{ top, second, class string }
	cases := []struct {
		name       string
		passive    bool
		comparison string
		refs       []string
		want       want
	}{
		{"exact password", false, "exact", []string{classPPT}, want{success, "", classPPT}},
		{"default comparison", false, "", []string{classPPT}, want{success, "", classPPT}},
		{"minimum password", false, "minimum", []string{classPPT}, want{success, "", classPPT}},
		{"maximum MFA", false, "maximum", []string{classMFA}, want{success, "", classPPT}},
		{"an unknown class beside a known one", false, "exact", []string{unknown, classPPT}, want{success, "", classPPT}},
		{"exact MFA, no second factor", false, "exact", []string{classMFA},
			want{crewsaml.StatusResponder, crewsaml.StatusNoAuthnContext, ""}},
		{"minimum MFA, no second factor", false, "minimum", []string{classMFA},
			want{crewsaml.StatusResponder, crewsaml.StatusNoAuthnContext, ""}},
		{"better than password, no second factor", false, "better", []string{classPPT},
			want{crewsaml.StatusResponder, crewsaml.StatusNoAuthnContext, ""}},
		{"MFA without asking the user", true, "exact", []string{classMFA},
			want{crewsaml.StatusResponder, crewsaml.StatusNoPassive, ""}},
		{"an unknown class", false, "exact", []string{unknown},
			want{crewsaml.StatusRequester, crewsaml.StatusNoAuthnContext, ""}},
		{"better than MFA", false, "better", []string{classMFA},
			want{crewsaml.StatusRequester, crewsaml.StatusNoAuthnContext, ""}},
		{"a declaration reference", false, "exact", []string{"decl:https://sp.test/decl"},
			want{crewsaml.StatusRequester, crewsaml.StatusNoAuthnContext, ""}},
	}
	check := func(t *testing.T, b *browser, passive bool, comparison string, refs []string, w want) {
		t.Helper()
		b.posted = nil
		id, target := s.contextRequest(t, passive, comparison, refs...)
		b.visit(e.base+target, "")
		top, second, class, inResponseTo := b.answer(t, s)
		if top != w.top || second != w.second || class != w.class || inResponseTo != id {
			t.Fatalf("answered %s / %q with class %q to %q, want %s / %q with class %q to %q",
				top, second, class, inResponseTo, w.top, w.second, w.class, id)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, b, tc.passive, tc.comparison, tc.refs, tc.want) })
	}
	t.Run("a comparison the schema does not have", func(t *testing.T) {
		_, target := s.contextRequest(t, false, "roughly", classPPT)
		mustRefusedPage(t, e.Request(http.MethodGet, target, nil), http.StatusBadRequest, "Comparison")
	})

	// Alice enrols an authenticator app; her session stays a password one,
	// so a request for MFA steps it up: the hosted sign-in asks for the
	// code, and the answer states MFA.
	setup := b.get(e.base + "/realms/acme/account/totp-setup")
	key := regexp.MustCompile(`<dd><code>([A-Z2-7 ]+)</code></dd>`).FindStringSubmatch(setup.body)
	f := setup.postForm()
	if key == nil || f == nil {
		t.Fatalf("TOTP setup page: %d %.500s", setup.status, setup.body)
	}
	secret := strings.ReplaceAll(key[1], " ", "")
	f.values.Set("code", totpCode(t, secret, time.Now()))
	if p := b.submit(setup, f); p.status != http.StatusOK {
		t.Fatalf("TOTP enrolment: %d %.300s", p.status, p.body)
	}
	check(t, b, false, "exact", []string{classPPT}, want{success, "", classPPT}) // still a password session
	check(t, b, true, "minimum", []string{classMFA}, want{crewsaml.StatusResponder, crewsaml.StatusNoPassive, ""})
	b.totpSecret = secret
	check(t, b, false, "minimum", []string{classMFA}, want{success, "", classMFA})
	var events []map[string]any
	r := e.Admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	r.Decode(t, &events)
	if len(events) != 1 {
		t.Fatalf("the step-up made another session: %v", events)
	}
	// Stepped up, the session answers at once: MFA where it is accepted,
	// a password where that is exactly what is asked.
	b.totpSecret = ""
	check(t, b, false, "exact", []string{classMFA}, want{success, "", classMFA})
	check(t, b, false, "", nil, want{success, "", classMFA})
	check(t, b, false, "exact", []string{classPPT}, want{success, "", classPPT})
	check(t, b, false, "minimum", []string{classPPT}, want{success, "", classMFA})
	check(t, b, true, "better", []string{classPPT}, want{success, "", classMFA})
}
