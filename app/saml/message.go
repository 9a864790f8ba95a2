package saml

import (
	"bytes"
	"compress/flate"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/beevik/etree"
	xrv "github.com/mattermost/xml-roundtrip-validator"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/idenplane/idenplane/app/apperr"
)

// Requests and logout messages reach /protocol/saml over two bindings:
// HTTP-Redirect (the message deflated, base64 and in the query, its
// signature over the query's own bytes) and HTTP-POST (base64 in a form,
// the signature inside the XML). Both are read with limits on the encoded
// and the inflated size (no deflate bomb), no document type declaration
// (no entity expansion), and a round-trip check of the XML (the
// encoding/xml parser's namespace ambiguities that signature wrapping
// relies on are refused).

const (
	bindingRedirect = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
	bindingPOST     = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"

	maxEncodedMessage = 64 << 10  // base64 text of a message
	maxMessage        = 128 << 10 // the XML, inflated
	maxRelayState     = 80        // saml-bindings §3.4.3
)

// message is a SAML protocol message as received.
type message struct {
	binding    string
	xml        []byte
	root       *etree.Element
	relayState string
	hasRelay   bool
	// Redirect binding: the signature over the query, when one came.
	sigAlg    string
	signature []byte
	signed    string // the octets signed: SAMLRequest=…&RelayState=…&SigAlg=…
	param     string // SAMLRequest or SAMLResponse
}

func errBadMessage(format string, args ...any) error {
	return apperr.New(http.StatusBadRequest, apperr.CodeInvalidRequest, "SAML request: "+format, args...)
}

// readMessage reads the SAMLRequest (or SAMLResponse, param) of a request.
func readMessage(r *http.Request, param string) (*message, error) {
	m := &message{param: param}
	var encoded string
	switch r.Method {
	case http.MethodGet:
		m.binding = bindingRedirect
		q := r.URL.Query()
		if len(q[param]) != 1 || len(q["RelayState"]) > 1 || len(q["SigAlg"]) > 1 || len(q["Signature"]) > 1 {
			return nil, errBadMessage("%s must be given once, and RelayState, SigAlg and Signature at most once", param)
		}
		encoded = q.Get(param)
		m.relayState, m.hasRelay = q.Get("RelayState"), q.Has("RelayState")
		if q.Has("Signature") {
			sig, err := base64.StdEncoding.DecodeString(q.Get("Signature"))
			if err != nil || !q.Has("SigAlg") {
				return nil, errBadMessage("the Signature must be base64, with its SigAlg")
			}
			m.sigAlg, m.signature, m.signed = q.Get("SigAlg"), sig, signedQuery(r.URL.RawQuery, param)
		}
	case http.MethodPost:
		m.binding = bindingPOST
		if err := r.ParseForm(); err != nil {
			return nil, errBadMessage("the form cannot be read")
		}
		if len(r.PostForm[param]) != 1 || len(r.PostForm["RelayState"]) > 1 {
			return nil, errBadMessage("%s must be posted once, and RelayState at most once", param)
		}
		encoded = r.PostForm.Get(param)
		m.relayState, m.hasRelay = r.PostForm.Get("RelayState"), r.PostForm.Has("RelayState")
	default:
		return nil, errBadMessage("method %s", r.Method)
	}
	if len(m.relayState) > maxRelayState {
		return nil, errBadMessage("RelayState is longer than %d bytes", maxRelayState)
	}
	if len(encoded) > maxEncodedMessage {
		return nil, errBadMessage("%s is longer than %d bytes", param, maxEncodedMessage)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(encoded), ""))
	if err != nil || len(raw) == 0 {
		return nil, errBadMessage("%s is not base64", param)
	}
	if m.binding == bindingRedirect {
		if raw, err = inflate(raw); err != nil {
			return nil, err
		}
	}
	if len(raw) > maxMessage {
		return nil, errBadMessage("the message is larger than %d bytes", maxMessage)
	}
	m.xml = raw
	if m.root, err = parseXML(raw); err != nil {
		return nil, err
	}
	return m, nil
}

// inflate undoes the Redirect binding's DEFLATE, stopping past maxMessage.
func inflate(b []byte) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(b)), maxMessage+1))
	if err != nil {
		return nil, errBadMessage("the message is not DEFLATE-compressed")
	}
	if len(out) > maxMessage {
		return nil, errBadMessage("the message inflates past %d bytes", maxMessage)
	}
	return out, nil
}

var errAmbiguousXML = errBadMessage("the XML reads differently when parsed again (ambiguous names, namespaces or markup)")

// parseXML reads a message's XML: no DTD, and one the encoding/xml round
// trip leaves unchanged.
func parseXML(b []byte) (*etree.Element, error) {
	if err := refuseDTD(b); err != nil {
		return nil, errBadMessage("%v", err)
	}
	if err := xrv.Validate(bytes.NewReader(b)); errors.As(err, new(xrv.XMLValidationError)) {
		return nil, errAmbiguousXML
	} else if err != nil {
		return nil, errBadMessage("the XML is malformed")
	}
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = false
	if err := doc.ReadFromBytes(b); err != nil || doc.Root() == nil {
		return nil, errBadMessage("the XML is malformed")
	}
	return doc.Root(), nil
}

