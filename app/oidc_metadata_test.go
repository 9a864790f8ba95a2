package app

import (
	"bytes"
	"net/http"
	"slices"
	"testing"
)

// RFC 8414 metadata is the discovery document, at the path RFC 8414 §3.1
// derives from the issuer and at the issuer's own, as Keycloak serves it.
func TestAuthorizationServerMetadata(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	discovery := s.request(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil)
	mustStatus(t, discovery, http.StatusOK)
	doc := discovery.object(t)
	locales, _ := doc["ui_locales_supported"].([]any)
	for _, tag := range testCatalogues.Tags() {
		if !slices.Contains(locales, any(tag)) {
			t.Fatalf("ui_locales_supported %v lacks %s", doc["ui_locales_supported"], tag)
		}
	}
	if len(locales) != len(testCatalogues.Tags()) {
		t.Fatalf("ui_locales_supported %v, want the pages' languages %v", locales, testCatalogues.Tags())
	}
	for _, path := range []string{"/.well-known/oauth-authorization-server/realms/acme", "/realms/acme/.well-known/oauth-authorization-server"} {
		r := s.request(http.MethodGet, path, nil)
		mustStatus(t, r, http.StatusOK)
		if !bytes.Equal(r.Body, discovery.Body) || r.Header.Get("Content-Type") != discovery.Header.Get("Content-Type") {
			t.Fatalf("%s: %s, want the discovery document %s", path, r.Body, discovery.Body)
		}
		if r.object(t)["issuer"] != s.issuer("acme") {
			t.Fatalf("%s: issuer %v", path, r.object(t)["issuer"])
		}
	}
	for _, path := range []string{"/.well-known/oauth-authorization-server/realms/nope", "/realms/nope/.well-known/oauth-authorization-server"} {
		mustStatus(t, s.request(http.MethodGet, path, nil), http.StatusNotFound)
	}
}

// TestDiscoveryListsRealmLanguages: ui_locales_supported is what the realm
// offers once it narrows its languages.
func TestDiscoveryListsRealmLanguages(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"supportedLocales": []string{"fr", "de"}}), http.StatusOK)
	doc := s.request(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil).object(t)
	if locales, _ := doc["ui_locales_supported"].([]any); !slices.Equal(locales, []any{"fr", "de"}) {
		t.Fatalf("ui_locales_supported %v, want [fr de]", doc["ui_locales_supported"])
	}
}
