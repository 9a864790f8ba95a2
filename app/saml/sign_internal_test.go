package saml

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"testing"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
)

func testSigningKey(t *testing.T) (*signingKey, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &signingKey{id: "k", key: key, certBase64: base64.StdEncoding.EncodeToString(der)}, cert
}

// The SignedInfo that is signed is the one sent: canonicalSignedInfo is
// what exclusive canonicalization makes of signatureElement's SignedInfo,
// as a verifier reads it from the message.
func TestCanonicalSignedInfo(t *testing.T) {
	sig := signatureElement("_id", "ZGlnZXN0", "c2lnbmF0dXJl", "Y2VydA==")
	doc := etree.NewDocument()
	doc.SetRoot(sig)
	raw, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	back := etree.NewDocument()
	if err := back.ReadFromBytes(raw); err != nil {
		t.Fatal(err)
	}
	info := back.Root().SelectElement("SignedInfo").Copy()
	info.CreateAttr("xmlns:ds", nsDSig) // in scope from the Signature
	got, err := dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("").Canonicalize(info)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(canonicalSignedInfo("_id", "ZGlnZXN0")); string(got) != want {
		t.Fatalf("canonical SignedInfo\n%s\nwant\n%s", got, want)
	}
}

// A signed assertion, as sent, passes goxmldsig's verification (what
// crewjam/saml's service provider runs), with the signature after the
// Issuer; a changed one fails it.
func TestSignEnvelopedVerifies(t *testing.T) {
	key, cert := testSigningKey(t)
	a := &crewsaml.Assertion{ID: "_a1", IssueInstant: time.Now().UTC(), Version: "2.0",
		Issuer: crewsaml.Issuer{Format: formatEntity, Value: "https://idp.test/realms/acme"},
		AttributeStatements: []crewsaml.AttributeStatement{{Attributes: []crewsaml.Attribute{{Name: "groups",
			NameFormat: attrNameBasic, Values: []crewsaml.AttributeValue{{Type: "xs:string", Value: "<admins> & co"}}}}}}}
	el := a.Element()
	if err := signEnveloped(key, el); err != nil {
		t.Fatal(err)
	}
	if kids := el.ChildElements(); kids[0].Tag != "Issuer" || kids[1].Tag != "Signature" {
		t.Fatalf("children %s, %s: want the signature after the Issuer", kids[0].Tag, kids[1].Tag)
	}
	doc := etree.NewDocument()
	doc.SetRoot(el)
	raw, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}

	verify := func(xml string) error {
		d := etree.NewDocument()
		if err := d.ReadFromString(xml); err != nil {
			return err
		}
		v := dsig.NewDefaultValidationContext(&dsig.MemoryX509CertificateStore{Roots: []*x509.Certificate{cert}})
		v.Clock = dsig.NewFakeClockAt(time.Now())
		_, err := v.Validate(d.Root())
		return err
	}
	if err := verify(raw); err != nil {
		t.Fatalf("signed assertion does not verify: %v\n%s", err, raw)
	}
	back := etree.NewDocument()
	if err := back.ReadFromString(raw); err != nil {
		t.Fatal(err)
	}
	tampered := back.FindElement("//AttributeValue")
	tampered.SetText("others")
	changed, _ := back.WriteToString()
	if err := verify(changed); err == nil {
		t.Fatal("a changed assertion verifies")
	}
}
