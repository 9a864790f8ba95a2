package saml

import (
	"bytes"
	"compress/flate"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// redirectURL is target with msg in its query by the HTTP-Redirect
// binding (saml-bindings §3.4.4): the XML without a signature element,
// deflated and base64, then RelayState and SigAlg, and the RSA-SHA256
// Signature over those three parameters as they stand in the query.
func redirectURL(key *signingKey, target, param string, msg *etree.Element, relayState string) (string, error) {
	doc := etree.NewDocument()
	doc.SetRoot(msg)
	raw, err := doc.WriteToBytes()
	if err != nil {
		return "", err
	}
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, flate.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(raw); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	q := param + "=" + url.QueryEscape(base64.StdEncoding.EncodeToString(z.Bytes()))
	if relayState != "" {
		q += "&RelayState=" + url.QueryEscape(relayState)
	}
	q += "&SigAlg=" + url.QueryEscape(dsig.RSASHA256SignatureMethod)
	sum := crypto.SHA256.New()
	sum.Write([]byte(q))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key.key, crypto.SHA256, sum.Sum(nil))
	if err != nil {
		return "", fmt.Errorf("sign SAML redirect: %w", err)
	}
	q += "&Signature=" + url.QueryEscape(base64.StdEncoding.EncodeToString(sig))
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + q, nil
}
