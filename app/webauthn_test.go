package app

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"

	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/store"
)

func TestWebAuthnRegisterAndAuthenticate(t *testing.T) {
	e := newWebAuthnEnv(t)
	token := e.token("alice", codeflowPassword).AccessToken
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	key.cred.Counter = 1

	// Options: the realm as relying party, a passkey preferred, alice's
	// stable random handle.
	r := e.request(http.MethodPost, webauthnPath("register/options"), nil, "Authorization: Bearer "+token)
	ceremonyID(t, r)
	var opts struct {
		PublicKey struct {
			RP   struct{ ID, Name string }
			User struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			}
			AuthenticatorSelection struct {
				ResidentKey      string `json:"residentKey"`
				UserVerification string `json:"userVerification"`
			}
			Attestation string
		}
	}
	r.decode(t, &opts)
	pk := opts.PublicKey
	if pk.RP.ID != "localhost" || pk.RP.Name != "acme" || pk.User.Name != "alice" || len(pk.User.ID) != 86 ||
		pk.AuthenticatorSelection.ResidentKey != "preferred" || pk.AuthenticatorSelection.UserVerification != "preferred" {
		t.Fatalf("registration options %s", r.Body)
	}

	rep := e.registerKey(token, key, "  Work laptop ")
	if rep["name"] != "Work laptop" || rep["type"] != "webauthn" || rep["id"] == "" || rep["signCount"] != 1.0 ||
		rep["createdDate"] != float64(e.clock.now().UnixMilli()) {
		t.Fatalf("registered credential %v", rep)
	}
	if ev := hasEvent(e.loginEvents(e.aliceID), "UPDATE_CREDENTIAL"); ev == nil || ev.Details["credential_type"] != "webauthn" ||
		ev.Details["credential_id"] != rep["id"] || ev.ClientID != "cli" {
		t.Fatalf("UPDATE_CREDENTIAL event %+v", ev)
	}
	// The handle stays: a second registration names alice the same way,
	// and excludes the key she has.
	r = e.request(http.MethodPost, webauthnPath("register/options"), nil, "Authorization: Bearer "+token)
	again, err := virtualwebauthn.ParseAttestationOptions(string(r.Body))
	if err != nil || again.UserID != string(key.auth.Options.UserHandle) || !key.cred.IsExcludedForAttestation(*again) {
		t.Fatalf("second registration options %s: %v", r.Body, err)
	}

	for _, tc := range []struct {
		name    string
		body    any
		counter uint32
		allowed int // allowCredentials in the options
	}{
		{"by username", map[string]any{"username": "alice"}, 2, 1},
		{"by email", map[string]any{"username": "alice@example.test"}, 3, 1},
		{"passkey, no username", map[string]any{}, 4, 0},
		{"unknown username: as a passkey", map[string]any{"username": "nobody"}, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.request(http.MethodPost, webauthnPath("authenticate/options"), tc.body)
			id := ceremonyID(t, r)
			var o struct {
				PublicKey struct {
					RPID             string           `json:"rpId"`
					AllowCredentials []map[string]any `json:"allowCredentials"`
					UserVerification string           `json:"userVerification"`
				}
			}
			r.decode(t, &o)
			if o.PublicKey.RPID != "localhost" || len(o.PublicKey.AllowCredentials) != tc.allowed ||
				o.PublicKey.UserVerification != "required" {
				t.Fatalf("authentication options %s", r.Body)
			}
			key.cred.Counter = tc.counter
			r = e.request(http.MethodPost, webauthnPath("authenticate/verify"), map[string]any{"ceremonyId": id,
				"credential": e.assertWith(key, r.Body, "")})
			mustStatus(t, r, http.StatusOK)
			if got := r.object(t); got["verified"] != true || got["userId"] != e.aliceID || got["credentialId"] != rep["id"] ||
				got["userVerified"] != true {
				t.Fatalf("verify answer %v", got)
			}
		})
	}

	// The account lists the key with its new counter and last use.
	r = e.api(http.MethodGet, "/webauthn/credentials", token, nil)
	mustStatus(t, r, http.StatusOK)
	var list []map[string]any
	r.decode(t, &list)
	if len(list) != 1 || list[0]["id"] != rep["id"] || list[0]["signCount"] != 5.0 ||
		list[0]["lastUsedDate"] != float64(e.clock.now().UnixMilli()) || list[0]["name"] != "Work laptop" {
		t.Fatalf("credentials %s", r.Body)
	}
	if strings.Contains(string(r.Body), "publicKey") {
		t.Fatalf("the list shows the public key: %s", r.Body)
	}
	// A key is a second factor: the account says so, and the password
	// grant, which cannot ask for it, is refused.
	r = e.api(http.MethodGet, "", token, nil)
	if factors, _ := json.Marshal(r.object(t)["factors"]); string(factors) != `["password","webauthn"]` {
		t.Fatalf("account factors %s", factors)
	}
	if _, err := e.cfg.PasswordCredentialsToken(t.Context(), "alice", codeflowPassword); err == nil {
		t.Fatal("the password grant passed a user with a security key")
	}
}

