package main

// The console's walks of federation in a real browser: an LDAP directory
// (a real slapd) added, its connection tested and synced on its page, its people seen
// among the users; a SAML service provider added from the metadata it
// publishes (crewjam/saml's samlsp). axe-core checks every page.

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/xml"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	crewsaml "github.com/crewjam/saml"
	"github.com/crewjam/saml/samlsp"

	"github.com/idenplane/idenplane/app/apptest"
)

func TestBrowserConsoleFederation(t *testing.T) {
	e := newBrowserEnv(t)
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "pw"))
	e.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "ada", "email": "ada@example.test",
		"password": browserPassword}, http.StatusCreated, nil)
	e.realm("corp", nil)
	b := e.browser()
	browserConsoleSignIn(e, b)

	// The directory, tested and synced from its row.
	directories := e.srv.base + "/console/realms/corp/user-federation"
	b.open("console-ldap", directories)
	b.click("console-ldap-new", "New")
	b.fill("Name", "corp-directory")
	b.fill("Connection URL", d.URL)
	b.fill("Users DN", d.PeopleDN)
	b.fill("Bind DN", d.AdminDN)
	b.fill("Bind password", d.AdminPassword)
	b.click("console-ldap-created", "Create")
	b.mustShow("Created.", d.URL)
	b.click("console-ldap-page", "corp-directory")
	b.click("console-ldap-tested", "Test the connection")
	if ok, users := b.stat("Connected"), b.stat("Users found"); ok != "✓" || users != "2" {
		t.Errorf("the connection's test: success %q, users %q; page:\n%s", ok, users, b.text())
	}
	b.click("console-ldap-synced", "Sync now")
	if created, failed := b.stat("Users created"), b.stat("Entries failed"); created != "2" || failed != "0" {
		t.Errorf("the sync: %q created, %q failed; page:\n%s", created, failed, b.text())
	}
	b.open("console-ldap-users", e.srv.base+"/console/realms/corp/users")
	b.mustShow("ann", "ann@example.org", "bob", "bob@example.org")

	// A service provider from its metadata, as samlsp publishes it: an
	// endpoint a binding, and AuthnRequestsSigned="false".
	metadata, entityID, acs := browserSPMetadata(e, "corp")
	sps := e.srv.base + "/console/realms/corp/saml-service-providers"
	b.open("console-saml", sps)
	b.click("console-saml-new", "New")
	b.paste("Metadata", `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example"/>`)
	if status := b.click("", "Create"); status != http.StatusUnprocessableEntity {
		t.Fatalf("metadata without a service provider: %d", status)
	}
	if msg, invalid := b.errorOf("Metadata"); msg == "" || !invalid {
		t.Errorf("the metadata's refusal is not at its field: %q %v", msg, invalid)
	}
	b.paste("Metadata", metadata)
	b.fill("Name", "Wiki")
	b.click("console-saml-created", "Create")
	b.mustShow("Created.", entityID, "Wiki", acs)
	var stored []struct {
		EntityID       string `json:"entityId"`
		ACSURL         string `json:"acsUrl"`
		Encryption     string `json:"encryptionCertificate"`
		RequestsSigned bool   `json:"requestsSigned"`
	}
	e.admin(http.MethodGet, "/admin/realms/corp/saml-service-providers", nil, http.StatusOK, &stored)
	if len(stored) != 1 || stored[0].EntityID != entityID || stored[0].ACSURL != acs || stored[0].Encryption == "" ||
		stored[0].RequestsSigned {
		t.Errorf("stored %+v, want the metadata's entity ID, POST endpoint and encryption certificate, requests unsigned", stored)
	}
}

// browserSPMetadata is the metadata of a service provider of realm as
// crewjam/saml's samlsp publishes it, its entity ID and its POST
// assertion consumer service.
func browserSPMetadata(e *browserEnv, realm string) (metadata, entityID, acs string) {
	e.t.Helper()
	var idp crewsaml.EntityDescriptor
	if err := xml.Unmarshal(e.srv.must(http.MethodGet, "/realms/"+realm+"/protocol/saml/descriptor", "", nil, http.StatusOK),
		&idp); err != nil {
		e.t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		e.t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "wiki"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		e.t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	root, _ := url.Parse("https://wiki.example")
	sp, err := samlsp.New(samlsp.Options{URL: *root, Key: key, Certificate: cert, IDPMetadata: &idp})
	if err != nil {
		e.t.Fatal(err)
	}
	md := sp.ServiceProvider.Metadata()
	if signed := md.SPSSODescriptors[0].AuthnRequestsSigned; signed == nil || *signed {
		e.t.Fatalf("samlsp's metadata asks to sign requests: %v", signed)
	}
	data, err := xml.MarshalIndent(md, "", "  ")
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data), md.EntityID, sp.ServiceProvider.AcsURL.String()
}

// paste puts value into the field labelled label at once, as a paste
// does: typing a whole document key by key is slow and proves nothing more.
func (b *browserTab) paste(label, value string) {
	b.t.Helper()
	id := b.field(label)
	b.do("paste into "+label, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%s).value = %s`,
		jsString(string(id)), jsString(value))))
}
