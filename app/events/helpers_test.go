package events_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/store"
)

// createRealm creates a realm with admin events on (or off) over the API
// and returns its ID.
func createRealm(s *apptest.Server, name string, adminEvents bool) string {
	s.T.Helper()
	r := s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": name, "adminEventsEnabled": adminEvents})
	apptest.MustStatus(s.T, r, http.StatusCreated)
	return r.Object(s.T)["id"].(string)
}

// adminEvents lists a realm's admin events, with an optional query.
func adminEvents(s *apptest.Server, realm, query string) []events.AdminEventRep {
	s.T.Helper()
	r := s.Admin(http.MethodGet, "/admin/realms/"+realm+"/admin-events"+query, nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var out []events.AdminEventRep
	r.Decode(s.T, &out)
	return out
}

// loginEventIDs lists the IDs of a realm's login events, with an optional
// query.
func loginEventIDs(s *apptest.Server, realm, query string) string {
	s.T.Helper()
	r := s.Admin(http.MethodGet, "/admin/realms/"+realm+"/events"+query, nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var list []events.LoginEventRep
	r.Decode(s.T, &list)
	ids := make([]string, len(list))
	for i, e := range list {
		ids[i] = e.ID
	}
	return strings.Join(ids, " ")
}

// seedAdminEvents inserts admin events straight through the store.
func seedAdminEvents(t testing.TB, s *apptest.Server, list ...*store.AdminEvent) {
	t.Helper()
	err := s.Store.Tx(context.Background(), func(tx *store.Store) error {
		for _, e := range list {
			if err := tx.AddAdminEvent(context.Background(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seedLoginEvents inserts login events as the login code does, in one
// transaction.
func seedLoginEvents(t testing.TB, s *apptest.Server, list ...*store.LoginEvent) {
	t.Helper()
	err := s.Store.Tx(context.Background(), func(tx *store.Store) error {
		for _, e := range list {
			if err := tx.AddLoginEvent(context.Background(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// millis is the Unix milliseconds of an RFC 3339 time.
func millis(t *testing.T, rfc3339 string) int64 {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMilli()
}

// badParams are the malformed filters both event queries and both exports
// refuse, with the parameter at fault.
var badParams = []struct{ query, field string }{
	{"dateFrom=2026-13-01", "dateFrom"},
	{"dateFrom=21/11/2026", "dateFrom"},
	{"dateFrom=yesterday", "dateFrom"},
	{"dateTo=2026-11-21T10:00:00", "dateTo"}, // no zone
	{"dateTo=1732147200000", "dateTo"},
	{"dateFrom=2026-11-22&dateTo=2026-11-21", "dateFrom"},
	{"dateFrom=2026-11-21T12:00:00Z&dateTo=2026-11-21T11:59:59Z", "dateFrom"},
	{"first=-1", "first"},
	{"first=x", "first"},
	{"max=x", "max"},
	{"max=0", "max"},
}