func TestWebAuthnSignCountAndClone(t *testing.T) {
	e := newWebAuthnEnv(t)
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	key.cred.Counter = 10
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "key")
	for _, tc := range []struct {
		name    string
		counter uint32
		want    int
	}{
		{"the registration's counter again", 10, http.StatusUnauthorized},
		{"a higher counter", 11, http.StatusOK},
		{"the same counter replayed", 11, http.StatusUnauthorized},
		{"a lower counter", 7, http.StatusUnauthorized},
		{"zero, after counting", 0, http.StatusUnauthorized},
		{"higher again", 12, http.StatusOK},
	} {
		key.cred.Counter = tc.counter
		r := e.authenticate(key, map[string]any{"username": "alice"})
		if r.Status != tc.want {
			t.Fatalf("%s: status %d, want %d; body %s", tc.name, r.Status, tc.want, r.Body)
		}
		if tc.want != http.StatusOK {
			mustError(t, r, http.StatusUnauthorized, "invalid_credentials", "")
		}
	}
	clones := 0
	for _, ev := range e.loginEvents(e.aliceID) {
		if ev.Type == "LOGIN_ERROR" && ev.Details["reason"] == "webauthn_clone_detected" {
			clones++
		}
	}
	if clones != 4 {
		t.Fatalf("%d LOGIN_ERROR events with reason webauthn_clone_detected, want 4", clones)
	}
}

