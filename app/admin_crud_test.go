package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The path loaders: a known resource is loaded by the path's ID under its
// parent, an unknown one is a 404 naming it, and any other failure of the
// store passes through as it is, never as a 404.
func TestPathLoaders(t *testing.T) {
	s := newTestServer(t)
	realmID := s.createRealm("acme")["id"].(string)
	boom := errors.New("database is locked")
	// get stands in for a store lookup: it knows the thing "t1" of the realm.
	type thing struct{ parent, id string }
	get := func(_ context.Context, parentID, id string) (*thing, error) {
		switch {
		case id == "broken":
			return nil, fmt.Errorf("thing %s: %w", id, boom)
		case parentID == realmID && id == "t1":
			return &thing{parentID, id}, nil
		}
		return nil, fmt.Errorf("thing %s: %w", id, store.ErrNotFound)
	}
	request := func(realm, id string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/admin/realms/"+realm+"/things/"+id, nil)
		return mux.SetURLVars(r, map[string]string{"realm": realm, "thingId": id})
	}
	for _, tc := range []struct {
		name, realm, id string
		want            *thing
		notFound        string // the 404's message
		passThrough     error
	}{
		{name: "known", realm: "acme", id: "t1", want: &thing{realmID, "t1"}},
		{name: "unknown thing", realm: "acme", id: "t2", notFound: "widget t2 not found"},
		{name: "unknown realm", realm: "nope", id: "t1", notFound: "realm nope not found"},
		{name: "store failure", realm: "acme", id: "broken", passThrough: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			realm, got, err := realmChild(s.app, request(tc.realm, tc.id), "thingId", "widget", get)
			switch {
			case tc.notFound != "":
				var e *apperr.Error
				if !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Code != apperr.CodeNotFound || e.Message != tc.notFound {
					t.Fatalf("error %#v, want a 404 %q", err, tc.notFound)
				}
			case tc.passThrough != nil:
				var e *apperr.Error
				if !errors.Is(err, tc.passThrough) || errors.As(err, &e) {
					t.Fatalf("error %#v, want the store's own", err)
				}
			default:
				if err != nil || realm.ID != realmID || *got != *tc.want {
					t.Fatalf("loaded realm %v, %+v, %v; want realm %s and %+v", realm, got, err, realmID, tc.want)
				}
			}
		})
	}
	t.Run("under another parent", func(t *testing.T) {
		got, err := pathChild(request("acme", "t1"), "thingId", "widget", "another-parent", get)
		var e *apperr.Error
		if got != nil || !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Message != "widget t1 not found" {
			t.Fatalf("loaded %+v, %v; want the 404 of a thing the parent does not have", got, err)
		}
	})
}
