package app

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/store"
)

// The events as the admin API shows them, under the names these tests use.
type (
	adminEventRep  = events.AdminEventRep
	authDetailsRep = events.AuthDetailsRep
	loginEventRep  = events.LoginEventRep
)

// eventsTestSeedLogin inserts login events as the login code will, in one
// transaction.
func eventsTestSeedLogin(t *testing.T, s *testServer, events ...*store.LoginEvent) {
	t.Helper()
	err := s.store.Tx(context.Background(), func(tx *store.Store) error {
		for _, e := range events {
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

func eventsTestLoginIDs(s *testServer, realm, query string) string {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/"+realm+"/events"+query, nil)
	mustStatus(s.t, r, http.StatusOK)
	var events []loginEventRep
	r.decode(s.t, &events)
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return strings.Join(ids, " ")
}
