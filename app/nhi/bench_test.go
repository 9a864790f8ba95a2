package nhi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

// BenchmarkClientCredentials: the client_credentials grant of an identity,
// through the whole router, by each way it authenticates, beside an
// ordinary client with its own secret. Each token is a signed JWT with
// the identity's role. Each use of an identity commits its audit record
// (its last-use times only once a minute); the assertion path also
// verifies a signature and writes the jti.
func BenchmarkClientCredentials(b *testing.B) {
	s := realapp.New(b)
	apptest.MustStatus(b, s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme"}), http.StatusCreated)
	n := s.Admin(http.MethodPost, nhiPath, map[string]any{"kind": "workload", "name": "worker"})
	apptest.MustStatus(b, n, http.StatusCreated)
	id := n.Object(b)["id"].(string)
	issue := func(body map[string]any) map[string]any {
		r := s.Admin(http.MethodPost, nhiPath+"/"+id+"/credentials", body)
		apptest.MustStatus(b, r, http.StatusCreated)
		return r.Object(b)
	}
	secret := issue(map[string]any{"type": "client_secret"})["secret"].(string)
	apiKey := issue(map[string]any{"type": "api_key"})["apiKey"].(string)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwk, _ := jose.JSONWebKey{Key: &ec.PublicKey}.MarshalJSON()
	issue(map[string]any{"type": "public_key", "publicKey": rawJSON(jwk)})
	plain := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "plain",
		"grantTypes": []string{"client_credentials"}})
	apptest.MustStatus(b, plain, http.StatusCreated)
	plainSecret := plain.Object(b)["secret"].(string)
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: ec}, nil)
	aud := apptest.BaseURL + "/realms/acme"

	for _, c := range []struct {
		name string
		form func() url.Values
	}{
		{"client-secret", func() url.Values { return url.Values{"client_id": {"plain"}, "client_secret": {plainSecret}} }},
		{"nhi-client-secret", func() url.Values { return url.Values{"client_id": {"worker"}, "client_secret": {secret}} }},
		{"nhi-api-key", func() url.Values { return url.Values{"client_id": {"worker"}, "client_secret": {apiKey}} }},
		{"nhi-private-key-jwt", func() url.Values {
			a, _ := jwt.Signed(signer).Claims(map[string]any{"iss": "worker", "sub": "worker", "aud": aud,
				"exp": time.Now().Add(time.Minute).Unix(), "jti": uuid.NewString()}).Serialize()
			return url.Values{"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {a}}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				form := c.form()
				form.Set("grant_type", "client_credentials")
				req := httptest.NewRequest(http.MethodPost, tokenPath, strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.RemoteAddr = apptest.ClientAddr
				rec := httptest.NewRecorder()
				s.Handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// BenchmarkIntrospectAPIKey: a resource server asking the introspection
// endpoint about an identity's API key, through the whole router, beside
// the same question about an access token of the identity (a signed JWT).
// The API key is a hash lookup of its prefix and a constant-time compare.
func BenchmarkIntrospectAPIKey(b *testing.B) {
	s := realapp.New(b)
	apptest.MustStatus(b, s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme"}), http.StatusCreated)
	n := s.Admin(http.MethodPost, nhiPath, map[string]any{"kind": "workload", "name": "worker"})
	apptest.MustStatus(b, n, http.StatusCreated)
	id := n.Object(b)["id"].(string)
	r := s.Admin(http.MethodPost, nhiPath+"/"+id+"/credentials", map[string]any{"type": "api_key"})
	apptest.MustStatus(b, r, http.StatusCreated)
	apiKey := r.Object(b)["apiKey"].(string)
	rs := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "resource-server"})
	apptest.MustStatus(b, rs, http.StatusCreated)
	rsSecret := rs.Object(b)["secret"].(string)
	post := func(path string, form url.Values) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = apptest.ClientAddr
		rec := httptest.NewRecorder()
		s.Handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		return rec
	}
	tok := post(tokenPath, url.Values{"grant_type": {"client_credentials"}, "client_id": {"worker"}, "client_secret": {apiKey}})
	var grant struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(tok.Body.Bytes(), &grant); err != nil || grant.AccessToken == "" {
		b.Fatalf("token: %v %s", err, tok.Body)
	}
	introspect := "/realms/acme/protocol/openid-connect/token/introspect"
	for _, c := range []struct{ name, token string }{{"api-key", apiKey}, {"access-token", grant.AccessToken}} {
		b.Run(c.name, func(b *testing.B) {
			form := url.Values{"token": {c.token}, "client_id": {"resource-server"}, "client_secret": {rsSecret}}
			for b.Loop() {
				if rec := post(introspect, form); !strings.Contains(rec.Body.String(), `"active":true`) {
					b.Fatalf("not active: %s", rec.Body)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "introspections/s")
		})
	}
}
