package loadtest

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"time"
)

// saml-sso: a browser signed in to the load realm signs in to a SAML
// service provider. Each request is the SP's AuthnRequest over
// HTTP-Redirect, which the SSO session answers at once with the POST form
// of a Response signed as a whole and in its assertion.

// The service provider, published as a Shibboleth SP publishes itself.
// Its endpoints are never called: the load test stops at the form.
const (
	samlSPEntityID = "https://sp.loadtest.example/shibboleth"
	samlSPHandler  = "https://sp.loadtest.example/Shibboleth.sso"
	samlACSURL     = samlSPHandler + "/SAML2/POST"
	samlRelayState = "ss:mem:loadtest"
)

// The SAML 2.0 bindings' URNs.
const (
	bindingPOST       = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
	bindingRedirect   = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
	bindingSimpleSign = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST-SimpleSign"
	bindingArtifact   = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact"
	bindingPAOS       = "urn:oasis:names:tc:SAML:2.0:bindings:PAOS"
)

// samlFormField is the field of the POST form that carries the Response.
const samlFormField = "SAMLResponse"

func samlSSOPath(realm string) string { return "/realms/" + realm + "/protocol/saml" }

// prepareSAML registers the service provider in the load realm through
// the admin API, by its metadata, as an administrator pastes a real SP's.
func prepareSAML(ctx context.Context, e *loadEnv) (func(context.Context) error, error) {
	md, err := samlSPMetadata()
	if err != nil {
		return nil, err
	}
	var sp struct{ ID string }
	path := "/admin/realms/" + loadRealm + "/saml-service-providers"
	if err := e.admin(ctx, http.MethodPost, path, map[string]any{"metadata": md, "name": "Load test SP"},
		http.StatusCreated, &sp); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		return e.admin(ctx, http.MethodDelete, path+"/"+sp.ID, nil, http.StatusNoContent, nil)
	}, nil
}

// samlSPMetadata is the SP's metadata: an ACS endpoint per binding (the
// server takes the default HTTP-POST one), single logout by Redirect and
// POST, a signing certificate, and unsigned AuthnRequests, as a stock
// Shibboleth SP publishes.
func samlSPMetadata() (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sp.loadtest.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="%[1]s">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false" WantAssertionsSigned="true">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>%[2]s</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleLogoutService Binding="%[4]s" Location="%[3]s/SLO/Redirect"/>
    <md:SingleLogoutService Binding="%[5]s" Location="%[3]s/SLO/POST"/>
    <md:AssertionConsumerService Binding="%[5]s" Location="%[3]s/SAML2/POST" index="1" isDefault="true"/>
    <md:AssertionConsumerService Binding="%[6]s" Location="%[3]s/SAML2/POST-SimpleSign" index="2"/>
    <md:AssertionConsumerService Binding="%[7]s" Location="%[3]s/SAML2/Artifact" index="3"/>
    <md:AssertionConsumerService Binding="%[8]s" Location="%[3]s/SAML2/ECP" index="4"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`, samlSPEntityID, base64.StdEncoding.EncodeToString(der), samlSPHandler,
		bindingRedirect, bindingPOST, bindingSimpleSign, bindingArtifact, bindingPAOS), nil
}

// samlRequester makes one worker's AuthnRequests, each with a fresh ID,
// reusing its compressor: a flate writer is hundreds of kilobytes, and
// the generator shares the server's cores.
type samlRequester struct {
	dest string // the identity provider's SSO endpoint, as the request names it
	buf  bytes.Buffer
	zw   *flate.Writer
}

func newSAMLRequester(base, realm string) *samlRequester {
	zw, _ := flate.NewWriter(nil, flate.DefaultCompression) // fails only on a bad level
	return &samlRequester{dest: base + samlSSOPath(realm), zw: zw}
}

// path is the HTTP-Redirect binding's URL of a new AuthnRequest: the
// message deflated, base64, in the query, unsigned.
func (s *samlRequester) path(realm string) (string, error) {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	msg := fmt.Sprintf(`<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" AssertionConsumerServiceURL="%s" `+
		`Destination="%s" ID="_%s" IssueInstant="%s" ProtocolBinding="%s" Version="2.0">`+
		`<saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">%s</saml:Issuer>`+
		`<samlp:NameIDPolicy AllowCreate="1"/></samlp:AuthnRequest>`,
		samlACSURL, s.dest, hex.EncodeToString(id), time.Now().UTC().Format(time.RFC3339), bindingPOST, samlSPEntityID)
	s.buf.Reset()
	s.zw.Reset(&s.buf)
	if _, err := s.zw.Write([]byte(msg)); err != nil {
		return "", err
	}
	if err := s.zw.Close(); err != nil {
		return "", err
	}
	q := url.Values{"SAMLRequest": {base64.StdEncoding.EncodeToString(s.buf.Bytes())}, "RelayState": {samlRelayState}}
	return samlSSOPath(realm) + "?" + q.Encode(), nil
}

var errNoSAMLResponse = errors.New("no SAMLResponse in the answer")

// samlWorkers each sign a seeded user in once through the hosted pages,
// coming from the SP, then ask in a loop with the browser's cookies.
func samlWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c := t.client(hc)
	realmURL, err := url.Parse(c.base + "/realms/" + loadRealm + "/")
	if err != nil {
		return nil, err
	}
	requesters, cookies := make([]*samlRequester, n), make([]string, n)
	err = eachWorker(n, func(w int) error {
		requesters[w] = newSAMLRequester(c.base, loadRealm)
		path, err := requesters[w].path(loadRealm)
		if err != nil {
			return err
		}
		b := newLoadBrowser(hc)
		p, err := b.open(ctx, c.base+path, nil)
		if err != nil {
			return err
		}
		if p, err = b.signIn(ctx, p, loadUsername(w%e.users), e.password, nil); err != nil {
			return err
		}
		if p.status != http.StatusOK || !bytes.Contains(p.body, []byte(samlFormField)) {
			return fmt.Errorf("%w after signing in: %s %d %.300s", errNoSAMLResponse, p.url.Path, p.status, p.body)
		}
		cookies[w] = b.cookieHeader(realmURL)
		return nil
	})
	if err != nil {
		return nil, err
	}
	calls := make([]loadCall, n)
	for w := range n {
		header, rq := http.Header{"Cookie": {cookies[w]}, "Accept": {"text/html"}}, requesters[w]
		calls[w] = func(ctx context.Context) (bool, error) {
			path, err := rq.path(loadRealm)
			if err != nil {
				return false, err
			}
			body, shed, err := c.do(ctx, http.MethodGet, path, nil, header, http.StatusOK)
			if err == nil && !shed && !bytes.Contains(body, []byte(samlFormField)) {
				err = fmt.Errorf("%w: %.300s", errNoSAMLResponse, body)
			}
			return shed, err
		}
	}
	return calls, nil
}
