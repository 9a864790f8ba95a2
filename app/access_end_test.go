package app

import (
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// accessEndEnv is alice signed in at web and spa (one SSO session), with
// an offline token of web besides.
type accessEndEnv struct {
	*standingEnv
	offlineCfg *oauth2.Config
	offline    *oauth2.Token
}

func newAccessEndEnv(t *testing.T) *accessEndEnv {
	t.Helper()
	e := &accessEndEnv{standingEnv: newStandingEnv(t)}
	e.offlineCfg = e.oauth2Config("web", e.web.ClientSecret, "openid", "offline_access")
	e.offline = e.codeflowTokens(e.offlineCfg, e.b)
	return e
}

// refreshRefused checks that refreshing token at cfg's client answers
// invalid_grant.
func (e *accessEndEnv) refreshRefused(cfg *oauth2.Config, token, what string) {
	e.t.Helper()
	_, err := e.refresh(cfg, token)
	re, ok := err.(*oauth2.RetrieveError)
	if !ok || re.ErrorCode != "invalid_grant" {
		e.t.Fatalf("%s: refresh answered %v, want invalid_grant", what, err)
	}
}

// aliceSessions counts alice's sessions and offline sessions at the admin
// API.
func (e *accessEndEnv) aliceSessions() (online, offline int) {
	e.t.Helper()
	var on, off []map[string]any
	for _, s := range []struct {
		path string
		into *[]map[string]any
	}{{"/sessions", &on}, {"/offline-sessions", &off}} {
		r := e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+s.path, nil)
		mustStatus(e.t, r, http.StatusOK)
		r.decode(e.t, s.into)
	}
	return len(on), len(off)
}

// mustAllBeEnded checks that every token of alice is dead: her access
// tokens at introspection and userinfo, her refresh and offline tokens at
// introspection and refresh, and that the admin API lists no session of
// hers.
func (e *accessEndEnv) mustAllBeEnded(what string) {
	e.t.Helper()
	e.mustBeEnded(e.web, e.webTok.AccessToken, what+": web's access token")
	e.mustBeEnded(e.spa, e.spaTok.AccessToken, what+": spa's access token")
	e.mustBeEnded(e.web, e.offline.AccessToken, what+": the offline grant's access token")
	for _, rt := range []struct {
		cfg   *oauth2.Config
		token string
		name  string
	}{{e.web, e.webTok.RefreshToken, "web's refresh token"}, {e.spa, e.spaTok.RefreshToken, "spa's refresh token"},
		{e.offlineCfg, e.offline.RefreshToken, "the offline token"}} {
		if e.active(rt.cfg, rt.token) {
			e.t.Fatalf("%s: %s introspected as active", what, rt.name)
		}
		e.refreshRefused(rt.cfg, rt.token, what+": "+rt.name)
	}
	if on, off := e.aliceSessions(); on != 0 || off != 0 {
		e.t.Fatalf("%s: the admin API lists %d sessions and %d offline sessions of alice, want none", what, on, off)
	}
}

// Each way an admin ends a user's access ends every session, refresh and
// offline token and access token of theirs, and enabling them again
// revives none; a new sign-in works as before.
func TestUserAccessEndsForGood(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(e *accessEndEnv)
		// again undoes end where there is something to undo.
		again func(e *accessEndEnv)
		// password is alice's password after end.
		password string
	}{
		{"disabled by PUT", func(e *accessEndEnv) {
			rep := map[string]any{"username": "alice", "email": "alice@example.test", "firstName": "Alice",
				"lastName": "Liddell", "enabled": false}
			mustStatus(e.t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID, rep), http.StatusOK)
		}, enableAlice, codeflowPassword},
		{"disabled by PATCH", func(e *accessEndEnv) {
			mustStatus(e.t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+e.aliceID, map[string]any{"enabled": false}),
				http.StatusOK)
		}, enableAlice, codeflowPassword},
		{"password reset by an admin", func(e *accessEndEnv) {
			mustStatus(e.t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/reset-password",
				map[string]any{"password": codeflowPassword + " again", "temporary": false}), http.StatusNoContent)
		}, nil, codeflowPassword + " again"},
		{"second factor removed by an admin", func(e *accessEndEnv) {
			e.totpEnrol(e.aliceID) // after the sign-ins: one that did not use it ends too
			mustStatus(e.t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/mfa/totp", nil),
				http.StatusNoContent)
		}, nil, codeflowPassword},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newAccessEndEnv(t)
			e.mustStand(e.web, e.webTok.AccessToken, "web's access token before")
			e.mustStand(e.web, e.offline.AccessToken, "the offline grant's access token before")
			if !e.active(e.offlineCfg, e.offline.RefreshToken) {
				t.Fatal("the offline token introspected as inactive before")
			}
			tc.end(e)
			e.mustAllBeEnded("after the end")
			if tc.again != nil {
				tc.again(e)
				e.mustAllBeEnded("enabled again")
			}
			e.clock.advance(time.Second)
			fresh, err := e.oauth2Config("cli", e.passwordGrantClient(), "openid").PasswordCredentialsToken(t.Context(),
				"alice", tc.password)
			if err != nil {
				t.Fatalf("a new sign-in: %v", err)
			}
			e.mustStand(e.web, fresh.AccessToken, "a new sign-in's token")
		})
	}
}

