package saml_test

import (
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/saml"
)

func TestSingleLogout(t *testing.T) {
	e := newIdP(t)
	for _, tc := range []struct {
		name                string
		initiator, receiver spOptions
	}{
		{"signing SPs", spOptions{sign: true}, spOptions{sign: true}},
		{"unsigning SPs", spOptions{}, spOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, second := newSP(t, e, tc.initiator), newSP(t, e, tc.receiver)
			bystander := newSP(t, e, spOptions{}) // never signed in to: not told
			b := newBrowser(t)
			mustSignedIn(t, b.visit(first.url+"/app", testPassword))
			atSecond := mustSignedIn(t, b.visit(second.url+"/app", ""))

			p := b.visit(first.url+"/logout", "")
			if p.status != http.StatusOK || !strings.Contains(p.body, "logged out; RelayState=sp-state") {
				t.Fatalf("the logout did not come back to the SP that asked: %d %s %.300s", p.status, p.url, p.body)
			}
			second.mu.Lock()
			got := second.logoutRequests
			second.mu.Unlock()
			if len(got) != 1 || got[0].NameID == nil || got[0].NameID.Value != atSecond.NameID || got[0].SessionIndex == nil ||
				got[0].SessionIndex.Value == "" {
				t.Fatalf("the second SP got %+v, want one LogoutRequest for %s", got, atSecond.NameID)
			}
			if len(bystander.logoutRequests) != 0 {
				t.Fatal("an SP the user never signed in to was told")
			}
			// The SSO session is gone: signing in again asks for the password.
			if p := b.visit(bystander.url+"/app", ""); !strings.Contains(p.body, `name="password"`) {
				t.Fatalf("still signed in after the logout: %d %s", p.status, p.url)
			}
			var sessions []map[string]any
			e.Admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil).Decode(t, &sessions)
			if len(sessions) != 0 {
				t.Fatalf("sessions left: %v", sessions)
			}
		})
	}
}

func TestSingleLogoutRefusals(t *testing.T) {
	e := newIdP(t)
	signing := newSP(t, e, spOptions{sign: true})
	plain := newSP(t, e, spOptions{})
	b := newBrowser(t)
	mustSignedIn(t, b.visit(signing.url+"/app", testPassword))
	atPlain := mustSignedIn(t, b.visit(plain.url+"/app", ""))
	// An unsigned LogoutRequest of an SP with a certificate ends nothing.
	method := signing.mw.ServiceProvider.SignatureMethod
	signing.mw.ServiceProvider.SignatureMethod = ""
	u, err := signing.mw.ServiceProvider.MakeRedirectLogoutRequest("alice", "")
	signing.mw.ServiceProvider.SignatureMethod = method
	if err != nil {
		t.Fatal(err)
	}
	p := b.get(u.String())
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "unsigned") {
		t.Fatalf("unsigned LogoutRequest: %d %.300s", p.status, p.body)
	}
	var sessions []map[string]any
	e.Admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil).Decode(t, &sessions)
	if len(sessions) != 1 {
		t.Fatalf("sessions after a refused logout: %v", sessions)
	}
	// A realm that wants signed requests refuses an unsigned LogoutRequest
	// of an SP without a certificate, as it does its AuthnRequests.
	apptest.MustStatus(t, e.Admin(http.MethodPut, "/admin/realms/acme/saml/settings",
		map[string]any{"wantAuthnRequestsSigned": true}), http.StatusOK)
	_, doc := plain.logoutRequestXML(t, atPlain.NameID, string(crewsaml.TransientNameIDFormat), atPlain.Attributes["SessionIndex"]...)
	r := e.Request(http.MethodGet, ssoPath+"?SAMLRequest="+deflated(doc), nil)
	mustRefusedPage(t, r, http.StatusBadRequest, "wants signed requests")
	if e.sessionsOf(t, e.alice) != 1 {
		t.Fatal("an unsigned LogoutRequest ended the session of a realm that wants them signed")
	}
	apptest.MustStatus(t, e.Admin(http.MethodPut, "/admin/realms/acme/saml/settings",
		map[string]any{"wantAuthnRequestsSigned": false}), http.StatusOK)

	// A LogoutResponse nobody awaits.
	r = e.Request(http.MethodGet, ssoPath+"?SAMLResponse="+deflated([]byte(
		`<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="x" Version="2.0"/>`))+"&RelayState=nope", nil)
	mustRefusedPage(t, r, http.StatusBadRequest, "unknown, expired or already finished")
	apptest.MustStatus(t, r, http.StatusBadRequest)
}