// signedQuery is what a Redirect binding signature covers: the parameters
// SAMLRequest (or SAMLResponse), RelayState and SigAlg as they were
// URL-encoded in the query, in that order (saml-bindings §3.4.4.1).
func signedQuery(raw, param string) string {
	vals := map[string]string{}
	for part := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(part, "=")
		// Keyed as the query's reader decodes them, so that a parameter
		// spelled another way (Relay%53tate) is one the signature covers,
		// not one read beside it.
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if _, seen := vals[k]; !seen {
			vals[k] = v
		}
	}
	out := param + "=" + vals[param]
	if v, ok := vals["RelayState"]; ok {
		out += "&RelayState=" + v
	}
	return out + "&SigAlg=" + vals["SigAlg"]
}

// signatureMethods are the signature algorithms a request may be signed
// with, over either binding, and digestMethods the digests an XML
// signature's references may use. SHA-1 is refused: saml2int requires
// SHA-256 or better.
var signatureMethods = map[string]crypto.Hash{
	dsig.RSASHA256SignatureMethod:   crypto.SHA256,
	dsig.RSASHA384SignatureMethod:   crypto.SHA384,
	dsig.RSASHA512SignatureMethod:   crypto.SHA512,
	dsig.ECDSASHA256SignatureMethod: crypto.SHA256,
	dsig.ECDSASHA384SignatureMethod: crypto.SHA384,
	dsig.ECDSASHA512SignatureMethod: crypto.SHA512,
}

var digestMethods = map[string]bool{
	"http://www.w3.org/2001/04/xmlenc#sha256":       true,
	"http://www.w3.org/2001/04/xmldsig-more#sha384": true,
	"http://www.w3.org/2001/04/xmlenc#sha512":       true,
}

var errBadSignature = errBadMessage("the signature does not verify with the service provider's certificate")

// verifyRedirect checks the query signature of a Redirect message.
func verifyRedirect(m *message, cert *x509.Certificate) error {
	h, ok := signatureMethods[m.sigAlg]
	if !ok {
		return errBadMessage("SigAlg %s is not accepted (RSA or ECDSA with SHA-256 or better)", m.sigAlg)
	}
	digest := h.New()
	digest.Write([]byte(m.signed))
	sum := digest.Sum(nil)
	switch pub := cert.PublicKey.(type) {
	case *rsa.PublicKey:
		if strings.Contains(m.sigAlg, "rsa") && rsa.VerifyPKCS1v15(pub, h, sum, m.signature) == nil {
			return nil
		}
	case *ecdsa.PublicKey:
		if strings.Contains(m.sigAlg, "ecdsa") && ecdsa.VerifyASN1(pub, sum, m.signature) {
			return nil
		}
	}
	return errBadSignature
}

// verifyEnveloped checks the enveloped signature of a POST message and
// returns the element it signs, which must be the message's root: what is
// read afterwards is that element as the signature covers it, and no
// other (no signature wrapping). The library looks for a signature
// anywhere in the document; here the one signature there may be is the
// root's own child.
func verifyEnveloped(root *etree.Element, cert *x509.Certificate, now time.Time) (*etree.Element, error) {
	sigs := signaturesIn(root, nil)
	if len(sigs) == 0 {
		return nil, errNoSignature
	}
	if len(sigs) > 1 || sigs[0].Parent() != root {
		return nil, errMisplacedSignature
	}
	if err := checkMethods(sigs[0]); err != nil {
		return nil, err
	}
	ctx := dsig.NewDefaultValidationContext(&dsig.MemoryX509CertificateStore{Roots: []*x509.Certificate{cert}})
	ctx.Clock = dsig.NewFakeClockAt(now)
	signed, err := ctx.Validate(root)
	if err != nil {
		return nil, errBadSignature
	}
	return signed, nil
}

var (
	errNoSignature        = errBadMessage("the service provider must sign its requests, and this one is unsigned")
	errMisplacedSignature = errBadMessage("the message must have one signature, a child of its root element, and no other")
)

// checkMethods refuses an XML signature whose SignatureMethod or any
// DigestMethod is not accepted (every one is looked at, whichever the
// library reads).
func checkMethods(sig *etree.Element) error {
	methods := sig.FindElements(".//SignatureMethod")
	if len(methods) == 0 {
		return errBadSignature
	}
	for _, m := range methods {
		if alg := m.SelectAttrValue("Algorithm", ""); signatureMethods[alg] == 0 {
			return errBadMessage("SignatureMethod %s is not accepted (RSA or ECDSA with SHA-256 or better)", alg)
		}
	}
	for _, d := range sig.FindElements(".//DigestMethod") {
		if alg := d.SelectAttrValue("Algorithm", ""); !digestMethods[alg] {
			return errBadMessage("DigestMethod %s is not accepted (SHA-256 or better)", alg)
		}
	}
	return nil
}

// signaturesIn appends the ds:Signature elements of el's tree to out.
func signaturesIn(el *etree.Element, out []*etree.Element) []*etree.Element {
	for _, c := range el.ChildElements() {
		if c.Tag == "Signature" && c.NamespaceURI() == dsig.Namespace {
			out = append(out, c)
		}
		out = signaturesIn(c, out)
	}
	return out
}
