package console_test

import (
	"net/http"
	"regexp"
	"slices"
	"testing"
)

// A named admin API key made from the console is shown once and works;
// rotated from the console, the old secret stops and the new one, shown
// once, works; revoked, it stops. Each through the admin API keys' routes.
func TestConsoleAdminAPIKeys(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	if !slices.Contains(c.get("/console/").Links(t), f.base+"/console/api-keys") {
		t.Fatal("the navigation has no link to the API keys")
	}
	works := func(key string) int {
		return f.srv.Request(http.MethodGet, "/admin/realms/acme", nil, "X-Admin-API-Key: "+key).Status
	}
	secret := regexp.MustCompile(`id="client-secret" value="([^"]+)"`)
	const form = "/console/api-keys/new"
	for field, values := range map[string]map[string]string{
		"name":          {"name": "", "permissions": "realm:read"},
		"permissions":   {"name": "deploy", "permissions": "realm:nothing"},
		"expiresInDays": {"name": "deploy", "permissions": "realm:read", "expiresInDays": "soon"},
	} {
		p := c.submit(form, form, values)
		if p.Status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="`+field+`"[^>]*aria-invalid="true"`).Match(p.Body) {
			t.Errorf("a bad %s: %d %s", field, p.Status, p.Body)
		}
	}
	p := c.submit(form, form, map[string]string{"name": "deploy", "permissions": "realm:read", "expiresInDays": "30"})
	m := secret.FindSubmatch(p.Body)
	if p.Status != http.StatusCreated || m == nil {
		t.Fatalf("the key is not shown: %d %s", p.Status, p.Body)
	}
	first := string(m[1])
	if got := works(first); got != http.StatusOK {
		t.Fatalf("the key shown: %d", got)
	}
	var keys []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/api-keys", nil).Decode(t, &keys)
	i := slices.IndexFunc(keys, func(k map[string]any) bool { return k["name"] == "deploy" })
	if i < 0 || keys[i]["expiresAt"] == nil {
		t.Fatalf("keys %v, want deploy with an expiry", keys)
	}
	id := keys[i]["id"].(string)

	p = c.submit("/console/api-keys/"+id+"/rotate", "/console/api-keys/"+id+"/rotate", nil)
	m = secret.FindSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil || string(m[1]) == first {
		t.Fatalf("the rotated key is not shown: %d %s", p.Status, p.Body)
	}
	second := string(m[1])
	if old, now := works(first), works(second); old != http.StatusUnauthorized || now != http.StatusOK {
		t.Fatalf("after the rotation: the old key %d, the new %d", old, now)
	}

	p = c.submit("/console/api-keys/"+id+"/revoke", "/console/api-keys/"+id+"/revoke", nil)
	if loc := p.Location(t); loc.Path != "/console/api-keys" || loc.Query().Get("done") != "console.done.keyRevoked" {
		t.Fatalf("after the revocation: %d %s", p.Status, p.Body)
	}
	if got := works(second); got != http.StatusUnauthorized {
		t.Fatalf("the revoked key: %d", got)
	}
}