func enableAlice(e *accessEndEnv) {
	e.t.Helper()
	mustStatus(e.t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+e.aliceID, map[string]any{"enabled": true}),
		http.StatusOK)
}

// Disabling a client ends its sessions and its refresh, offline and access
// tokens, for good: enabling it again revives none. The user's other
// client keeps its own.
func TestClientAccessEndsForGood(t *testing.T) {
	e := newAccessEndEnv(t)
	e.mustStand(e.spa, e.webTok.AccessToken, "web's access token before, asked by spa")
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/clients/web", map[string]any{"enabled": false}), http.StatusOK)
	check := func(what string) {
		t.Helper()
		// web cannot introspect while disabled: spa asks about its access tokens.
		e.mustBeEnded(e.spa, e.webTok.AccessToken, what+": web's access token")
		e.mustBeEnded(e.spa, e.offline.AccessToken, what+": web's offline grant's access token")
		e.mustStand(e.spa, e.spaTok.AccessToken, what+": spa's access token")
	}
	check("disabled")
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/clients/web", map[string]any{"enabled": true}), http.StatusOK)
	check("enabled again")
	for _, rt := range []struct{ token, name string }{{e.webTok.RefreshToken, "web's refresh token"},
		{e.offline.RefreshToken, "web's offline token"}} {
		if e.active(e.web, rt.token) {
			t.Fatalf("enabled again: %s introspected as active", rt.name)
		}
		e.refreshRefused(e.web, rt.token, "enabled again: "+rt.name)
	}
	if _, off := e.aliceSessions(); off != 0 {
		t.Fatalf("enabled again: %d offline sessions of web listed, want none", off)
	}
	if _, err := e.refresh(e.spa, e.spaTok.RefreshToken); err != nil {
		t.Fatalf("spa's refresh token: %v", err)
	}
}

// nhiEnv is an identity of acme with a client secret and an API key, and
// a confidential client, web, that introspects.
type nhiEnv struct {
	*codeflowEnv
	id, secretID, secret, keyID, key string
	introspector                     *oauth2.Config
}

func newNHIEnv(t *testing.T) *nhiEnv {
	t.Helper()
	e := &nhiEnv{codeflowEnv: newCodeflowEnv(t)}
	r := e.admin(http.MethodPost, "/admin/realms/acme/nhi", map[string]any{"kind": "workload", "name": "worker"})
	mustStatus(t, r, http.StatusCreated)
	e.id = r.object(t)["id"].(string)
	e.secretID, e.secret = e.issue(map[string]any{"type": "client_secret"}, "secret")
	e.keyID, e.key = e.issue(map[string]any{"type": "api_key"}, "apiKey")
	e.introspector = e.oauth2Config("web", e.client("web", nil))
	return e
}

// issue issues a credential of the identity and returns its ID and the
// field of the answer named secretField.
func (e *nhiEnv) issue(body map[string]any, secretField string) (string, string) {
	e.t.Helper()
	r := e.admin(http.MethodPost, "/admin/realms/acme/nhi/"+e.id+"/credentials", body)
	mustStatus(e.t, r, http.StatusCreated)
	out := r.object(e.t)
	return out["id"].(string), out[secretField].(string)
}

// token obtains an access token as the identity with secret (a client
// secret or an API key).
func (e *nhiEnv) token(secret string) string {
	e.t.Helper()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=client_credentials",
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("worker", secret))
	mustStatus(e.t, r, http.StatusOK)
	return r.object(e.t)["access_token"].(string)
}

func (e *nhiEnv) action(path string, body any, want int) *testResponse {
	e.t.Helper()
	r := e.admin(http.MethodPost, "/admin/realms/acme/nhi/"+e.id+path, body)
	mustStatus(e.t, r, want)
	return r
}

