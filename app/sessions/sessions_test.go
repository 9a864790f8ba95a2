package sessions_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Each refusal names what the path addresses and the realm lacks: the
// realm, the user, the client, the consent, the session of the type asked
// for, the offline session; a type the API does not know is a 400 on its
// parameter.
func TestAnswersNameThePath(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	s.CreateRealm("other")
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web"}), http.StatusCreated)
	alice := s.CreateUser("acme", map[string]any{"username": "alice"})["id"].(string)
	bob := s.CreateUser("other", map[string]any{"username": "bob"})["id"].(string)
	now := time.Now().UnixMilli()
	if err := s.Store.CreateSession(context.Background(), &store.Session{ID: "a-sso", RealmID: s.Realm("acme").ID,
		UserID: alice, Kind: store.SessionSSO, StartedAt: now, LastAccessAt: now, ExpiresAt: now + time.Hour.Milliseconds()}); err != nil {
		t.Fatal(err)
	}

	acme, users := "/admin/realms/acme", "/admin/realms/acme/users/"
	for _, tc := range []struct {
		method, path string
		status       int
		code, field  string
		want         string
	}{
		{http.MethodGet, "/admin/realms/nope/sessions", 404, "not_found", "", "realm nope not found"},
		{http.MethodGet, users + bob + "/sessions", 404, "not_found", "", "user " + bob + " not found"},
		{http.MethodDelete, users + "nope/sessions", 404, "not_found", "", "user nope not found"},
		{http.MethodGet, users + "nope/consents", 404, "not_found", "", "user nope not found"},
		{http.MethodGet, users + bob + "/consents/history", 404, "not_found", "", "user " + bob + " not found"},
		{http.MethodDelete, users + alice + "/consents/nope", 404, "not_found", "", "client nope not found"},
		{http.MethodDelete, users + alice + "/consents/web", 404, "not_found", "", "consent of user " + alice + " to client web not found"},
		{http.MethodGet, users + "nope/offline-sessions", 404, "not_found", "", "user nope not found"},
		{http.MethodDelete, users + alice + "/offline-sessions/t1", 404, "not_found", "", "offline session t1 not found"},
		{http.MethodDelete, acme + "/sessions/a-sso", 404, "not_found", "", "oauth session a-sso not found"},
		{http.MethodDelete, acme + "/sessions/nope?type=sso", 404, "not_found", "", "sso session nope not found"},
		{http.MethodDelete, acme + "/sessions/a-sso?type=saml", 400, "invalid_parameter", "type", "type: must be oauth or sso"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := s.Admin(tc.method, tc.path, nil)
			apptest.MustError(t, r, tc.status, tc.code, tc.field)
			var body httpx.ErrorBody
			r.Decode(t, &body)
			if body.Description != tc.want {
				t.Errorf("error_description %q, want %q", body.Description, tc.want)
			}
		})
	}

	// The refusals ended nothing; the end of the SSO session is counted.
	r := s.Admin(http.MethodDelete, acme+"/sessions/a-sso?type=sso", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if got, want := string(r.Body), `{"deleted":1,"type":"sso"}`+"\n"; got != want {
		t.Errorf("end of a-sso answered %s, want %s", got, want)
	}
	r = s.Admin(http.MethodDelete, users+alice+"/sessions", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if got, want := string(r.Body), `{"count":0}`+"\n"; got != want {
		t.Errorf("logout of alice answered %s, want %s", got, want)
	}
}
