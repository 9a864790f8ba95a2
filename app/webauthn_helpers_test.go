package app

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/descope/virtualwebauthn"
)

// WebAuthn's tests drive the ceremonies with descope/virtualwebauthn: an
// authenticator in Go that answers the server's options as a browser and
// a security key would. WebAuthn needs a domain, so the server's base URL
// is http://localhost:PORT (RP ID localhost).

// newWebAuthnEnv is newAccountEnv on a localhost base URL; realm fields,
// when given, make realm acme.
func newWebAuthnEnv(t *testing.T, realm ...map[string]any) *accountEnv {
	t.Helper()
	clock := &codeflowClock{}
	clock.ns.Store(time.Now().UnixNano())
	s := newOIDCTestServer(t, func(c *Config) {
		c.Now = clock.now
		c.BaseURL = strings.Replace(c.BaseURL, "127.0.0.1", "localhost", 1)
	})
	s.url = strings.Replace(s.url, "127.0.0.1", "localhost", 1)
	body := map[string]any{"name": "acme"}
	for _, fields := range realm {
		maps.Copy(body, fields)
	}
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", body), http.StatusCreated)
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "emailVerified": true,
		"firstName": "Alice", "lastName": "Liddell", "password": codeflowPassword})
	provider, err := oidc.NewProvider(t.Context(), s.issuer("acme"))
	if err != nil {
		t.Fatal(err)
	}
	e := &codeflowEnv{oidcTestServer: s, t: t, clock: clock, provider: provider, aliceID: alice["id"].(string)}
	secret := e.client("cli", map[string]any{"grantTypes": []string{"password", "refresh_token"}})
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config",
		map[string]any{"eventsEnabled": true, "eventsExpiration": 86400, "adminEventsEnabled": false}), http.StatusOK)
	return &accountEnv{codeflowEnv: e, cfg: e.oauth2Config("cli", secret, "openid")}
}

// webauthnKey is a virtual authenticator holding one credential.
type webauthnKey struct {
	auth virtualwebauthn.Authenticator
	cred virtualwebauthn.Credential
}

// newWebAuthnKey is an authenticator with a fresh P-256 credential; opts
// set its flags (user verification, backup). virtualwebauthn writes the
// key's coordinates without their leading zero bytes, which COSE (and
// go-webauthn) refuse, so only keys whose coordinates have none are used.
func newWebAuthnKey(opts virtualwebauthn.AuthenticatorOptions) *webauthnKey {
	for {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		pub, err := priv.PublicKey.Bytes() // 0x04 || X || Y
		if err != nil || pub[1] == 0 || pub[33] == 0 {
			continue
		}
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			panic(err)
		}
		return &webauthnKey{auth: virtualwebauthn.NewAuthenticatorWithOptions(opts),
			cred: virtualwebauthn.NewCredentialWithImportedKey(virtualwebauthn.KeyTypeEC2, der)}
	}
}

// webauthnRP is the relying party as the browser sees it: origin is where
// the page was, which a real browser always reports truthfully.
func (e *accountEnv) webauthnRP(origin string) virtualwebauthn.RelyingParty {
	if origin == "" {
		origin = e.url
	}
	return virtualwebauthn.RelyingParty{Name: "acme", ID: "localhost", Origin: origin}
}

// webauthnPath is a ceremony endpoint of acme.
func webauthnPath(rel string) string { return "/realms/acme/webauthn/" + rel }

// ceremonyID reads an options answer's ceremony ID.
func ceremonyID(t testing.TB, r *testResponse) string {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	id, _ := r.object(t)["ceremonyId"].(string)
	if id == "" {
		t.Fatalf("options without a ceremony ID: %s", r.Body)
	}
	return id
}

// attest answers registration options (the body of an options response)
// with k's credential, from origin ("" for the server's). The
// authenticator keeps the user handle, as a passkey does.
func (e *accountEnv) attest(k *webauthnKey, options []byte, origin string) json.RawMessage {
	e.t.Helper()
	opts, err := virtualwebauthn.ParseAttestationOptions(string(options))
	if err != nil {
		e.t.Fatalf("registration options %s: %v", options, err)
	}
	if k.cred.IsExcludedForAttestation(*opts) {
		e.t.Fatal("the server excluded the credential being registered")
	}
	k.auth.Options.UserHandle = []byte(opts.UserID)
	return json.RawMessage(virtualwebauthn.CreateAttestationResponse(e.webauthnRP(origin), k.auth, k.cred, *opts))
}

// assertWith answers authentication options with k's credential.
func (e *accountEnv) assertWith(k *webauthnKey, options []byte, origin string) json.RawMessage {
	e.t.Helper()
	opts, err := virtualwebauthn.ParseAssertionOptions(string(options))
	if err != nil {
		e.t.Fatalf("authentication options %s: %v", options, err)
	}
	return json.RawMessage(virtualwebauthn.CreateAssertionResponse(e.webauthnRP(origin), k.auth, k.cred, *opts))
}

// registerKey registers k for the owner of token and returns the
// credential as the server answers it.
func (e *accountEnv) registerKey(token string, k *webauthnKey, name string) map[string]any {
	e.t.Helper()
	bearer := "Authorization: Bearer " + token
	r := e.request(http.MethodPost, webauthnPath("register/options"), nil, bearer)
	id := ceremonyID(e.t, r)
	r = e.request(http.MethodPost, webauthnPath("register/verify"), map[string]any{"ceremonyId": id, "name": name,
		"credential": e.attest(k, r.Body, "")}, bearer)
	mustStatus(e.t, r, http.StatusCreated)
	return r.object(e.t)
}

// authenticate runs an authentication ceremony through the API: options
// with body, k's answer, and the verify response.
func (e *accountEnv) authenticate(k *webauthnKey, body any) *testResponse {
	e.t.Helper()
	r := e.request(http.MethodPost, webauthnPath("authenticate/options"), body)
	id := ceremonyID(e.t, r)
	return e.request(http.MethodPost, webauthnPath("authenticate/verify"), map[string]any{"ceremonyId": id,
		"credential": e.assertWith(k, r.Body, "")})
}

// postJSON sends a JSON request with b's cookies.
func (b *codeflowBrowser) postJSON(u string, body any, headers ...string) *codeflowPage {
	b.t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		b.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(data))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return b.do(req)
}

// webauthnForm is p's form that runs ceremony kind (data-webauthn): the
// one form with a ceremonyId field.
func webauthnForm(t *testing.T, p *codeflowPage, kind string) *codeflowForm {
	t.Helper()
	if !strings.Contains(string(p.body), `data-webauthn="`+kind+`"`) {
		t.Fatalf("page without a %s ceremony: status %d body %s", kind, p.status, p.body)
	}
	var found []*codeflowForm
	for _, f := range p.forms(t) {
		if f.fields.Has("ceremonyId") {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d ceremony forms on the page, want 1: %s", len(found), p.body)
	}
	return found[0]
}
