package events_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/store"
)

// fetchCSV fetches an export and parses it, checking the download headers.
func fetchCSV(t *testing.T, s *apptest.Server, path, filename string) [][]string {
	t.Helper()
	r := s.Admin(http.MethodGet, path, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); cd != `attachment; filename="`+filename+`"` {
		t.Fatalf("Content-Disposition %q", cd)
	}
	records, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("export is not valid CSV: %v\n%s", err, r.Body)
	}
	return records
}

func TestAdminEventsExport(t *testing.T) {
	s := realapp.New(t)
	realmID := createRealm(s, "acme", false)
	otherID := createRealm(s, "other", false)
	seedAdminEvents(t, s,
		&store.AdminEvent{ID: "e1", RealmID: realmID, Time: millis(t, "2026-11-21T10:00:00.5Z"),
			OperationType: "CREATE", ResourceType: "USER", ResourcePath: "users/u1", AuthType: "api-key",
			IPAddress: "192.0.2.1", Representation: `{"name":"a, \"b\"","note":"line1` + "\\n" + `line2"}`},
		&store.AdminEvent{ID: "e2", RealmID: realmID, Time: millis(t, "2026-11-22T08:30:00Z"),
			OperationType: "UPDATE", ResourceType: "GROUP", ResourcePath: "=HYPERLINK(\"http://evil\")",
			AuthType: "user", AuthUserID: "c0000000-0000-4000-8000-000000000001", AuthUsername: "@admin",
			IPAddress: "-1+2", Representation: "+cmd|' /C calc'!A0"},
		&store.AdminEvent{ID: "x1", RealmID: otherID, Time: 1, OperationType: "CREATE", ResourceType: "USER", AuthType: "api-key"},
	)
	got := fetchCSV(t, s, "/admin/realms/acme/events/admin/export", "acme-admin-events.csv")
	want := [][]string{
		{"id", "time", "realmId", "operationType", "resourceType", "resourcePath", "authType", "authUserId",
			"authUsername", "ipAddress", "representation"},
		{"e2", "2026-11-22T08:30:00.000Z", realmID, "UPDATE", "GROUP", `'=HYPERLINK("http://evil")`, "user",
			"c0000000-0000-4000-8000-000000000001", "'@admin", "'-1+2", "'+cmd|' /C calc'!A0"},
		{"e1", "2026-11-21T10:00:00.500Z", realmID, "CREATE", "USER", "users/u1", "api-key", "", "", "192.0.2.1",
			`{"name":"a, \"b\"","note":"line1\nline2"}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("export\n got %q\nwant %q", got, want)
	}

	// Filters apply; with none matching, the header row alone.
	if got := fetchCSV(t, s, "/admin/realms/acme/events/admin/export?operationType=CREATE&dateTo=2026-11-21",
		"acme-admin-events.csv"); len(got) != 2 || got[1][0] != "e1" {
		t.Fatalf("filtered export %q", got)
	}
	if got := fetchCSV(t, s, "/admin/realms/acme/events/admin/export?resourceType=CLIENT",
		"acme-admin-events.csv"); len(got) != 1 || got[0][0] != "id" {
		t.Fatalf("empty export %q, want the header alone", got)
	}
	if got := fetchCSV(t, s, "/admin/realms/other/events/admin/export", "other-admin-events.csv"); len(got) != 2 || got[1][0] != "x1" {
		t.Fatalf("other realm's export %q", got)
	}
}

func TestEventsExportEveryRowUnlessPaged(t *testing.T) {
	s := realapp.New(t)
	realmID := createRealm(s, "acme", false)
	var admin []*store.AdminEvent
	var login []*store.LoginEvent
	for i := range 1234 {
		admin = append(admin, &store.AdminEvent{ID: fmt.Sprintf("e%04d", i), RealmID: realmID, Time: int64(i),
			OperationType: "CREATE", ResourceType: "USER", AuthType: "api-key"})
		login = append(login, &store.LoginEvent{ID: fmt.Sprintf("l%04d", i), RealmID: realmID, Time: int64(i), Type: "LOGIN"})
	}
	seedAdminEvents(t, s, admin...)
	seedLoginEvents(t, s, login...)
	for kind, prefix := range map[string]string{"admin": "e", "login": "l"} {
		base := "/admin/realms/acme/events/" + kind + "/export"
		file := "acme-" + kind + "-events.csv"
		// More rows than a query page and than one flush, all in order.
		all := fetchCSV(t, s, base, file)
		if len(all) != 1235 {
			t.Fatalf("%s export: %d records, want the header and 1234 rows", kind, len(all))
		}
		for i, rec := range all[1:] {
			if want := fmt.Sprintf("%s%04d", prefix, 1233-i); rec[0] != want {
				t.Fatalf("%s export row %d is %s, want %s", kind, i, rec[0], want)
			}
		}
		page := fetchCSV(t, s, base+"?first=10&max=3", file)
		if len(page) != 4 || page[1][0][1:] != "1223" || page[3][0][1:] != "1221" {
			t.Fatalf("%s export page %q", kind, page)
		}
		if got := fetchCSV(t, s, base+"?first=1230", file); len(got) != 5 {
			t.Fatalf("%s export from 1230: %d records", kind, len(got))
		}
		// No page size limit on exports.
		apptest.MustStatus(t, s.Admin(http.MethodGet, base+"?max=100000", nil), http.StatusOK)
	}
}

func TestLoginEventsExport(t *testing.T) {
	s := realapp.New(t)
	realmID := createRealm(s, "acme", false)
	seedLoginEvents(t, s,
		&store.LoginEvent{ID: "l1", RealmID: realmID, Time: millis(t, "2026-11-21T10:00:00Z"), Type: "LOGIN",
			UserID: "a0000000-0000-4000-8000-000000000001", ClientID: "web", SessionID: "s1", IPAddress: "192.0.2.1"},
		&store.LoginEvent{ID: "l2", RealmID: realmID, Time: millis(t, "2026-11-21T11:00:00Z"), Type: "LOGIN_ERROR",
			ClientID: "=1+1", IPAddress: "192.0.2.2", Error: "-invalid",
			Details: map[string]string{"username": "@bob", "note": "a,b"}},
	)
	got := fetchCSV(t, s, "/admin/realms/acme/events/login/export", "acme-login-events.csv")
	want := [][]string{
		{"id", "time", "type", "realmId", "clientId", "userId", "sessionId", "ipAddress", "error", "details"},
		{"l2", "2026-11-21T11:00:00.000Z", "LOGIN_ERROR", realmID, "'=1+1", "", "", "192.0.2.2", "'-invalid",
			`{"note":"a,b","username":"@bob"}`},
		{"l1", "2026-11-21T10:00:00.000Z", "LOGIN", realmID, "web", "a0000000-0000-4000-8000-000000000001", "s1",
			"192.0.2.1", "", "{}"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("export\n got %q\nwant %q", got, want)
	}
	if got := fetchCSV(t, s, "/admin/realms/acme/events/login/export?type=LOGIN&userId=a0000000-0000-4000-8000-000000000001&clientId=web",
		"acme-login-events.csv"); len(got) != 2 || got[1][0] != "l1" {
		t.Fatalf("filtered export %q", got)
	}
}

func TestEventsExportBadInput(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	for _, c := range append([]struct{ kind, query, field string }{
		{"admin", "operationType=MAKE", "operationType"},
		{"admin", "resourceType=users", "resourceType"},
		{"admin", "authUserId=x", "authUserId"},
		{"login", "type=SIGN_IN", "type"},
		{"login", "userId=x", "userId"},
		{"admin", "max=2147483648", "max"},
	}, func() (out []struct{ kind, query, field string }) {
		for _, b := range badParams {
			out = append(out, struct{ kind, query, field string }{"admin", b.query, b.field},
				struct{ kind, query, field string }{"login", b.query, b.field})
		}
		return out
	}()...) {
		t.Run(c.kind+" "+c.query, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/acme/events/"+c.kind+"/export?"+c.query, nil),
				http.StatusBadRequest, "invalid_parameter", c.field)
		})
	}
	for _, kind := range []string{"admin", "login"} {
		apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/events/"+kind+"/export", nil), http.StatusNotFound, "not_found", "")
		apptest.MustError(t, s.Request(http.MethodGet, "/admin/realms/acme/events/"+kind+"/export", nil), http.StatusUnauthorized, "unauthorized", "")
	}
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/acme/events/other/export", nil), http.StatusNotFound, "not_found", "")
}

func TestDefuseFormula(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "plain": "plain", "=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@SUM(A1)": "'@SUM(A1)",
		"\tx": "'\tx", "\rx": "'\rx", "a=b": "a=b", " =x": " =x", "'=x": "'=x",
	} {
		if got := events.DefuseFormula(in); got != want {
			t.Errorf("events.DefuseFormula(%q) = %q, want %q", in, got, want)
		}
	}
}