func TestWebAuthnCeremonyRefusals(t *testing.T) {
	e := newWebAuthnEnv(t)
	token := e.token("alice", codeflowPassword).AccessToken
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(token, key, "key")
	options := func() (string, []byte) {
		r := e.request(http.MethodPost, webauthnPath("authenticate/options"), map[string]any{"username": "alice"})
		return ceremonyID(t, r), r.Body
	}
	verify := func(id string, credential json.RawMessage) *testResponse {
		return e.request(http.MethodPost, webauthnPath("authenticate/verify"), map[string]any{"ceremonyId": id, "credential": credential})
	}

	// Once: a second answer to a ceremony is refused, right or not.
	id, body := options()
	cred := e.assertWith(key, body, "")
	mustStatus(t, verify(id, cred), http.StatusOK)
	mustError(t, verify(id, cred), http.StatusBadRequest, "invalid_ceremony", "")

	// A wrong answer uses the ceremony up too.
	id, body = options()
	mustError(t, verify(id, e.assertWith(key, body, "http://evil.example.test")), http.StatusUnauthorized, "invalid_credentials", "")
	mustError(t, verify(id, e.assertWith(key, body, "")), http.StatusBadRequest, "invalid_ceremony", "")

	// An unknown key, a key answering for another RP ID, a registration's
	// ceremony, a missing credential, an unknown member.
	id, body = options()
	other := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	mustError(t, verify(id, e.assertWith(other, body, "")), http.StatusUnauthorized, "invalid_credentials", "")
	id, body = options()
	opts, _ := virtualwebauthn.ParseAssertionOptions(string(body))
	wrongRP := virtualwebauthn.CreateAssertionResponse(virtualwebauthn.RelyingParty{ID: "example.test", Origin: e.url}, key.auth, key.cred, *opts)
	mustError(t, verify(id, json.RawMessage(wrongRP)), http.StatusUnauthorized, "invalid_credentials", "")
	r := e.request(http.MethodPost, webauthnPath("register/options"), nil, "Authorization: Bearer "+token)
	mustError(t, verify(ceremonyID(t, r), e.assertWith(key, r.Body, "")), http.StatusBadRequest, "invalid_ceremony", "")
	id, _ = options()
	mustError(t, verify(id, nil), http.StatusBadRequest, "invalid_field", "credential")
	mustError(t, e.request(http.MethodPost, webauthnPath("authenticate/options"), map[string]any{"user": "alice"}),
		http.StatusBadRequest, "invalid_field", "user")
	mustError(t, e.request(http.MethodPost, webauthnPath("authenticate/verify"), map[string]any{"ceremonyId": "nope",
		"credential": map[string]any{}}), http.StatusBadRequest, "invalid_ceremony", "")

	// Without user verification a key alone does not sign in.
	noUV := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	e.registerKey(token, noUV, "no PIN")
	if r := e.authenticate(noUV, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("a passkey without user verification: status %d, want 401; body %s", r.Status, r.Body)
	}
	mustError(t, e.request(http.MethodPost, "/realms/nope/webauthn/authenticate/options", nil), http.StatusNotFound, "not_found", "")

	// Five minutes, then gone.
	id, body = options()
	e.clock.advance(webauthnrp.CeremonyTTL + time.Second)
	mustError(t, verify(id, e.assertWith(key, body, "")), http.StatusBadRequest, "invalid_ceremony", "")
}

