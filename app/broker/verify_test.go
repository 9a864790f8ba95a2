package broker_test

import (
	"crypto/rand"
	"crypto/rsa"
	"github.com/idenplane/idenplane/app/apptest"
	"net/http"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app"
)

// Every way an upstream's answer can be wrong ends on an error page and an
// IDENTITY_PROVIDER_LOGIN_ERROR event, and signs no one in.
func TestBrokerRefusesBadUpstreamAnswers(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, nil, func(c *app.Config) { c.OutboundTimeout = 300 * time.Millisecond })
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		bend   func(f *fakeUpstream)
		status int
		text   string
		reason string
	}{
		{"bad signature", func(f *fakeUpstream) { f.signWith = other }, 401, "could not be verified", "invalid_token"},
		{"wrong issuer", func(f *fakeUpstream) {
			f.claims = func(c map[string]any) { c["iss"] = "https://evil.example.test" }
		}, 401, "could not be verified", "invalid_token"},
		{"wrong audience", func(f *fakeUpstream) {
			f.claims = func(c map[string]any) { c["aud"] = "another-client" }
		}, 401, "could not be verified", "invalid_token"},
		{"wrong nonce", func(f *fakeUpstream) {
			f.claims = func(c map[string]any) { c["nonce"] = "replayed-nonce" }
		}, 401, "could not be verified", "invalid_token"},
		{"no nonce", func(f *fakeUpstream) {
			f.claims = func(c map[string]any) { delete(c, "nonce") }
		}, 401, "could not be verified", "invalid_token"},
		{"expired", func(f *fakeUpstream) {
			f.claims = func(c map[string]any) {
				c["iat"], c["exp"] = time.Now().Add(-time.Hour).Unix(), time.Now().Add(-30*time.Minute).Unix()
			}
		}, 401, "could not be verified", "invalid_token"},
		{"no ID token", func(f *fakeUpstream) { f.noIDToken = true }, 401, "could not be verified", "invalid_token"},
		{"no subject", func(f *fakeUpstream) {
			f.claims = func(c map[string]any) { delete(c, "sub") }
		}, 502, "did not tell us enough", "invalid_profile"},
		{"access denied", func(f *fakeUpstream) { f.deny = true }, 403, "cancelled or refused", "access_denied"},
		{"token endpoint hangs", func(f *fakeUpstream) { f.hang = make(chan struct{}) }, 502, "could not be reached", "code_exchange_failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.set(func(f *fakeUpstream) {
				f.signWith, f.claims, f.noIDToken, f.deny = nil, nil, false, false
				if f.hang != nil {
					close(f.hang)
					f.hang = nil
				}
			})
			f.set(c.bend)
			e.t = t
			e.mustErrorPage(e.fakeSignIn(apptest.NewBrowser(t)), c.status, c.text)
			e.mustLoginError(c.reason)
			if n := len(e.events("LOGIN")); n != 0 {
				t.Fatalf("%d LOGIN events", n)
			}
		})
	}
	f.set(func(f *fakeUpstream) {
		f.signWith, f.claims = nil, nil
		if f.hang != nil {
			close(f.hang)
			f.hang = nil
		}
	})
	e.t = t
	claims := e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	if claims["preferred_username"] != "bob" {
		t.Fatalf("claims %v", claims)
	}
	// The request upstream carried a nonce and an S256 challenge; the
	// token endpoint checked the verifier against it.
	last := f.seen[len(f.seen)-1]
	if last.Get("nonce") == "" || last.Get("code_challenge_method") != "S256" || last.Get("scope") != "openid" {
		t.Fatalf("authorization request upstream %v", last)
	}
}

// A token endpoint nobody answers at: the error page, not a 500.
func TestBrokerUpstreamDown(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, map[string]any{"tokenUrl": "http://127.0.0.1:1/token"})
	e.mustErrorPage(e.fakeSignIn(apptest.NewBrowser(t)), http.StatusBadGateway, "could not be reached")
	e.mustLoginError("code_exchange_failed")
}

// The upstream rotates its signing key: the next token names a key the
// cached set does not hold, which is fetched again.
func TestBrokerFollowsKeyRotation(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, nil)
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	f.rotate()
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
}

// Microsoft's common endpoint: the ID token's issuer names the user's
// directory, which must be the token's tid.
func TestBrokerMicrosoftCommonTenant(t *testing.T) {
	const tid = "9188040d-6c67-4c5b-b112-36a304b66dad"
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, map[string]any{"providerType": "microsoft", "issuer": nil})
	for _, c := range []struct {
		name, iss, tid string
		ok             bool
	}{
		{"the user's directory", "https://login.microsoftonline.com/" + tid + "/v2.0", tid, true},
		{"another directory than tid", "https://login.microsoftonline.com/" + tid + "/v2.0", "00000000-0000-0000-0000-000000000000", false},
		{"no tid", "https://login.microsoftonline.com/" + tid + "/v2.0", "", false},
		{"not Microsoft", "https://evil.example.test/" + tid + "/v2.0", tid, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.set(func(f *fakeUpstream) {
				f.claims = func(claims map[string]any) {
					claims["iss"] = c.iss
					if c.tid != "" {
						claims["tid"] = c.tid
					}
				}
			})
			e.t = t
			p := e.fakeSignIn(apptest.NewBrowser(t))
			if c.ok {
				e.mustReachApp(p)
				return
			}
			e.mustErrorPage(p, http.StatusUnauthorized, "could not be verified")
			e.mustLoginError("invalid_token")
		})
	}
}
