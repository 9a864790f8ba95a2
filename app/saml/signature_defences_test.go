package saml_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// signWith is el with an enveloped signature of keys, by method over a
// digest of hash, appended as el's last child.
func signWith(t *testing.T, keys *testKeyPair, el *etree.Element, method string, hash crypto.Hash) *etree.Element {
	t.Helper()
	ctx := dsig.NewDefaultSigningContext(dsig.TLSCertKeyStore(tls.Certificate{
		Certificate: [][]byte{keys.cert.Raw}, PrivateKey: keys.key, Leaf: keys.cert}))
	ctx.Hash = hash
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	if err := ctx.SetSignatureMethod(method); err != nil {
		t.Fatal(err)
	}
	signed, err := ctx.SignEnveloped(el)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// Checks of signed messages that are this server's own, beyond what
// goxmldsig refuses: each forged request here passes the library's
// verification, and is refused for the one reason the test names.
func TestSignatureDefences(t *testing.T) {
	e := newIdP(t)
	signing := newSP(t, e, spOptions{sign: true})
	plain := newSP(t, e, spOptions{})
	formType := "Content-Type: application/x-www-form-urlencoded"

	for _, tc := range []struct {
		name  string
		el    func() *etree.Element
		words string
	}{
		// The POST binding refuses SHA-1 as the Redirect binding does.
		{"RSA-SHA1 signature", func() *etree.Element {
			return signWith(t, signing.keys, signing.authnRequest(t).Element(), dsig.RSASHA1SignatureMethod, crypto.SHA256)
		}, "SignatureMethod http://www.w3.org/2000/09/xmldsig#rsa-sha1 is not accepted"},
		{"SHA-1 digest", func() *etree.Element {
			return sha1Digest(t, signing.keys, signing.authnRequest(t).Element())
		}, "DigestMethod http://www.w3.org/2000/09/xmldsig#sha1 is not accepted"},
		// A second signature, over something else, within the signed
		// request: the library verifies the one that covers the root and
		// lets the other be.
		{"a second signature inside Extensions", func() *etree.Element {
			decoy := signWith(t, signing.keys, signing.authnRequest(t).Element(), dsig.RSASHA256SignatureMethod, crypto.SHA256)
			el := signing.authnRequest(t).Element()
			ext := etree.NewElement("samlp:Extensions")
			ext.AddChild(decoy.FindElement("./Signature").Copy())
			el.InsertChildAt(el.FindElement("./Issuer").Index()+1, ext)
			return signWith(t, signing.keys, el, dsig.RSASHA256SignatureMethod, crypto.SHA256)
		}, "one signature, a child of its root element"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustRefusedPage(t, e.Request(http.MethodPost, ssoPath, postForm(tc.el(), ""), formType), http.StatusBadRequest, tc.words)
		})
	}

	// XML that the encoding/xml parser reads one way and another parser
	// may read another is refused before anything is read of it: here a
	// directive with a quote that encoding/xml ends at the next '>', where
	// a parser that honours the quote reads on.
	t.Run("ambiguous XML", func(t *testing.T) {
		doc := etree.NewDocument()
		doc.SetRoot(plain.authnRequest(t).Element())
		raw, err := doc.WriteToBytes()
		if err != nil {
			t.Fatal(err)
		}
		ambiguous := bytes.Replace(raw, []byte("</saml:Issuer>"), []byte(`</saml:Issuer><!">`), 1)
		if bytes.Equal(ambiguous, raw) {
			t.Fatalf("no Issuer in %s", raw)
		}
		mustRefusedPage(t, e.Request(http.MethodPost, ssoPath, postRaw(ambiguous, ""), formType), http.StatusBadRequest,
			"the XML reads differently when parsed again")
		// The same request without the directive is taken.
		if r := e.Request(http.MethodPost, ssoPath, postRaw(raw, ""), formType); r.Status != http.StatusSeeOther {
			t.Fatalf("the request without the directive: %d %.300s", r.Status, r.Body)
		}
	})
}

// sha1Digest is el signed by keys with RSA-SHA256 over a SignedInfo whose
// reference has a SHA-1 digest (goxmldsig signs with one hash for both,
// so the SignedInfo is signed again here).
func sha1Digest(t *testing.T, keys *testKeyPair, el *etree.Element) *etree.Element {
	t.Helper()
	signed := signWith(t, keys, el, dsig.RSASHA1SignatureMethod, crypto.SHA1)
	sig := signed.FindElement("./Signature")
	info := sig.FindElement("./SignedInfo")
	info.FindElement("./SignatureMethod").CreateAttr("Algorithm", dsig.RSASHA256SignatureMethod)
	detached := info.Copy()
	detached.CreateAttr("xmlns:"+info.Space, dsig.Namespace)
	canonical, err := dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("").Canonicalize(detached)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canonical)
	value, err := rsa.SignPKCS1v15(rand.Reader, keys.key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig.FindElement("./SignatureValue").SetText(base64.StdEncoding.EncodeToString(value))
	return signed
}
