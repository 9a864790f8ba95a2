package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/descope/virtualwebauthn"
)

// FuzzWebAuthnVerify fuzzes the JSON bodies of the WebAuthn ceremonies'
// verify endpoints: registration (with alice's Bearer token) and
// authentication (passkey, signed out). Every input gets a fresh ceremony
// from the options endpoint; "CEREMONY" in the body stands for its ID.
// Invariants: never a 5xx, errors in the API's shape, and never a
// success: the fuzzer cannot know a fresh ceremony's challenge, so an
// accepted credential would mean one answered a challenge it never saw.
func FuzzWebAuthnVerify(f *testing.F) {
	e := newFuzzEnv(f)
	e.user(f, map[string]any{"username": "alice", "email": "alice@example.test"}, codeflowPassword)
	secret := e.client(f, map[string]any{"clientId": "cli", "grantTypes": []string{"password"}})
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}}.Encode(),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("cli", secret))
	mustStatus(f, r, http.StatusOK)
	bearer := "Bearer " + r.object(f)["access_token"].(string)
	rp := virtualwebauthn.RelyingParty{Name: "acme", ID: "localhost", Origin: "http://localhost:3000"}
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})

	// A registration and an authentication as a browser makes them; each
	// verifies once, and then serves as a seed.
	r = e.request(http.MethodPost, webauthnPath("register/options"), nil, "Authorization: "+bearer)
	id := ceremonyID(f, r)
	opts, err := virtualwebauthn.ParseAttestationOptions(string(r.Body))
	if err != nil {
		f.Fatal(err)
	}
	key.auth.Options.UserHandle = []byte(opts.UserID)
	attestation := virtualwebauthn.CreateAttestationResponse(rp, key.auth, key.cred, *opts)
	mustStatus(f, e.request(http.MethodPost, webauthnPath("register/verify"), map[string]any{"ceremonyId": id, "name": "key",
		"credential": json.RawMessage(attestation)}, "Authorization: "+bearer), http.StatusCreated)
	r = e.request(http.MethodPost, webauthnPath("authenticate/options"), map[string]any{})
	id = ceremonyID(f, r)
	aopts, err := virtualwebauthn.ParseAssertionOptions(string(r.Body))
	if err != nil {
		f.Fatal(err)
	}
	assertion := virtualwebauthn.CreateAssertionResponse(rp, key.auth, key.cred, *aopts)
	mustStatus(f, e.request(http.MethodPost, webauthnPath("authenticate/verify"), map[string]any{"ceremonyId": id,
		"credential": json.RawMessage(assertion)}), http.StatusOK)

	for _, register := range []bool{false, true} {
		cred := assertion
		if register {
			cred = attestation
		}
		f.Add(`{"ceremonyId":"CEREMONY","credential":`+cred+`}`, register)
		f.Add(`{"ceremonyId":"CEREMONY","name":"k2","credential":`+cred+`}`, register)
		f.Add(`{"ceremonyId":"CEREMONY","credential":{"id":"x","rawId":"x","type":"public-key","response":{}}}`, register)
		f.Add(`{"ceremonyId":"CEREMONY","credential":null}`, register)
		f.Add(`{"ceremonyId":"CEREMONY","credential":"`+strings.Repeat("A", 64)+`"}`, register)
		f.Add(`{"ceremonyId":"nope","credential":`+cred+`}`, register)
		f.Add(`{"ceremonyId":"CEREMONY","label":"x"}`, register)
		f.Add(``, register)
	}
	f.Fuzz(func(t *testing.T, body string, register bool) {
		s := e.on(t)
		step, headers := "authenticate", http.Header{"Content-Type": {"application/json"}}
		if register {
			step = "register"
			headers.Set("Authorization", bearer)
		}
		r := s.send(http.MethodPost, webauthnPath(step+"/options"), strings.NewReader("{}"), headers)
		e.fuzzNoServerError(t, step+" options", r)
		var options struct {
			CeremonyID string `json:"ceremonyId"`
		}
		if err := json.Unmarshal(r.Body, &options); err != nil || options.CeremonyID == "" {
			t.Fatalf("%s options answered %d: %s", step, r.Status, r.Body)
		}
		body = strings.ReplaceAll(body, "CEREMONY", options.CeremonyID)
		r = s.send(http.MethodPost, webauthnPath(step+"/verify"), strings.NewReader(body), headers)
		e.fuzzNoServerError(t, step+" verify", r)
		if r.Status < 300 {
			t.Fatalf("%s verify accepted a credential made for another challenge: %d %s", step, r.Status, r.Body)
		}
		fuzzMustAPIError(t, step+" verify", r)
	})
}