func TestWebAuthnRegisterRefusals(t *testing.T) {
	e := newWebAuthnEnv(t)
	token := e.token("alice", codeflowPassword).AccessToken
	bearer := "Authorization: Bearer " + token
	bob := e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	bobToken := e.token("bob", codeflowPassword).AccessToken
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	options := func(auth string) *testResponse {
		r := e.request(http.MethodPost, webauthnPath("register/options"), nil, auth)
		ceremonyID(t, r)
		return r
	}
	verify := func(auth string, body map[string]any) *testResponse {
		return e.request(http.MethodPost, webauthnPath("register/verify"), body, auth)
	}

	mustError(t, e.request(http.MethodPost, webauthnPath("register/options"), nil), http.StatusUnauthorized, "unauthorized", "")
	r := e.request(http.MethodPost, webauthnPath("register/options"), nil, "Authorization: Bearer nope")
	mustError(t, r, http.StatusUnauthorized, "invalid_token", "")
	if !strings.Contains(r.Header.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
	}
	// A browser without its page's CSRF token gets nowhere either.
	mustStatus(t, e.request(http.MethodPost, webauthnPath("register/options"), "", "Content-Type: application/x-www-form-urlencoded"),
		http.StatusUnauthorized)

	// Alice's ceremony is no way to give bob a key.
	r = options(bearer)
	mustError(t, verify("Authorization: Bearer "+bobToken, map[string]any{"ceremonyId": r.object(t)["ceremonyId"],
		"credential": e.attest(key, r.Body, "")}), http.StatusBadRequest, "invalid_ceremony", "")
	for _, tc := range []struct {
		name   string
		body   func(id string, cred json.RawMessage) map[string]any
		status int
		code   string
		field  string
	}{
		{"a long name", func(id string, cred json.RawMessage) map[string]any {
			return map[string]any{"ceremonyId": id, "credential": cred, "name": strings.Repeat("n", webauthnrp.NameMax+1)}
		}, http.StatusBadRequest, "invalid_field", "name"},
		{"a control character", func(id string, cred json.RawMessage) map[string]any {
			return map[string]any{"ceremonyId": id, "credential": cred, "name": "key\x07"}
		}, http.StatusBadRequest, "invalid_field", "name"},
		{"a bidi override", func(id string, cred json.RawMessage) map[string]any {
			return map[string]any{"ceremonyId": id, "credential": cred, "name": "key\u202eyek"}
		}, http.StatusBadRequest, "invalid_field", "name"},
		{"a zero-width space", func(id string, cred json.RawMessage) map[string]any {
			return map[string]any{"ceremonyId": id, "credential": cred, "name": "ke\u200by"}
		}, http.StatusBadRequest, "invalid_field", "name"},
		{"no credential", func(id string, _ json.RawMessage) map[string]any {
			return map[string]any{"ceremonyId": id}
		}, http.StatusBadRequest, "invalid_field", "credential"},
		{"an unknown member", func(id string, cred json.RawMessage) map[string]any {
			return map[string]any{"ceremonyId": id, "credential": cred, "label": "x"}
		}, http.StatusBadRequest, "invalid_field", "label"},
		{"not a credential", func(id string, _ json.RawMessage) map[string]any {
			return map[string]any{"ceremonyId": id, "credential": map[string]any{"id": "x"}}
		}, http.StatusBadRequest, "invalid_field", "credential"},
	} {
		r := options(bearer)
		id, _ := r.object(t)["ceremonyId"].(string)
		mustError(t, verify(bearer, tc.body(id, e.attest(key, r.Body, ""))), tc.status, tc.code, tc.field)
	}
	// From another origin, the answer is refused.
	r = options(bearer)
	mustError(t, verify(bearer, map[string]any{"ceremonyId": r.object(t)["ceremonyId"],
		"credential": e.attest(key, r.Body, "https://evil.example.test")}), http.StatusBadRequest, "invalid_field", "credential")

	// Registered once; the same credential again (under a ceremony that
	// did not exclude it) is a conflict, for alice or for bob.
	e.registerKey(token, key, "key")
	for _, auth := range []string{bearer, "Authorization: Bearer " + bobToken} {
		r = options(auth)
		opts, _ := virtualwebauthn.ParseAttestationOptions(string(r.Body))
		opts.ExcludeCredentials = nil
		cred := virtualwebauthn.CreateAttestationResponse(e.webauthnRP(""), key.auth, key.cred, *opts)
		mustError(t, verify(auth, map[string]any{"ceremonyId": r.object(t)["ceremonyId"], "credential": json.RawMessage(cred)}),
			http.StatusConflict, "conflict", "")
	}
	if r := e.api(http.MethodGet, "/webauthn/credentials", bobToken, nil); string(r.Body) != "[]\n" {
		t.Fatalf("bob's credentials %s (bob %v)", r.Body, bob["id"])
	}
}

func TestWebAuthnNeedsADomain(t *testing.T) {
	e := newAccountEnv(t) // base URL http://127.0.0.1:PORT
	token := e.token("alice", codeflowPassword).AccessToken
	for _, path := range []string{"register/options", "authenticate/options"} {
		r := e.request(http.MethodPost, webauthnPath(path), nil, "Authorization: Bearer "+token)
		mustError(t, r, http.StatusServiceUnavailable, "webauthn_unavailable", "")
		if !strings.Contains(r.object(t)["error_description"].(string), "IP address") {
			t.Fatalf("description %s", r.Body)
		}
	}
	// The login page offers no passkey, and the account no keys' page.
	secret := e.client("web", nil)
	p := e.browser().follow(e.url, e.oauth2Config("web", secret, "openid").AuthCodeURL("s"))
	if p.status != http.StatusOK || strings.Contains(string(p.body), "data-webauthn") {
		t.Fatalf("login page: status %d body %s", p.status, p.body)
	}
}