func TestSAMLSessionsListed(t *testing.T) {
	e := newIdP(t)
	first, second := newSP(t, e, spOptions{}), newSP(t, e, spOptions{})
	b := newBrowser(t)
	mustSignedIn(t, b.visit(first.url+"/app", testPassword))
	mustSignedIn(t, b.visit(second.url+"/app", ""))
	want := []any{first.url + "/saml/metadata", second.url + "/saml/metadata"}
	for _, path := range []string{"/admin/realms/acme/users/" + e.alice + "/sessions", "/admin/realms/acme/sessions"} {
		var sessions []map[string]any
		r := e.Admin(http.MethodGet, path, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		r.Decode(t, &sessions)
		found := false
		for _, s := range sessions {
			if s["type"] == "sso" {
				found = true
				if got, _ := s["samlServiceProviders"].([]any); !slices.Equal(got, want) {
					t.Fatalf("%s: samlServiceProviders %v, want %v", path, got, want)
				}
			}
		}
		if !found {
			t.Fatalf("%s: no SSO session in %s", path, r.Body)
		}
	}
}

// logoutRequestXML is an unsigned LogoutRequest of s for nameID (in
// format, "" for none), with a SessionIndex for each of indexes.
func (s *sp) logoutRequestXML(t *testing.T, nameID, format string, indexes ...string) (id string, xmlDoc []byte) {
	t.Helper()
	method := s.mw.ServiceProvider.SignatureMethod
	s.mw.ServiceProvider.SignatureMethod = ""
	defer func() { s.mw.ServiceProvider.SignatureMethod = method }()
	req, err := s.mw.ServiceProvider.MakeLogoutRequest(s.mw.ServiceProvider.GetSLOBindingLocation(crewsaml.HTTPRedirectBinding), nameID)
	if err != nil {
		t.Fatal(err)
	}
	req.NameID.Format = format
	el := req.Element()
	for _, index := range indexes {
		el.CreateElement("samlp:SessionIndex").SetText(index)
	}
	doc := etree.NewDocument()
	doc.SetRoot(el)
	b, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return req.ID, b
}

// mustLogoutStatus checks the identity provider's LogoutResponse to the
// LogoutRequest inResponseTo, posted to the SP's SLO URL: signed, with the
// status codes (second "" for none).
func mustLogoutStatus(t *testing.T, status int, body string, s *sp, top, second, inResponseTo string) {
	t.Helper()
	p := &page{status: status, body: body, url: &url.URL{}}
	f := p.postForm()
	if status != http.StatusOK || f == nil || f.action != s.url+"/saml/slo" {
		t.Fatalf("status %d, want a POST form to the SP's SLO URL; body %.400s", status, body)
	}
	raw, err := base64.StdEncoding.DecodeString(f.values.Get("SAMLResponse"))
	if err != nil {
		t.Fatal(err)
	}
	var lr crewsaml.LogoutResponse
	if err := xml.Unmarshal(raw, &lr); err != nil {
		t.Fatal(err)
	}
	sc := lr.Status.StatusCode
	gotSecond := ""
	if sc.StatusCode != nil {
		gotSecond = sc.StatusCode.Value
	}
	if sc.Value != top || gotSecond != second || lr.InResponseTo != inResponseTo || f.values.Get("RelayState") != "rs" {
		t.Fatalf("LogoutResponse %s (RelayState %q), want %s / %q to %s", raw, f.values.Get("RelayState"), top, second, inResponseTo)
	}
	if !strings.Contains(string(raw), "<ds:Signature") {
		t.Fatalf("the LogoutResponse is unsigned: %s", raw)
	}
	saml.ValidateXSD(t, saml.SchemaProtocol, raw)
}

func (e *idp) sessionsOf(t *testing.T, userID string) int {
	t.Helper()
	var sessions []map[string]any
	r := e.Admin(http.MethodGet, "/admin/realms/acme/users/"+userID+"/sessions", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	r.Decode(t, &sessions)
	return len(sessions)
}

// A LogoutRequest ends the session it names and no other: the NameID the
// SP got in that session (in its format), and one of its SessionIndexes
// when the request has any. Naming another user, another format or
// another session answers Requester/UnknownPrincipal and ends nothing.
func TestSingleLogoutMatchesTheSession(t *testing.T) {
	e := newIdP(t)
	apptest.MustStatus(t, e.Admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true,
		"enabledEventTypes": []string{"LOGOUT", "LOGOUT_ERROR"}}), http.StatusOK)
	bob := e.CreateUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": testPassword})["id"].(string)
	s := newSP(t, e, spOptions{})
	other := newSP(t, e, spOptions{})
	alice := newBrowser(t)
	atS := mustSignedIn(t, alice.visit(s.url+"/app", testPassword))
	atOther := mustSignedIn(t, alice.visit(other.url+"/app", ""))
	bobs := newBrowser(t)
	bobs.user = "bob"
	bobAtS := mustSignedIn(t, bobs.visit(s.url+"/app", testPassword))
	if bobAtS.NameID == atS.NameID {
		t.Fatal("bob and alice share a NameID")
	}
	index := func(si signedIn) string {
		t.Helper()
		if len(si.Attributes["SessionIndex"]) != 1 {
			t.Fatalf("no SessionIndex in %v", si.Attributes)
		}
		return si.Attributes["SessionIndex"][0]
	}
	aliceIndex, bobIndex := index(atS), index(bobAtS)
	transient := string(crewsaml.TransientNameIDFormat)

	for _, tc := range []struct {
		name    string
		nameID  string
		format  string
		indexes []string
	}{
		{"another user", bobAtS.NameID, transient, []string{bobIndex}},
		{"another session index", atS.NameID, transient, []string{bobIndex}},
		{"an unknown session index", atS.NameID, transient, []string{"_unknown"}},
		{"the index of the session at another SP", atS.NameID, transient, []string{index(atOther)}},
		{"the NameID in another format", atS.NameID, string(crewsaml.PersistentNameIDFormat), []string{aliceIndex}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, doc := s.logoutRequestXML(t, tc.nameID, tc.format, tc.indexes...)
			p := alice.get(e.base + ssoPath + "?SAMLRequest=" + deflated(doc) + "&RelayState=rs")
			mustLogoutStatus(t, p.status, p.body, s, crewsaml.StatusRequester, "urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal", id)
			if e.sessionsOf(t, e.alice) != 1 || e.sessionsOf(t, bob) != 1 {
				t.Fatal("a LogoutRequest that names another session ended one")
			}
		})
	}
	// Without a browser session (a cross-site POST carries no SSO cookie),
	// a SessionIndex of another user's session with this NameID ends nothing.
	id, doc := s.logoutRequestXML(t, atS.NameID, transient, bobIndex)
	r := e.Request(http.MethodPost, ssoPath, postRaw(doc, "rs"), "Content-Type: application/x-www-form-urlencoded")
	mustLogoutStatus(t, r.Status, string(r.Body), s, crewsaml.StatusRequester, "urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal", id)
	if e.sessionsOf(t, bob) != 1 {
		t.Fatal("bob's session ended on a LogoutRequest naming alice")
	}
	// And the SessionIndex of bob's session, with his NameID, ends his
	// session, whichever browser carries it.
	id, doc = s.logoutRequestXML(t, bobAtS.NameID, transient, bobIndex)
	r = e.Request(http.MethodPost, ssoPath, postRaw(doc, "rs"), "Content-Type: application/x-www-form-urlencoded")
	mustLogoutStatus(t, r.Status, string(r.Body), s, crewsaml.StatusSuccess, "", id)
	if e.sessionsOf(t, bob) != 0 || e.sessionsOf(t, e.alice) != 1 {
		t.Fatal("the LogoutRequest for bob's session did not end it alone")
	}

	// The right NameID, with its SessionIndex among others, ends alice's
	// session; the other SP is told, and the initiator answered Success.
	id, doc = s.logoutRequestXML(t, atS.NameID, "", "_unknown", aliceIndex)
	p := alice.get(e.base + ssoPath + "?SAMLRequest=" + deflated(doc) + "&RelayState=rs")
	if e.sessionsOf(t, e.alice) != 0 {
		t.Fatal("alice's session was not ended")
	}
	for range 5 { // through the other SP, back to the one that asked
		f := p.postForm()
		if f == nil || f.action == s.url+"/saml/slo" {
			break
		}
		p = alice.submit(p, f)
	}
	mustLogoutStatus(t, p.status, p.body, s, crewsaml.StatusSuccess, "", id)
	if len(other.logoutRequests) != 1 || other.logoutRequests[0].NameID.Value != atOther.NameID {
		t.Fatalf("the other SP got %+v", other.logoutRequests)
	}

	var events []map[string]any
	e.Admin(http.MethodGet, "/admin/realms/acme/events?type=LOGOUT_ERROR", nil).Decode(t, &events)
	if len(events) == 0 || events[0]["clientId"] != s.url+"/saml/metadata" ||
		events[0]["error"] != "urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal" {
		t.Fatalf("LOGOUT_ERROR events %v", events)
	}
}

