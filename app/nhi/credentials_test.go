package nhi_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
)

// credentialJSON is a credential as the API answers it.
type credentialJSON struct {
	ID                string          `json:"id"`
	Type              string          `json:"type"`
	Name              string          `json:"name"`
	Prefix            string          `json:"prefix"`
	KeyID             string          `json:"keyId"`
	PublicKey         json.RawMessage `json:"publicKey"`
	Scopes            []string        `json:"scopes"`
	State             string          `json:"state"`
	CreatedTimestamp  int64           `json:"createdTimestamp"`
	ExpiresTimestamp  *int64          `json:"expiresTimestamp"`
	RevokedTimestamp  *int64          `json:"revokedTimestamp"`
	LastUsedTimestamp *int64          `json:"lastUsedTimestamp"`
	ReplacedBy        string          `json:"replacedBy"`
	Replaces          string          `json:"replaces"`
	Secret            string          `json:"secret"`
	APIKey            string          `json:"apiKey"`
}

func issueCredential(t *testing.T, s *apptest.Server, nhiID string, body map[string]any) credentialJSON {
	t.Helper()
	r := s.Admin(http.MethodPost, nhiPath+"/"+nhiID+"/credentials", body)
	apptest.MustStatus(t, r, http.StatusCreated)
	var c credentialJSON
	r.Decode(t, &c)
	return c
}