func TestWebAuthnAccountDelete(t *testing.T) {
	e := newWebAuthnEnv(t)
	token := e.token("alice", codeflowPassword).AccessToken
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	bobToken := e.token("bob", codeflowPassword).AccessToken
	first := e.registerKey(token, newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{}), "first")
	e.clock.advance(time.Second)
	second := e.registerKey(token, newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{}), "second")

	mustError(t, e.api(http.MethodDelete, "/webauthn/credentials/"+first["id"].(string), bobToken, nil),
		http.StatusNotFound, "not_found", "")
	mustError(t, e.api(http.MethodDelete, "/webauthn/credentials/nope", token, nil), http.StatusNotFound, "not_found", "")
	mustStatus(t, e.api(http.MethodDelete, "/webauthn/credentials/"+first["id"].(string), token, nil), http.StatusNoContent)
	mustError(t, e.api(http.MethodDelete, "/webauthn/credentials/"+first["id"].(string), token, nil), http.StatusNotFound, "not_found", "")
	var list []map[string]any
	e.api(http.MethodGet, "/webauthn/credentials", token, nil).decode(t, &list)
	if len(list) != 1 || list[0]["id"] != second["id"] {
		t.Fatalf("credentials after the delete: %v", list)
	}
	if ev := hasEvent(e.loginEvents(e.aliceID), "REMOVE_CREDENTIAL"); ev == nil || ev.Details["credential_id"] != first["id"] ||
		ev.Details["credential_type"] != "webauthn" {
		t.Fatalf("REMOVE_CREDENTIAL event %+v", ev)
	}
	mustError(t, e.api(http.MethodGet, "/webauthn/credentials", "nope", nil), http.StatusUnauthorized, "invalid_token", "")
}

func TestWebAuthnAdminMFA(t *testing.T) {
	e := newWebAuthnEnv(t)
	token := e.token("alice", codeflowPassword).AccessToken
	key := e.registerKey(token, newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{}), "Yubikey")
	e.clock.advance(time.Second)
	e.registerKey(token, newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{}), "Phone")
	status := "/admin/realms/acme/users/" + e.aliceID + "/mfa/status"
	r := e.admin(http.MethodGet, status, nil)
	mustStatus(t, r, http.StatusOK)
	var rep struct {
		Enabled  bool
		Factors  []string
		WebAuthn []map[string]any
	}
	r.decode(t, &rep)
	if !rep.Enabled || len(rep.Factors) != 1 || rep.Factors[0] != "webauthn" || len(rep.WebAuthn) != 2 ||
		rep.WebAuthn[0]["id"] != key["id"] || rep.WebAuthn[0]["name"] != "Yubikey" || rep.WebAuthn[0]["createdDate"] == nil {
		t.Fatalf("MFA status %s", r.Body)
	}
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/mfa", nil), http.StatusNoContent)
	r = e.admin(http.MethodGet, status, nil)
	if got := r.object(t); got["enabled"] != false || got["webauthn"] != nil {
		t.Fatalf("MFA status after removal %s", r.Body)
	}
	removed := 0
	for _, ev := range e.loginEvents(e.aliceID) {
		if ev.Type == "REMOVE_CREDENTIAL" && ev.Details["by"] == "admin" {
			removed++
		}
	}
	if removed != 2 {
		t.Fatalf("%d REMOVE_CREDENTIAL events by the admin, want 2", removed)
	}
}

