package ldapfed_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/store"
)

// A user the directory no longer has is disabled by the full sync, and the
// applications they were signed in to hear of it by back-channel logout,
// as they do when an administrator disables the user.
func TestSyncDisableSendsBackchannelLogout(t *testing.T) {
	subjects := make(chan string, 4)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.PostFormValue("logout_token")
		if parts := strings.Split(token, "."); len(parts) == 3 {
			var claims struct{ Sub string }
			if payload, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil && json.Unmarshal(payload, &claims) == nil {
				subjects <- claims.Sub
			}
		}
	}))
	t.Cleanup(rc.Close)

	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("cy", "Cy", "Oh", "cy@example.org", "pw"))
	// Live: the logout deliveries are one of its background jobs.
	s, _ := realapp.Live(t, func(c *app.Config) {
		c.OutboundAllowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	s.CreateRealm("acme")
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{
		"clientId": "wiki", "redirectUris": []string{"https://wiki.example.test/cb"}, "backchannelLogoutUri": rc.URL + "/logout",
	}), http.StatusCreated)
	p := createProvider(t, s, directoryProvider("corp", d))
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 2, created: 2})

	ctx := context.Background()
	realm := s.Realm("acme")
	wiki, err := s.Store.GetClientByClientID(ctx, realm.ID, "wiki")
	if err != nil {
		t.Fatal(err)
	}
	cy := realmUser(t, s, "cy")
	now := time.Now().UnixMilli()
	for _, sess := range []*store.Session{
		{ID: "cy-sso", Kind: store.SessionSSO},
		{ID: "cy-wiki", Kind: store.SessionOAuth, ParentID: "cy-sso", ClientID: wiki.ID},
	} {
		sess.RealmID, sess.UserID, sess.StartedAt, sess.LastAccessAt, sess.ExpiresAt = realm.ID, cy.ID, now, now, now+3_600_000
		sess.AuthTime, sess.AMR = now, []string{"pwd"}
		if err := s.Store.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}

	d.Modify("dn: uid=cy," + d.PeopleDN + "\nchangetype: delete\n")
	mustCount(t, syncNow(t, s, p.ID, "?action=full"), counts{read: 1, disabled: 1})
	select {
	case sub := <-subjects:
		if sub != cy.ID {
			t.Fatalf("logout token for %q, want cy (%s)", sub, cy.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no back-channel logout reached the application after the sync disabled cy")
	}
}