// editXML is doc with edit applied to its root.
func editXML(t *testing.T, doc []byte, edit func(root *etree.Element)) []byte {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(doc); err != nil {
		t.Fatal(err)
	}
	edit(d.Root())
	out, err := d.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every LogoutRequest that cannot be trusted or read is refused on the
// error page with a 400, and ends nothing.
func TestLogoutRequestRefusals(t *testing.T) {
	e := newIdP(t)
	plain := newSP(t, e, spOptions{})
	signing := newSP(t, e, spOptions{sign: true})
	unknown := newSP(t, e, spOptions{})
	apptest.MustStatus(t, e.Admin(http.MethodDelete, "/admin/realms/acme/saml-service-providers/"+unknown.id, nil), http.StatusNoContent)
	apptest.MustStatus(t, e.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{
		"entityId": "https://no-slo.test", "name": "no SLO", "acsUrl": "https://no-slo.test/acs"}), http.StatusCreated)
	transient := string(crewsaml.TransientNameIDFormat)
	// Replayed: the first time, with no session to end, it is answered.
	_, replayed := plain.logoutRequestXML(t, "nobody", transient, "_none")
	r := e.Request(http.MethodGet, ssoPath+"?SAMLRequest="+deflated(replayed)+"&RelayState=rs", nil)
	mustLogoutStatus(t, r.Status, string(r.Body), plain, crewsaml.StatusSuccess, "", idOf(t, replayed))

	b := newBrowser(t)
	atPlain := mustSignedIn(t, b.visit(plain.url+"/app", testPassword))
	mustSignedIn(t, b.visit(signing.url+"/app", ""))
	good := func() []byte {
		_, doc := plain.logoutRequestXML(t, atPlain.NameID, transient, atPlain.Attributes["SessionIndex"]...)
		return doc
	}
	setAttr := func(name, value string) func(*etree.Element) {
		return func(root *etree.Element) { root.CreateAttr(name, value) }
	}

	tampered := func() []byte {
		req, err := signing.mw.ServiceProvider.MakeLogoutRequest(ssoURLOf(e), "someone")
		if err != nil {
			t.Fatal(err)
		}
		el := req.Element()
		el.FindElement("./NameID").SetText("someone else")
		doc := etree.NewDocument()
		doc.SetRoot(el)
		out, _ := doc.WriteToBytes()
		return out
	}()
	for _, tc := range []struct {
		name  string
		doc   []byte
		words string
	}{
		{"replayed", replayed, "received before"},
		{"stale IssueInstant", editXML(t, good(), setAttr("IssueInstant", time.Now().Add(-10*time.Minute).UTC().Format(time.RFC3339))), "IssueInstant"},
		{"IssueInstant ahead", editXML(t, good(), setAttr("IssueInstant", time.Now().Add(10*time.Minute).UTC().Format(time.RFC3339))), "IssueInstant"},
		{"wrong Destination", editXML(t, good(), setAttr("Destination", e.base+"/realms/other/protocol/saml")), "Destination"},
		{"no ID", editXML(t, good(), func(root *etree.Element) { root.RemoveAttr("ID") }), "ID is missing"},
		{"version 1.1", editXML(t, good(), setAttr("Version", "1.1")), "Version must be 2.0"},
		{"unknown SP", func() []byte {
			_, doc := unknown.logoutRequestXML(t, atPlain.NameID, transient)
			return doc
		}(), "not a service provider of this realm"},
		{"SP without an sloUrl", editXML(t, good(), func(root *etree.Element) {
			root.FindElement("./Issuer").SetText("https://no-slo.test")
		}), "no sloUrl"},
		{"no NameID", editXML(t, good(), func(root *etree.Element) { root.RemoveChild(root.FindElement("./NameID")) }), "must name its principal with a NameID"},
		{"tampered signature", tampered, "does not verify"},
		{"unsigned, of an SP with a certificate", func() []byte {
			_, doc := signing.logoutRequestXML(t, "someone", transient)
			return doc
		}(), "unsigned"},
		{"an external entity", []byte(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>` +
			`<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x" Version="2.0"><saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">&x;</saml:Issuer></samlp:LogoutRequest>`),
			"document type declaration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, binding := range []string{"Redirect", "POST"} {
				var p *page
				if binding == "Redirect" {
					p = b.get(e.base + ssoPath + "?SAMLRequest=" + deflated(tc.doc) + "&RelayState=rs")
				} else {
					p = b.submit(&page{url: mustParse(t, e.base)}, &form{action: ssoPath, values: url.Values{
						"SAMLRequest": {base64.StdEncoding.EncodeToString(tc.doc)}, "RelayState": {"rs"}}})
				}
				if p.status != http.StatusBadRequest || !strings.Contains(p.body, tc.words) || strings.Contains(p.body, "SAMLResponse") {
					t.Fatalf("%s: %d, want the error page with 400 saying %q: %.600s", binding, p.status, tc.words, p.body)
				}
			}
			if e.sessionsOf(t, e.alice) != 1 {
				t.Fatal("a refused LogoutRequest ended the session")
			}
		})
	}
}

func ssoURLOf(e *idp) string { return e.base + ssoPath }

func idOf(t *testing.T, doc []byte) string {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(doc); err != nil {
		t.Fatal(err)
	}
	return d.Root().SelectAttrValue("ID", "")
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