// An identity's tokens end with what they were obtained by: all of them
// when it is suspended, for good, and those of one credential when that
// credential is revoked or rotated out, at once, not when they expire.
func TestNHIAccessEndsForGood(t *testing.T) {
	t.Run("suspended then reactivated", func(t *testing.T) {
		e := newNHIEnv(t)
		bySecret, byKey := e.token(e.secret), e.token(e.key)
		e.mustStand(e.introspector, bySecret, "the secret's token before")
		e.action("/suspend", nil, http.StatusOK)
		e.mustBeEnded(e.introspector, bySecret, "suspended: the secret's token")
		e.mustBeEnded(e.introspector, byKey, "suspended: the API key's token")
		e.action("/reactivate", nil, http.StatusOK)
		e.mustBeEnded(e.introspector, bySecret, "reactivated: the secret's token")
		e.mustBeEnded(e.introspector, byKey, "reactivated: the API key's token")
		e.clock.advance(time.Second)
		e.mustStand(e.introspector, e.token(e.secret), "reactivated: a new token")
	})
	t.Run("API key revoked", func(t *testing.T) {
		e := newNHIEnv(t)
		bySecret, byKey := e.token(e.secret), e.token(e.key)
		e.mustStand(e.introspector, byKey, "the API key's token before")
		e.action("/credentials/"+e.keyID+"/revoke", nil, http.StatusOK)
		e.mustBeEnded(e.introspector, byKey, "the revoked API key's token")
		if e.active(e.introspector, e.key) {
			t.Fatal("the revoked API key introspected as active")
		}
		e.mustStand(e.introspector, bySecret, "the client secret's token")
	})
	t.Run("client secret revoked", func(t *testing.T) {
		e := newNHIEnv(t)
		bySecret, byKey := e.token(e.secret), e.token(e.key)
		e.mustStand(e.introspector, bySecret, "the secret's token before")
		e.action("/credentials/"+e.secretID+"/revoke", nil, http.StatusOK)
		e.mustBeEnded(e.introspector, bySecret, "the revoked secret's token")
		e.mustStand(e.introspector, byKey, "the API key's token")
	})
	t.Run("client secret rotated", func(t *testing.T) {
		e := newNHIEnv(t)
		old := e.token(e.secret)
		e.mustStand(e.introspector, old, "the old secret's token before")
		r := e.action("/credentials/"+e.secretID+"/rotate", map[string]any{"gracePeriod": 60}, http.StatusCreated)
		next := e.token(r.object(t)["secret"].(string))
		e.mustStand(e.introspector, old, "the old secret's token within the grace period")
		e.clock.advance(61 * time.Second)
		e.mustBeEnded(e.introspector, old, "the old secret's token past the grace period")
		e.mustStand(e.introspector, next, "the new secret's token")
		r = e.action("/credentials/"+r.object(t)["id"].(string)+"/rotate", nil, http.StatusCreated)
		e.mustBeEnded(e.introspector, next, "the token of a secret rotated out without grace")
		e.mustStand(e.introspector, e.token(r.object(t)["secret"].(string)), "the newest secret's token")
	})
}

// A service account's API key acts at the admin API only while the
// account's user is enabled; the tokens it obtained before a disable stay
// dead once the user is enabled again.
func TestServiceAccountDisabledRefusedAtAdminAPI(t *testing.T) {
	e := newCodeflowEnv(t)
	r := e.admin(http.MethodPost, "/admin/realms/acme/service-accounts",
		map[string]any{"name": "deployer", "adminPermissions": []string{"users:read"}})
	mustStatus(t, r, http.StatusCreated)
	sa := r.object(t)
	r = e.admin(http.MethodPost, "/admin/realms/acme/service-accounts/"+sa["id"].(string)+"/api-keys", map[string]any{"name": "ci"})
	mustStatus(t, r, http.StatusCreated)
	key := r.object(t)["apiKey"].(string)
	users := func() *testResponse {
		return e.request(http.MethodGet, "/admin/realms/acme/users", nil, "Authorization: Bearer "+key)
	}
	mustStatus(t, users(), http.StatusOK)
	r = e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=client_credentials",
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("deployer", key))
	mustStatus(t, r, http.StatusOK)
	tok := r.object(t)["access_token"].(string)
	introspector := e.oauth2Config("web", e.client("web", nil))
	e.mustStand(introspector, tok, "the key's token before")

	user := "/admin/realms/acme/users/" + sa["serviceAccountUserId"].(string)
	mustStatus(t, e.admin(http.MethodPatch, user, map[string]any{"enabled": false}), http.StatusOK)
	mustError(t, users(), http.StatusUnauthorized, "unauthorized", "")
	e.mustBeEnded(introspector, tok, "disabled: the key's token")
	mustStatus(t, e.admin(http.MethodPatch, user, map[string]any{"enabled": true}), http.StatusOK)
	mustStatus(t, users(), http.StatusOK)
	e.mustBeEnded(introspector, tok, "enabled again: the key's token")
}
