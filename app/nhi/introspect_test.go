package nhi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
)

// introspector is a resource server: a confidential client asking the
// introspection endpoint about bearer tokens.
func (e *tokenEnv) introspector(t *testing.T) func(token string) map[string]any {
	t.Helper()
	r := e.s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "resource-server"})
	apptest.MustStatus(t, r, http.StatusCreated)
	secret := r.Object(t)["secret"].(string)
	return func(token string) map[string]any {
		t.Helper()
		resp, err := http.PostForm(e.url+"/realms/acme/protocol/openid-connect/token/introspect",
			url.Values{"token": {token}, "client_id": {"resource-server"}, "client_secret": {secret}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("introspection answered %d", resp.StatusCode)
		}
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return body
	}
}

func TestIntrospectAPIKey(t *testing.T) {
	e := newTokenEnv(t)
	introspect := e.introspector(t)
	key := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "api_key", "scopes": []string{"invoices:read"}, "expiresIn": 3600})
	got := introspect(key.APIKey)
	ra, _ := got["realm_access"].(map[string]any)
	roles, _ := ra["roles"].([]any)
	if got["active"] != true || got["sub"] != e.n.ServiceAccountUserID || got["client_id"] != "billing-worker" ||
		got["scope"] != "invoices:read" || got["token_type"] != "api_key" || !slices.Contains(roles, any("billing")) ||
		got["exp"] != float64(*key.ExpiresTimestamp/1000) {
		t.Fatalf("introspection %v", got)
	}
	for name, token := range map[string]string{
		"a key changed":     key.APIKey[:len(key.APIKey)-2] + "xx",
		"an unknown prefix": "idp_ffffffffffff_" + key.APIKey[len("idp_ffffffffffff_"):],
		"no key at all":     "idp_",
	} {
		if got := introspect(token); got["active"] != false || len(got) != 1 {
			t.Errorf("%s: %v", name, got)
		}
	}
	path := nhiPath + "/" + e.n.ID
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/suspend", nil), http.StatusOK)
	if got := introspect(key.APIKey); got["active"] != false {
		t.Errorf("key of a suspended identity: %v", got)
	}
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/reactivate", nil), http.StatusOK)
	// A rotated key stands through its grace period, and not after.
	r := e.s.Admin(http.MethodPost, path+"/credentials/"+key.ID+"/rotate", map[string]any{"gracePeriod": 30})
	apptest.MustStatus(t, r, http.StatusCreated)
	newKey := r.Object(t)["apiKey"].(string)
	if introspect(key.APIKey)["active"] != true || introspect(newKey)["active"] != true {
		t.Fatal("during the grace period both keys stand")
	}
	e.clk.Advance(31 * time.Second)
	if introspect(key.APIKey)["active"] != false || introspect(newKey)["active"] != true {
		t.Fatal("after the grace period only the new key stands")
	}
	// Expired, then revoked.
	e.clk.Advance(time.Hour)
	if got := introspect(newKey); got["active"] != false {
		t.Errorf("expired key: %v", got)
	}
	other := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "api_key"})
	if got := introspect(other.APIKey); got["active"] != true || got["exp"] != nil || got["scope"] != "" {
		t.Errorf("a key without expiry or scopes: %v", got)
	}
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/credentials/"+other.ID+"/revoke", nil), http.StatusOK)
	if got := introspect(other.APIKey); got["active"] != false {
		t.Errorf("revoked key: %v", got)
	}
	// Each answer for an active key counts as an introspection and is in
	// the audit log, by the resource server.
	var m struct{ Introspections int64 }
	st := e.s.Admin(http.MethodGet, nhiPath+"/"+e.n.ID+"/stats", nil)
	var stats struct {
		Usage []struct{ Introspections int64 }
	}
	st.Decode(t, &stats)
	for _, u := range stats.Usage {
		m.Introspections += u.Introspections
	}
	if m.Introspections != 5 {
		t.Errorf("introspections counted %d, want 5: %s", m.Introspections, st.Body)
	}
	uses := auditLog(t, e.s, "?action=CREDENTIAL_USE&credentialId="+other.ID)
	if len(uses) != 1 || uses[0].Actor.Type != "client" || uses[0].Actor.ID != "resource-server" {
		t.Errorf("audit of an introspection %+v", uses)
	}
}
