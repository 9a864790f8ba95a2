package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/xml"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	crewsaml "github.com/crewjam/saml"
	"github.com/crewjam/saml/samlsp"
)

// TestBrowserSAML: alice, with an authenticator app, opens an application
// that signs people in with SAML (crewjam/saml's samlsp): she is sent to
// the realm's sign-in, gives her password and a code, and the SAML
// response's form takes her back to the application, signed in.
func TestBrowserSAML(t *testing.T) {
	e := newBrowserEnv(t)
	browserAcme(e)
	enrol := e.browser()
	key, enrolledAt := browserEnrolTOTP(e, enrol, false)

	var idpMetadata crewsaml.EntityDescriptor
	if err := xml.Unmarshal(e.srv.must(http.MethodGet, "/realms/acme/protocol/saml/descriptor", "", nil, http.StatusOK),
		&idpMetadata); err != nil {
		t.Fatal(err)
	}
	spKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "wiki"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &spKey.PublicKey, spKey)
	if err != nil {
		t.Fatal(err)
	}
	spCert, _ := x509.ParseCertificate(der)
	mux := http.NewServeMux()
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)
	root, _ := url.Parse(app.URL)
	sp, err := samlsp.New(samlsp.Options{URL: *root, Key: spKey, Certificate: spCert, IDPMetadata: &idpMetadata})
	if err != nil {
		t.Fatal(err)
	}
	sp.ServiceProvider.AuthnNameIDFormat = crewsaml.UnspecifiedNameIDFormat // the registration's format applies
	mux.Handle("/saml/", sp)
	mux.Handle("/app", sp.RequireAccount(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, _ := samlsp.SessionFromContext(r.Context()).(samlsp.JWTSessionClaims)
		_ = json.NewEncoder(w).Encode(map[string]any{"nameID": claims.Subject, "mail": claims.Attributes.Get("mail")})
	})))
	spMetadata, err := xml.Marshal(sp.ServiceProvider.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	e.admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{"metadata": string(spMetadata),
		"name": "Wiki", "nameIdFormat": "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
		"attributeStatements": map[string]any{"mail": "email"}}, http.StatusCreated, nil)

	b := e.browser()
	b.open("saml-login", app.URL+"/app")
	if !strings.HasPrefix(b.location(), e.srv.base+"/realms/acme/signin/") {
		t.Fatalf("the application sent the browser to %s, want the realm's sign-in", b.location())
	}
	b.signIn("saml-login-password", "alice", browserPassword)
	if h := b.heading(); h != "Two-factor authentication" {
		t.Fatalf("after the password: heading %q, want the code page", h)
	}
	b.fill("Authentication code", browserTOTPCode(t, key, enrolledAt.Add(30*time.Second)))
	// The code leads to the page that posts the SAML response, which
	// submits itself: the browser ends at the application.
	ctx, cancel := b.bounded()
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(`//button[normalize-space(.)="Verify"]`)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(browserWaitBound)
	for !strings.HasPrefix(b.location(), app.URL+"/app") {
		if time.Now().After(deadline) {
			t.Fatalf("the browser stayed at %s: %s", b.location(), b.text())
		}
		time.Sleep(100 * time.Millisecond)
	}
	var got struct {
		NameID string `json:"nameID"`
		Mail   string `json:"mail"`
	}
	if err := json.Unmarshal([]byte(b.text()), &got); err != nil || got.NameID != "alice" || got.Mail != "alice@example.test" {
		t.Fatalf("the application shows %q (%v)", b.text(), err)
	}
}
