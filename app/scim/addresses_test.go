package scim_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// Addresses (RFC 7643 §4.1.2): kept whole, changed by PATCH, and found by
// filters as the PATCH left them.
func TestAddresses(t *testing.T) {
	p := newProvisioner(t)
	work := map[string]any{"type": "work", "formatted": "100 Universal City Plaza\nHollywood, CA 91608 USA",
		"streetAddress": "100 Universal City Plaza", "locality": "Hollywood", "region": "CA", "postalCode": "91608",
		"country": "US", "primary": true}
	u := p.create(userBody("bjensen", "addresses", []any{work}))
	id := u["id"].(string)
	if !equalJSON(u["addresses"], []any{work}) {
		t.Fatalf("addresses %v", u["addresses"])
	}
	found := func(filter string) string {
		t.Helper()
		return userNames(t, p.do(http.MethodGet, "/Users?filter="+url.QueryEscape(filter), nil))
	}
	if got := found(`addresses[type eq "work" and region eq "ca"]`); got != "bjensen" {
		t.Fatalf("before PATCH: %q", got)
	}

	r := p.do(http.MethodPatch, "/Users/"+id, patchBody(
		op("add", "addresses", []any{map[string]any{"type": "home", "locality": "Nice", "country": "FR"}}),
		op("replace", `addresses[type eq "work"].locality`, "Burbank"),
		op("add", `addresses[type eq "other"].country`, "DE"),
	))
	apptest.MustStatus(t, r, http.StatusOK)
	got := asList(r.Object(t)["addresses"])
	if len(got) != 3 || got[0].(map[string]any)["locality"] != "Burbank" || got[1].(map[string]any)["locality"] != "Nice" ||
		!equalJSON(got[2], map[string]any{"type": "other", "country": "DE"}) {
		t.Fatalf("after PATCH %s", r.Body)
	}
	for _, c := range []struct{ filter, want string }{
		{`addresses[type eq "work" and locality eq "Burbank"]`, "bjensen"},
		{`addresses.locality eq "hollywood"`, ""},
		{`addresses[type eq "home" and country eq "fr"]`, "bjensen"},
		{`addresses[type eq "work" and country eq "fr"]`, ""},
		{`addresses[type eq "other" and country eq "de"]`, "bjensen"},
	} {
		if got := found(c.filter); got != c.want {
			t.Errorf("%s: %q, want %q", c.filter, got, c.want)
		}
	}

	apptest.MustStatus(t, p.do(http.MethodPatch, "/Users/"+id, patchBody(op("remove", `addresses[type eq "home"]`, nil))), http.StatusOK)
	if got := found(`addresses.country eq "FR"`); got != "" {
		t.Fatalf("after removing the home address: %q", got)
	}
	apptest.MustStatus(t, p.do(http.MethodPatch, "/Users/"+id, patchBody(op("remove", "addresses", nil))), http.StatusOK)
	if got := found(`addresses pr`); got != "" {
		t.Fatalf("after removing every address: %q", got)
	}
}
