package saml

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
)

// What is read of a POST message is the element its signature covers, as
// the library read it back from the bytes it verified, not the tree as it
// came: here a comment within a signed SessionIndex (comments are outside
// the digest) is gone from what verifyEnveloped returns, and so is the
// signature.
func TestVerifyEnvelopedReturnsTheSignedElement(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	req := crewsaml.LogoutRequest{ID: "_req", Version: "2.0", IssueInstant: time.Now().UTC(),
		Issuer:       &crewsaml.Issuer{Value: "https://sp.test"},
		NameID:       &crewsaml.NameID{Value: "alice@example.test"},
		SessionIndex: &crewsaml.SessionIndex{Value: "_index-x"}}
	ctx := dsig.NewDefaultSigningContext(dsig.TLSCertKeyStore(tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}))
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	signed, err := ctx.SignEnveloped(req.Element())
	if err != nil {
		t.Fatal(err)
	}
	doc := etree.NewDocument()
	doc.SetRoot(signed)
	raw, _ := doc.WriteToBytes()
	forged := bytes.Replace(raw, []byte("_index-x<"), []byte("_index<!---->-x<"), 1)
	if bytes.Equal(forged, raw) {
		t.Fatalf("no SessionIndex in %s", raw)
	}
	root, err := parseXML(forged)
	if err != nil {
		t.Fatal(err)
	}
	got, err := verifyEnveloped(root, cert, time.Now())
	if err != nil {
		t.Fatalf("the library refuses the forged message: %v", err)
	}
	if len(signaturesIn(got, nil)) != 0 {
		t.Fatal("what is read still has the signature: it is the message as it came")
	}
	index := got.FindElement("./SessionIndex")
	for _, tok := range index.Child {
		if _, ok := tok.(*etree.Comment); ok {
			t.Fatal("what is read has the comment the signature does not cover: it is the message as it came")
		}
	}
	if index.Text() != "_index-x" {
		t.Fatalf("SessionIndex %q", index.Text())
	}
}

// The octets a Redirect signature is checked over carry every parameter
// the message is read with: a RelayState smuggled in under an escaped
// name (Relay%53tate), which the query's reader takes for RelayState, is
// in them, so a signature made without it fails.
func TestSignedQueryReadsKeysAsDecoded(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"SAMLRequest=abc&SigAlg=alg&Signature=sig", "SAMLRequest=abc&SigAlg=alg"},
		{"SAMLRequest=abc&SigAlg=alg&Signature=sig&Relay%53tate=evil", "SAMLRequest=abc&RelayState=evil&SigAlg=alg"},
		{"SAML%52equest=abc&RelayState=r%2F1&SigAlg=alg", "SAMLRequest=abc&RelayState=r%2F1&SigAlg=alg"},
	} {
		if got := signedQuery(tc.raw, "SAMLRequest"); got != tc.want {
			t.Errorf("signedQuery(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}
