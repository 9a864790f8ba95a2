package app

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// adminQueryFuzzPaths are the admin listings whose query parameters
// filter and page: events and their CSV exports, users, groups, clients,
// roles, sessions, locked users.
var adminQueryFuzzPaths = []string{
	"/admin/realms/acme/events",
	"/admin/realms/acme/admin-events",
	"/admin/realms/acme/events/login/export",
	"/admin/realms/acme/events/admin/export",
	"/admin/realms/acme/users",
	"/admin/realms/acme/groups",
	"/admin/realms/acme/clients",
	"/admin/realms/acme/roles",
	"/admin/realms/acme/sessions",
	"/admin/realms/acme/brute-force/locked-users",
}

// FuzzAdminListQuery fuzzes the query string of the admin listings, over
// events whose fields hold what an attacker could have put there.
// Invariants: 200 or a 4xx in the API's error shape, never a 5xx; a read
// writes nothing; a CSV export parses, and no cell of it starts as a
// spreadsheet formula.
func FuzzAdminListQuery(f *testing.F) {
	e := newFuzzEnv(f)
	e.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test"})
	e.groupsTestCreate("acme", "staff", "")
	mustStatus(f, e.admin(http.MethodPut, "/admin/realms/acme/events/config",
		map[string]any{"eventsEnabled": true, "eventsExpiration": 86400, "adminEventsEnabled": true}), http.StatusOK)
	now := time.Now().UnixMilli()
	hostile := []string{"=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\rx", "a,b", `"q"`, "line\nbreak", "ü"}
	for i, h := range hostile {
		if err := e.store.AddLoginEvent(f.Context(), &store.LoginEvent{ID: uuid.NewString(), RealmID: e.realm.ID,
			Time: now - int64(i), Type: "LOGIN_ERROR", UserID: h, ClientID: h, IPAddress: h, Error: h,
			Details: map[string]string{"username": h, h: h}}); err != nil {
			f.Fatal(err)
		}
	}
	mustStatus(f, e.admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "=HYPERLINK(\"x\")"}), http.StatusCreated)
	for i := range adminQueryFuzzPaths {
		f.Add(uint8(i), "")
		f.Add(uint8(i), "first=0&max=1")
		f.Add(uint8(i), "first=-1&max=x")
	}
	for _, q := range []string{"type=LOGIN_ERROR&max=1000", "type=LOGIN,LOGIN_ERROR&client=x&user=y", "dateFrom=2026-11-21&dateTo=2026-11-20",
		"dateFrom=2026-11-21T10:00:00Z&dateTo=2026-02-30", "userId=a0000000-0000-4000-8000-000000000001", "ipAddress=%3D1%2B1",
		"type=&type=LOGIN", "max=9999999999999999999999"} {
		f.Add(uint8(0), q)
		f.Add(uint8(2), q)
	}
	for _, q := range []string{"operationType=CREATE&resourceType=CLIENT", "resourcePath=users/*", "authUser=x&dateTo=2026-11-21"} {
		f.Add(uint8(1), q)
		f.Add(uint8(3), q)
	}
	for _, q := range []string{"search=ali", "search=%25", "search=_", "username=alice&exact=true", "email=alice@example.test",
		"skip=5&limit=0", "search=%00", "briefRepresentation=true", "exact=maybe"} {
		f.Add(uint8(4), q)
	}
	f.Add(uint8(5), "search=st&first=0&max=10&briefRepresentation=false")
	f.Add(uint8(6), "clientId=app&search=true")
	f.Fuzz(func(t *testing.T, which uint8, query string) {
		path := adminQueryFuzzPaths[int(which)%len(adminQueryFuzzPaths)]
		target := path + "?" + query
		if _, err := url.ParseRequestURI(target); err != nil {
			return
		}
		s := e.on(t)
		before := e.dataVersion(t)
		r := s.send(http.MethodGet, target, nil, adminFuzzHeaders)
		e.fuzzNoServerError(t, "GET "+target, r)
		if after := e.dataVersion(t); after != before {
			t.Fatalf("GET %s wrote to the database", target)
		}
		if r.Status != http.StatusOK {
			fuzzMustAPIError(t, "GET "+target, r)
			return
		}
		if strings.HasSuffix(path, "/export") {
			queryFuzzMustCSV(t, target, r.Body)
		}
	})
}

// queryFuzzMustCSV parses an export and checks no cell would run as a
// formula.
func queryFuzzMustCSV(t *testing.T, target string, body []byte) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("GET %s: not CSV: %v\n%s", target, err, body)
	}
	for _, row := range rows {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Fatalf("GET %s: cell %q would run as a formula", target, cell)
			}
		}
	}
}
