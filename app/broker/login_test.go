package broker_test

import (
	"context"
	"github.com/idenplane/idenplane/app/apptest"
	"net/http"
	"slices"
	"testing"
)

// A person signs in to app through a second realm of the server, a real
// OpenID Connect provider (discovery, real keys, the code flow with PKCE),
// in a browser with a cookie jar: the first time a user is created
// through the identity core and linked; the next time the link finds the
// same user.
func TestBrokerFirstLoginThenLinkedLogin(t *testing.T) {
	e := newEnv(t, nil)
	b := apptest.NewBrowser(t)
	claims := e.mustReachApp(e.signIn(b, "alice", alicePassword))
	user := e.acmeUser("alice")
	if claims["sub"] != user["id"] || claims["preferred_username"] != "alice" || claims["email"] != "alice@example.test" {
		t.Fatalf("ID token claims %v for user %v", claims, user)
	}
	amr, _ := claims["amr"].([]any)
	if !slices.Contains(amr, any("fed")) {
		t.Fatalf("amr %v lacks fed", claims["amr"])
	}
	if user["firstName"] != "Alice" || user["lastName"] != "Liddell" || user["emailVerified"] != false {
		t.Fatalf("created user %v", user)
	}
	links, err := e.s.Store.ListFederatedIdentities(context.Background(), e.s.Realm("acme").ID, user["id"].(string))
	if err != nil || len(links) != 1 || links[0].Alias != "corp" || links[0].Username != "alice" || links[0].Email != "alice@example.test" {
		t.Fatalf("links %+v %v", links, err)
	}
	if evs := e.events("IDENTITY_PROVIDER_FIRST_LOGIN"); len(evs) != 1 || evs[0]["userId"] != user["id"] {
		t.Fatalf("first login events %v", evs)
	}

	// A new browser: the upstream asks again, the link finds the user.
	b = apptest.NewBrowser(t)
	claims = e.mustReachApp(e.signIn(b, "alice", alicePassword))
	if claims["sub"] != user["id"] {
		t.Fatalf("second sign-in as %v, want %v", claims["sub"], user["id"])
	}
	if evs := e.events("IDENTITY_PROVIDER_LOGIN"); len(evs) != 1 || evs[0]["userId"] != user["id"] {
		t.Fatalf("login events %v", evs)
	}
	if n := len(e.events("IDENTITY_PROVIDER_FIRST_LOGIN")); n != 1 {
		t.Fatalf("%d first logins", n)
	}
}

// The state is bound to the browser that started the sign-in, and is used
// once.
func TestBrokerCallbackState(t *testing.T) {
	e := newEnv(t, nil)
	b := apptest.NewBrowser(t)
	callback := e.upstreamSignIn(b, e.toUpstreamLogin(b), "alice", alicePassword)

	// Another browser with the whole callback URL.
	e.mustErrorPage(apptest.NewBrowser(t).Get(callback.String()), http.StatusForbidden, "another browser")
	e.mustLoginError("different_browser")
	// The state was used up by that attempt: the right browser is refused too.
	e.mustErrorPage(b.Get(callback.String()), http.StatusBadRequest, "could not be checked")
	e.mustLoginError("invalid_state")

	// A fresh sign-in succeeds; replaying its callback does not.
	b = apptest.NewBrowser(t)
	callback = e.upstreamSignIn(b, e.toUpstreamLogin(b), "alice", alicePassword)
	e.mustReachApp(b.Follow(b.Get(callback.String()), e.base))
	e.mustErrorPage(b.Get(callback.String()), http.StatusBadRequest, "could not be checked")
	e.mustLoginError("invalid_state")

	for _, q := range []string{"?state=forged&code=x", "?code=x", "?state=a&state=b&code=x", "?state=only"} {
		e.mustErrorPage(b.Get(e.issuer("acme")+"/broker/corp/callback"+q), http.StatusBadRequest, "could not be checked")
	}
	e.mustLoginError("invalid_request")
}