func TestWebAuthnBruteForce(t *testing.T) {
	e := newWebAuthnEnv(t, map[string]any{"bruteForceEnabled": true, "maxLoginFailures": 2, "lockoutDuration": 900})
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "key")
	wrongOrigin := func() *testResponse {
		r := e.request(http.MethodPost, webauthnPath("authenticate/options"), map[string]any{"username": "alice"})
		return e.request(http.MethodPost, webauthnPath("authenticate/verify"), map[string]any{"ceremonyId": ceremonyID(t, r),
			"credential": e.assertWith(key, r.Body, "https://evil.example.test")})
	}
	mustStatus(t, wrongOrigin(), http.StatusUnauthorized)
	mustStatus(t, wrongOrigin(), http.StatusUnauthorized)
	// Locked out: the right key is refused as a wrong one is.
	mustError(t, e.authenticate(key, map[string]any{"username": "alice"}), http.StatusUnauthorized, "invalid_credentials", "")
	var locked *loginEventRep
	for _, ev := range e.loginEvents(e.aliceID) {
		if ev.Type == "LOGIN_ERROR" && ev.Error == "user_temporarily_disabled" && ev.Details["credential_type"] == "webauthn" {
			locked = &ev
		}
	}
	if locked == nil {
		t.Fatalf("no LOGIN_ERROR user_temporarily_disabled of a WebAuthn attempt: %+v", e.loginEvents(e.aliceID))
	}
	e.clock.advance(901 * time.Second)
	mustStatus(t, e.authenticate(key, map[string]any{"username": "alice"}), http.StatusOK)
}

func TestWebAuthnCeremoniesPurged(t *testing.T) {
	e := newWebAuthnEnv(t)
	var ids []string
	for range 3 {
		ids = append(ids, ceremonyID(t, e.request(http.MethodPost, webauthnPath("authenticate/options"), nil)))
	}
	e.clock.advance(webauthnrp.CeremonyTTL)
	e.app.expireSessions(t.Context())
	realm, err := e.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	// Taken at a time before any expired, each would come back if kept.
	for _, id := range ids {
		if c, err := e.store.TakeWebAuthnCeremony(t.Context(), realm.ID, id, 0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ceremony %s after the purge: %+v, %v; want none", id, c, err)
		}
	}
}

// Refused assertions at a sign-in's security-key step stay on record
// when the next sign-in's password is right: the key, not the password,
// forgets them.
func TestWebAuthnSecondStepFailuresKept(t *testing.T) {
	e := newWebAuthnEnv(t, map[string]any{"bruteForceEnabled": true, "maxLoginFailures": 5, "lockoutDuration": 900})
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "key")
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	options := e.url + webauthnPath("authenticate/options")

	b := e.browser()
	p := e.totpPasswordStep(b, cfg.AuthCodeURL("s1"), "alice")
	f := webauthnForm(t, p, "authenticate")
	for range 2 {
		id, body := pageCeremony(t, b, options, map[string]any{"authRequestID": f.fields.Get("authRequestID")})
		refused := webauthnSubmit(b, p, f, id, e.assertWith(key, body, "https://evil.example.test"), nil)
		mustPage(t, refused, http.StatusUnauthorized)
	}
	if n := e.aliceFailures(); n != 2 {
		t.Fatalf("%d failures after two refused assertions, want 2", n)
	}
	// Another sign-in's right password: the key is still owed.
	b2 := e.browser()
	p = e.totpPasswordStep(b2, cfg.AuthCodeURL("s2"), "alice")
	if n := e.aliceFailures(); n != 2 {
		t.Fatalf("%d failures after the right password, want the 2 refused assertions kept", n)
	}
	// The key forgets them.
	f = webauthnForm(t, p, "authenticate")
	id, body := pageCeremony(t, b2, options, map[string]any{"authRequestID": f.fields.Get("authRequestID")})
	e.redirectedBack(webauthnSubmit(b2, p, f, id, e.assertWith(key, body, ""), nil))
	if n := e.aliceFailures(); n != 0 {
		t.Fatalf("%d failures kept after the sign-in", n)
	}
}