func listCredentials(t *testing.T, s *apptest.Server, nhiID string) map[string]credentialJSON {
	t.Helper()
	r := s.Admin(http.MethodGet, nhiPath+"/"+nhiID+"/credentials", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list []credentialJSON
	r.Decode(t, &list)
	out := map[string]credentialJSON{}
	for _, c := range list {
		if c.Secret != "" || c.APIKey != "" || strings.Contains(string(r.Body), "secretHash") {
			t.Fatalf("a list shows a secret: %s", r.Body)
		}
		out[c.ID] = c
	}
	return out
}

func publicJWK(t *testing.T, key any, kid string) map[string]any {
	t.Helper()
	b, err := jose.JSONWebKey{Key: key, KeyID: kid}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func pemOf(t *testing.T, typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

// TestCredentialLifetimeExact issues and rotates credentials on a clock
// that moves a millisecond at every reading: the lifetime asked for is
// the one stored, however many readings the request takes.
func TestCredentialLifetimeExact(t *testing.T) {
	clk := newClock()
	s := newServer(t, withClock(clk))
	n := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc"})
	clk.step.Store(int64(time.Millisecond))
	lifetime := func(c credentialJSON) int64 {
		if c.ExpiresTimestamp == nil {
			t.Fatalf("no expiry: %+v", c)
		}
		return *c.ExpiresTimestamp - c.CreatedTimestamp
	}
	for _, typ := range []string{"client_secret", "api_key"} {
		c := issueCredential(t, s, n.ID, map[string]any{"type": typ, "expiresIn": 3600})
		if got := lifetime(c); got != 3600_000 {
			t.Errorf("%s issued for 3600 s lives %d ms", typ, got)
		}
		r := s.Admin(http.MethodPost, nhiPath+"/"+n.ID+"/credentials/"+c.ID+"/rotate", map[string]any{"expiresIn": 60})
		apptest.MustStatus(t, r, http.StatusCreated)
		var repl credentialJSON
		r.Decode(t, &repl)
		if got := lifetime(repl); got != 60_000 {
			t.Errorf("%s rotated for 60 s lives %d ms", typ, got)
		}
		r = s.Admin(http.MethodPost, nhiPath+"/"+n.ID+"/credentials/"+repl.ID+"/rotate", nil)
		apptest.MustStatus(t, r, http.StatusCreated)
		r.Decode(t, &repl)
		if got := lifetime(repl); got != 60_000 {
			t.Errorf("%s rotated keeping its lifetime lives %d ms, want 60000", typ, got)
		}
	}
}

func TestIssueCredentials(t *testing.T) {
	s := newServer(t)
	n := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc"})

	sec := issueCredential(t, s, n.ID, map[string]any{"type": "client_secret", "name": "prod"})
	if sec.Type != "client_secret" || len(sec.Secret) != 43 || sec.State != "active" || sec.ExpiresTimestamp != nil || sec.Name != "prod" {
		t.Errorf("client secret %+v", sec)
	}
	key := issueCredential(t, s, n.ID, map[string]any{"type": "api_key", "scopes": []string{"read", "write", "read"}, "expiresIn": 3600})
	if !regexp.MustCompile(`^idp_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$`).MatchString(key.APIKey) || !strings.HasPrefix(key.APIKey, "idp_"+key.Prefix+"_") ||
		strings.Join(key.Scopes, " ") != "read write" || key.ExpiresTimestamp == nil || *key.ExpiresTimestamp != key.CreatedTimestamp+3600_000 {
		t.Errorf("API key %+v", key)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecCred := issueCredential(t, s, n.ID, map[string]any{"type": "public_key", "publicKey": publicJWK(t, &ec.PublicKey, "")})
	thumb, _ := (&jose.JSONWebKey{Key: &ec.PublicKey}).Thumbprint(crypto.SHA256)
	if ecCred.KeyID != b64(thumb) || ecCred.Secret != "" || !strings.Contains(string(ecCred.PublicKey), `"crv":"P-256"`) {
		t.Errorf("EC key %+v %s", ecCred, ecCred.PublicKey)
	}
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	rsaCred := issueCredential(t, s, n.ID, map[string]any{"type": "public_key", "publicKey": pemOf(t, "PUBLIC KEY", der)})
	if rsaCred.KeyID == "" || !strings.Contains(string(rsaCred.PublicKey), `"kty":"RSA"`) {
		t.Errorf("RSA key %+v", rsaCred)
	}
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	edCred := issueCredential(t, s, n.ID, map[string]any{"type": "public_key", "publicKey": publicJWK(t, edPub, "ed-1")})
	if edCred.KeyID != "ed-1" {
		t.Errorf("Ed25519 key %+v", edCred)
	}
	list := listCredentials(t, s, n.ID)
	if len(list) != 5 || list[key.ID].Prefix != key.Prefix || list[sec.ID].State != "active" {
		t.Errorf("list %+v", list)
	}
}

func TestIssueCredentialRefusals(t *testing.T) {
	s := newServer(t)
	n := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc"})
	path := nhiPath + "/" + n.ID + "/credentials"
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ec)
	private := publicJWK(t, ec, "")
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	ec2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	issueCredential(t, s, n.ID, map[string]any{"type": "public_key", "publicKey": publicJWK(t, &ec.PublicKey, "k1")})
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no type", map[string]any{"name": "x"}, 400, "invalid_field", "type"},
		{"unknown type", map[string]any{"type": "password"}, 400, "invalid_field", "type"},
		{"certificate here", map[string]any{"type": "certificate"}, 400, "invalid_field", "type"},
		{"public key without key", map[string]any{"type": "public_key"}, 400, "invalid_field", "publicKey"},
		{"public key for a secret", map[string]any{"type": "client_secret", "publicKey": publicJWK(t, &ec.PublicKey, "")}, 400, "invalid_field", "publicKey"},
		{"a private JWK", map[string]any{"type": "public_key", "publicKey": private}, 400, "invalid_field", "publicKey"},
		{"a private PEM", map[string]any{"type": "public_key", "publicKey": pemOf(t, "EC PRIVATE KEY", ecDER)}, 400, "invalid_field", "publicKey"},
		{"RSA 1024", map[string]any{"type": "public_key", "publicKey": publicJWK(t, &small.PublicKey, "")}, 400, "invalid_field", "publicKey"},
		{"EC P-224", map[string]any{"type": "public_key", "publicKey": map[string]any{"kty": "EC", "crv": "P-224",
			"x": b64(p224.X.Bytes()), "y": b64(p224.Y.Bytes())}}, 400, "invalid_field", "publicKey"},
		{"a symmetric JWK", map[string]any{"type": "public_key", "publicKey": map[string]any{"kty": "oct", "k": "c2VjcmV0"}}, 400, "invalid_field", "publicKey"},
		{"garbage PEM", map[string]any{"type": "public_key", "publicKey": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"}, 400, "invalid_field", "publicKey"},
		{"a number as key", map[string]any{"type": "public_key", "publicKey": 7}, 400, "invalid_field", "publicKey"},
		{"a kid taken", map[string]any{"type": "public_key", "publicKey": publicJWK(t, &ec2.PublicKey, "k1")}, 409, "conflict", "publicKey"},
		{"the same key again", map[string]any{"type": "public_key", "publicKey": publicJWK(t, &ec.PublicKey, "k1")}, 409, "conflict", "publicKey"},
		{"scopes on a secret", map[string]any{"type": "client_secret", "scopes": []string{"a"}}, 400, "invalid_field", "scopes"},
		{"a scope with a space", map[string]any{"type": "api_key", "scopes": []string{"a b"}}, 400, "invalid_field", "scopes"},
		{"expiresIn 0", map[string]any{"type": "api_key", "expiresIn": 0}, 400, "invalid_field", "expiresIn"},
		{"expiresIn negative", map[string]any{"type": "api_key", "expiresIn": -5}, 400, "invalid_field", "expiresIn"},
		{"expiresIn beyond ten years", map[string]any{"type": "api_key", "expiresIn": 400_000_000}, 400, "invalid_field", "expiresIn"},
		{"a secret sent in", map[string]any{"type": "client_secret", "secret": "mine"}, 400, "unknown_field", "secret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, path, c.body), c.status, c.code, c.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, nhiPath+"/"+uuid.NewString()+"/credentials", map[string]any{"type": "api_key"}),
		404, "not_found", "")
	if got := len(listCredentials(t, s, n.ID)); got != 1 {
		t.Fatalf("%d credentials after refusals, want 1", got)
	}
	// At most ten that work; a revoked one makes room.
	var last credentialJSON
	for range 9 {
		last = issueCredential(t, s, n.ID, map[string]any{"type": "client_secret"})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, path, map[string]any{"type": "client_secret"}), 409, "conflict", "")
	apptest.MustStatus(t, s.Admin(http.MethodPost, path+"/"+last.ID+"/revoke", nil), http.StatusOK)
	issueCredential(t, s, n.ID, map[string]any{"type": "client_secret"})
}

func TestCredentialExpiryAndRevocation(t *testing.T) {
	clk := newClock()
	s := newServer(t, withClock(clk))
	n := createIdentity(t, s, map[string]any{"kind": "bot", "name": "bot"})
	short := issueCredential(t, s, n.ID, map[string]any{"type": "api_key", "expiresIn": 60})
	long := issueCredential(t, s, n.ID, map[string]any{"type": "client_secret"})
	clk.Advance(61 * time.Second)
	if got := listCredentials(t, s, n.ID); got[short.ID].State != "expired" || got[long.ID].State != "active" {
		t.Fatalf("after 61s: %+v", got)
	}
	revoke := nhiPath + "/" + n.ID + "/credentials/" + long.ID + "/revoke"
	r := s.Admin(http.MethodPost, revoke, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var c credentialJSON
	r.Decode(t, &c)
	if c.State != "revoked" || c.RevokedTimestamp == nil || *c.RevokedTimestamp != clk.Millis() {
		t.Fatalf("revoked %+v", c)
	}
	clk.Advance(time.Second)
	apptest.MustStatus(t, s.Admin(http.MethodPost, revoke, nil), http.StatusOK)
	if got := listCredentials(t, s, n.ID)[long.ID]; *got.RevokedTimestamp != clk.Millis()-1000 {
		t.Fatalf("a second revocation moved the time: %+v", got)
	}
	apptest.MustError(t, s.Admin(http.MethodPost, nhiPath+"/"+n.ID+"/credentials/"+uuid.NewString()+"/revoke", nil), 404, "not_found", "")
	// Another identity's credential is not found through this one.
	other := createIdentity(t, s, map[string]any{"kind": "bot", "name": "other"})
	apptest.MustError(t, s.Admin(http.MethodPost, nhiPath+"/"+other.ID+"/credentials/"+short.ID+"/revoke", nil), 404, "not_found", "")
}

func TestRotateCredential(t *testing.T) {
	clk := newClock()
	s := newServer(t, withClock(clk))
	n := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc"})
	old := issueCredential(t, s, n.ID, map[string]any{"type": "api_key", "name": "ci", "scopes": []string{"read"}, "expiresIn": 86400})
	base := nhiPath + "/" + n.ID + "/credentials/"

	clk.Advance(time.Hour)
	r := s.Admin(http.MethodPost, base+old.ID+"/rotate", map[string]any{"gracePeriod": 300})
	apptest.MustStatus(t, r, http.StatusCreated)
	var repl credentialJSON
	r.Decode(t, &repl)
	if repl.Replaces != old.ID || repl.APIKey == "" || repl.APIKey == old.APIKey || repl.Name != "ci" || strings.Join(repl.Scopes, " ") != "read" ||
		repl.ExpiresTimestamp == nil || *repl.ExpiresTimestamp != clk.Millis()+86400_000 {
		t.Fatalf("replacement %+v", repl)
	}
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, base+repl.ID) {
		t.Errorf("Location %s", loc)
	}
	got := listCredentials(t, s, n.ID)[old.ID]
	if got.State != "active" || got.ReplacedBy != repl.ID || got.RevokedTimestamp == nil || *got.RevokedTimestamp != clk.Millis()+300_000 {
		t.Fatalf("old during its grace period %+v", got)
	}
	// Rotated once: its replacement is the one to rotate.
	apptest.MustError(t, s.Admin(http.MethodPost, base+old.ID+"/rotate", nil), 409, "invalid_state", "")
	clk.Advance(301 * time.Second)
	if got := listCredentials(t, s, n.ID)[old.ID]; got.State != "revoked" {
		t.Fatalf("old after its grace period %+v", got)
	}
	// Without a body: the old one is revoked at once.
	r = s.Admin(http.MethodPost, base+repl.ID+"/rotate", nil)
	apptest.MustStatus(t, r, http.StatusCreated)
	if got := listCredentials(t, s, n.ID)[repl.ID]; got.State != "revoked" || *got.RevokedTimestamp != clk.Millis() {
		t.Fatalf("rotated without grace %+v", got)
	}
	// A public key is rotated to the key its holder brings.
	ec1, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pub := issueCredential(t, s, n.ID, map[string]any{"type": "public_key", "publicKey": publicJWK(t, &ec1.PublicKey, "")})
	apptest.MustError(t, s.Admin(http.MethodPost, base+pub.ID+"/rotate", map[string]any{}), 400, "invalid_field", "publicKey")
	r = s.Admin(http.MethodPost, base+pub.ID+"/rotate", map[string]any{"publicKey": publicJWK(t, &ec2.PublicKey, ""), "gracePeriod": 60})
	apptest.MustStatus(t, r, http.StatusCreated)
	var newPub credentialJSON
	r.Decode(t, &newPub)
	if newPub.KeyID == pub.KeyID || newPub.Type != "public_key" {
		t.Fatalf("rotated key %+v", newPub)
	}
	for _, c := range []struct {
		name, path string
		body       any
		status     int
		code       string
		field      string
	}{
		{"a revoked one", base + old.ID + "/rotate", nil, 409, "invalid_state", ""},
		{"negative grace", base + newPub.ID + "/rotate", map[string]any{"gracePeriod": -1}, 400, "invalid_field", "gracePeriod"},
		{"grace beyond 30 days", base + newPub.ID + "/rotate", map[string]any{"gracePeriod": 31 * 86400}, 400, "invalid_field", "gracePeriod"},
		{"unknown field", base + newPub.ID + "/rotate", map[string]any{"grace": 1}, 400, "unknown_field", "grace"},
		{"unknown credential", base + uuid.NewString() + "/rotate", nil, 404, "not_found", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, c.path, c.body), c.status, c.code, c.field)
		})
	}
}

// Decommissioning revokes every credential and refuses every later
// credential write.
func TestDecommissionRevokesCredentials(t *testing.T) {
	clk := newClock()
	s := newServer(t, withClock(clk))
	n := createIdentity(t, s, map[string]any{"kind": "workload", "name": "job"})
	a := issueCredential(t, s, n.ID, map[string]any{"type": "api_key"})
	b := issueCredential(t, s, n.ID, map[string]any{"type": "client_secret"})
	apptest.MustStatus(t, s.Admin(http.MethodPost, nhiPath+"/"+n.ID+"/decommission", nil), http.StatusOK)
	for id, c := range listCredentials(t, s, n.ID) {
		if c.State != "revoked" {
			t.Errorf("credential %s is %s after decommissioning", id, c.State)
		}
	}
	base := nhiPath + "/" + n.ID + "/credentials"
	apptest.MustError(t, s.Admin(http.MethodPost, base, map[string]any{"type": "api_key"}), 409, "invalid_state", "")
	apptest.MustError(t, s.Admin(http.MethodPost, base+"/"+a.ID+"/rotate", nil), 409, "invalid_state", "")
	apptest.MustError(t, s.Admin(http.MethodPost, base+"/"+b.ID+"/revoke", nil), 409, "invalid_state", "")
}

// A public key given as a certificate that cannot be read is refused with
// the reason.
func TestPublicKeyCertificateUnreadable(t *testing.T) {
	s := newServer(t)
	n := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc"})
	r := s.Admin(http.MethodPost, nhiPath+"/"+n.ID+"/credentials",
		map[string]any{"type": "public_key", "publicKey": apptest.NegativeSerialCertificate(t)})
	apptest.MustError(t, r, http.StatusBadRequest, "invalid_field", "publicKey")
	if desc, _ := r.Object(t)["error_description"].(string); !strings.Contains(desc, "x509: negative serial number") {
		t.Fatalf("refused with %q, want the parse error", desc)
	}
}
