// Package system answers what an operator asks of the server itself:
// which build runs, on which Go, over which database and schema, and for
// how long (GET /admin/system/version).
package system

import (
	"net/http"
	"runtime"
	"time"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Build is what the build stamped into the binary (main.go's -ldflags
// -X main.version, main.commit, main.date; make build sets all three).
type Build struct {
	Version string
	Commit  string
	Date    string
}

// Deps is what the system area uses.
type Deps struct {
	Store   *store.Store
	Now     func() time.Time
	Started time.Time // when the server started, for its uptime
	Build   Build
}

// Service is the system area.
type Service struct{ deps Deps }

// New builds the system area.
func New(d Deps) *Service { return &Service{deps: d} }

// VersionRep is the answer of GET /admin/system/version.
type VersionRep struct {
	Version       string      `json:"version"`
	Commit        string      `json:"commit"`
	BuildDate     string      `json:"buildDate"`
	GoVersion     string      `json:"goVersion"`
	SchemaVersion int         `json:"schemaVersion"`
	Database      DatabaseRep `json:"database"`
	// StartedTimestamp is when the server started, in Unix milliseconds;
	// UptimeSeconds how long ago that is.
	StartedTimestamp int64 `json:"startedTimestamp"`
	UptimeSeconds    int64 `json:"uptimeSeconds"`
}

// DatabaseRep is the database the server runs on.
type DatabaseRep struct {
	Backend   string `json:"backend"` // sqlite or postgres
	SizeBytes int64  `json:"sizeBytes"`
}

// Version answers the build, the runtime, the database and the uptime.
func (s *Service) Version(w http.ResponseWriter, r *http.Request) error {
	schema, err := s.deps.Store.SchemaVersion(r.Context())
	if err != nil {
		return err
	}
	size, err := s.deps.Store.DatabaseSize(r.Context())
	if err != nil {
		return err
	}
	b := s.deps.Build
	return httpx.OK(w, VersionRep{Version: b.Version, Commit: b.Commit, BuildDate: b.Date, GoVersion: runtime.Version(),
		SchemaVersion: schema, Database: DatabaseRep{Backend: s.deps.Store.Backend(), SizeBytes: size},
		StartedTimestamp: s.deps.Started.UnixMilli(),
		UptimeSeconds:    int64(s.deps.Now().Sub(s.deps.Started) / time.Second)})
}
