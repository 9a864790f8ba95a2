package saml

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// The one XML signature the identity provider makes: enveloped, RSA-SHA256
// over SignedInfo, whose one Reference is the signed element by its ID,
// its SHA-256 digest over the element's exclusive canonical form.
const (
	algExcC14N   = "http://www.w3.org/2001/10/xml-exc-c14n#"
	algEnveloped = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
	algSHA256    = "http://www.w3.org/2001/04/xmlenc#sha256"
	algRSASHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
)

// signEnveloped signs el and puts the signature after its Issuer, where
// the schema has it in every message the identity provider signs; the
// enveloped-signature transform leaves it out of the digest.
//
// goxmldsig's SigningContext is not used: it canonicalizes SignedInfo
// through namespace contexts it builds for any canonicalization, copies
// the element, and leaves the signature to be placed by rebuilding the
// message. Here SignedInfo is written in its canonical form at once (its
// content is fixed but for the ID and the digest), and signed as written.
func signEnveloped(key *signingKey, el *etree.Element) error {
	id := el.SelectAttrValue("ID", "")
	if id == "" {
		return errors.New("sign SAML message: the element has no ID")
	}
	issuer := -1
	for _, c := range el.ChildElements() {
		if c.Tag == "Issuer" && c.NamespaceURI() == nsAssertion {
			issuer = c.Index()
			break
		}
	}
	if issuer < 0 {
		return errors.New("sign SAML message: the element has no Issuer")
	}
	// A copy: the transform keeps only the namespace declarations used
	// visibly, and a QName in an attribute value or in text may still need
	// one in the message sent.
	canonical, err := dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("").Canonicalize(el.Copy())
	if err != nil {
		return fmt.Errorf("canonicalize SAML message: %w", err)
	}
	digest := sha256.Sum256(canonical)
	digestValue := base64.StdEncoding.EncodeToString(digest[:])
	sum := sha256.Sum256(canonicalSignedInfo(id, digestValue))
	value, err := rsa.SignPKCS1v15(nil, key.key, crypto.SHA256, sum[:])
	if err != nil {
		return fmt.Errorf("sign SAML message: %w", err)
	}
	el.InsertChildAt(issuer+1, signatureElement(id, digestValue, base64.StdEncoding.EncodeToString(value), key.certBase64))
	return nil
}

// canonicalSignedInfo is the exclusive canonical form of the SignedInfo
// signatureElement writes: the ds namespace declared on it alone, empty
// elements as start and end tags, no whitespace. The ID is an NCName and
// the digest base64, so neither needs escaping.
func canonicalSignedInfo(id, digestValue string) []byte {
	return []byte(`<ds:SignedInfo xmlns:ds="` + nsDSig + `">` +
		`<ds:CanonicalizationMethod Algorithm="` + algExcC14N + `"></ds:CanonicalizationMethod>` +
		`<ds:SignatureMethod Algorithm="` + algRSASHA256 + `"></ds:SignatureMethod>` +
		`<ds:Reference URI="#` + id + `">` +
		`<ds:Transforms>` +
		`<ds:Transform Algorithm="` + algEnveloped + `"></ds:Transform>` +
		`<ds:Transform Algorithm="` + algExcC14N + `"></ds:Transform>` +
		`</ds:Transforms>` +
		`<ds:DigestMethod Algorithm="` + algSHA256 + `"></ds:DigestMethod>` +
		`<ds:DigestValue>` + digestValue + `</ds:DigestValue>` +
		`</ds:Reference>` +
		`</ds:SignedInfo>`)
}

// signatureElement is the ds:Signature of the element id, whose SignedInfo
// canonicalSignedInfo gives in canonical form, with the certificate in
// KeyInfo.
func signatureElement(id, digestValue, signatureValue, certBase64 string) *etree.Element {
	sig := etree.NewElement("ds:Signature")
	sig.CreateAttr("xmlns:ds", nsDSig)
	info := sig.CreateElement("ds:SignedInfo")
	info.CreateElement("ds:CanonicalizationMethod").CreateAttr("Algorithm", algExcC14N)
	info.CreateElement("ds:SignatureMethod").CreateAttr("Algorithm", algRSASHA256)
	ref := info.CreateElement("ds:Reference")
	ref.CreateAttr("URI", "#"+id)
	transforms := ref.CreateElement("ds:Transforms")
	transforms.CreateElement("ds:Transform").CreateAttr("Algorithm", algEnveloped)
	transforms.CreateElement("ds:Transform").CreateAttr("Algorithm", algExcC14N)
	ref.CreateElement("ds:DigestMethod").CreateAttr("Algorithm", algSHA256)
	ref.CreateElement("ds:DigestValue").SetText(digestValue)
	sig.CreateElement("ds:SignatureValue").SetText(signatureValue)
	sig.CreateElement("ds:KeyInfo").CreateElement("ds:X509Data").CreateElement("ds:X509Certificate").SetText(certBase64)
	return sig
}
