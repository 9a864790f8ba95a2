package system_test

import (
	"net/http"
	"os"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/store"
)

// GET /admin/system/version through the whole server: the build stamped
// into its Config, the runtime, the database and the uptime.
func TestSystemVersion(t *testing.T) {
	started := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	now := started
	srv := realapp.New(t, func(c *app.Config) {
		c.Version, c.Commit, c.BuildDate = "v1.2.3", "0123456789abcdef", "2026-02-28T09:00:00Z"
		c.Now = func() time.Time { return now }
	})
	now = started.Add(90 * time.Minute)
	r := srv.Admin(http.MethodGet, "/admin/system/version", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var got struct {
		Version, Commit, BuildDate, GoVersion string
		SchemaVersion                         int
		Database                              struct {
			Backend   string
			SizeBytes int64
		}
		StartedTimestamp, UptimeSeconds int64
	}
	r.Decode(t, &got)
	schema, err := srv.Store.SchemaVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case got.Version != "v1.2.3" || got.Commit != "0123456789abcdef" || got.BuildDate != "2026-02-28T09:00:00Z":
		t.Errorf("build %+v", got)
	case got.GoVersion != runtime.Version():
		t.Errorf("Go version %q, want %q", got.GoVersion, runtime.Version())
	case got.SchemaVersion != schema || schema < 52:
		t.Errorf("schema version %d, the store's %d", got.SchemaVersion, schema)
	case got.Database.Backend != srv.Store.Backend() || got.Database.SizeBytes <= 0:
		t.Errorf("database %+v", got.Database)
	case got.StartedTimestamp != started.UnixMilli() || got.UptimeSeconds != 90*60:
		t.Errorf("started %d, uptime %d", got.StartedTimestamp, got.UptimeSeconds)
	}
	if srv.Store.Backend() == store.BackendSQLite {
		if fi, err := os.Stat(srv.DBPath); err != nil || got.Database.SizeBytes > fi.Size()+16<<20 {
			t.Errorf("size %d against the file's %v (%v)", got.Database.SizeBytes, fi, err)
		}
	}
	// The system read permission, and only an admin credential.
	apptest.MustError(t, srv.Request(http.MethodGet, "/admin/system/version", nil), http.StatusUnauthorized, "unauthorized", "")
}

// make build stamps the three values the endpoint and --version show.
func TestMakefileStampsTheBuild(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	ldflags := regexp.MustCompile(`(?m)^LDFLAGS :=.*$`).Find(mk)
	for _, want := range []string{"-X main.version=$(VERSION)", "-X main.commit=$(COMMIT)", "-X main.date=$(DATE)"} {
		if !regexp.MustCompile(regexp.QuoteMeta(want)).Match(ldflags) {
			t.Errorf("the Makefile's LDFLAGS %q lack %s", ldflags, want)
		}
	}
	if !regexp.MustCompile(`(?m)^\tgo build .*-ldflags '\$\(LDFLAGS\)'`).Match(mk) {
		t.Error("make build does not pass LDFLAGS to go build")
	}
}
