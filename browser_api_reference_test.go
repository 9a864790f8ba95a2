package main

import (
	"net/http"
	"testing"
)

// The API reference page renders in Chromium, under its own
// Content-Security-Policy, and passes axe-core (landed checks every page).
func TestBrowserAPIReference(t *testing.T) {
	e := newBrowserEnv(t)
	b := e.browser()
	if status := b.open("", e.srv.base+"/admin/openapi"); status != http.StatusOK {
		t.Fatalf("reference page: status %d", status)
	}
	if h := b.heading(); h != "Idenplane API reference" {
		t.Errorf("heading %q", h)
	}
	b.mustShow("/admin/realms/{realm}/users", "users:write", "openid-connect", "scim")
}
