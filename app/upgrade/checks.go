package upgrade

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The checks' names.
const (
	checkIntegrity   = "integrity"
	checkDiskSpace   = "disk-space"
	checkSchema      = "schema-version"
	checkForeignKeys = "foreign-keys"
	checkRealms      = "realms"
)

// snapshotMargin is the room asked for beyond the snapshot itself: the
// migrations' writes go through the -wal file before they reach the
// database, and the history file grows.
const snapshotMargin = 16 << 20

var errFreeSpaceUnknown = errors.New("free space is not measured on this system")

// PreValidation checks what an upgrade needs before it is asked for: the
// database file whole (integrity_check), room for its snapshot, and what
// the pending migrations change. Every failure is in the answer, never a
// 500: a damaged file is what the endpoint is for.
func (s *Service) PreValidation(w http.ResponseWriter, r *http.Request) error {
	return httpx.OK(w, s.preValidate(r.Context()))
}

func (s *Service) preValidate(ctx context.Context) PreValidation {
	st := s.deps.Store
	p := PreValidation{Backend: s.backend(), BinarySchemaVersion: st.LatestSchemaVersion(), Pending: []PendingVersion{}}
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		p.Checks = append(p.Checks, Check{Name: checkSchema, Status: CheckError, Detail: "the schema version could not be read: " + err.Error()})
	}
	p.SchemaVersion = v
	pending, err := st.PendingMigrations(ctx)
	if err != nil {
		p.Checks = append(p.Checks, Check{Name: checkSchema, Status: CheckError, Detail: "the pending migrations could not be listed: " + err.Error()})
	}
	for _, m := range pending {
		p.Pending = append(p.Pending, PendingVersion{Version: m.Version, About: m.About, Changes: m.Changes})
	}
	p.Checks = append(p.Checks, s.integrity(ctx))
	disk, diskCheck := s.diskSpace(ctx)
	p.Disk = disk
	p.Checks = append(p.Checks, diskCheck)
	p.Ready = len(p.Pending) > 0 && passed(p.Checks)
	return p
}

// Health runs the checks of a database after an upgrade (or at any time):
// the file whole, the schema this binary's, no broken foreign key, and
// every realm readable by this binary's code. 503 when one fails.
func (s *Service) Health(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st := s.deps.Store
	h := Health{Status: HealthOK, BinarySchemaVersion: st.LatestSchemaVersion()}
	schema := Check{Name: checkSchema, Status: CheckOK}
	v, err := st.SchemaVersion(ctx)
	h.SchemaVersion = v
	switch {
	case err != nil:
		schema.Status, schema.Detail = CheckError, "the schema version could not be read: "+err.Error()
	case v != h.BinarySchemaVersion:
		schema.Status = CheckFailed
		schema.Detail = fmt.Sprintf("the database is at schema version %d, this binary's is %d: POST /admin/upgrade", v, h.BinarySchemaVersion)
	default:
		schema.Detail = fmt.Sprintf("the database is at schema version %d, this binary's", v)
	}
	h.Checks = []Check{s.integrity(ctx), schema, s.foreignKeys(ctx), s.realms(ctx)}
	status := http.StatusOK
	if !passed(h.Checks) {
		h.Status, status = HealthFailed, http.StatusServiceUnavailable
	}
	httpx.WriteJSON(w, status, h)
	return nil
}

func passed(checks []Check) bool {
	for _, c := range checks {
		if c.Status == CheckFailed || c.Status == CheckError {
			return false
		}
	}
	return true
}

func (s *Service) integrity(ctx context.Context) Check {
	c := Check{Name: checkIntegrity}
	problems, err := s.deps.Store.IntegrityCheck(ctx)
	switch {
	case errors.Is(err, store.ErrSQLiteOnly):
		c.Status, c.Detail = CheckSkipped, "PostgreSQL checks its own pages (data checksums, the amcheck extension)"
	case err != nil:
		c.Status, c.Detail = CheckError, "integrity_check could not run: "+err.Error()
	case len(problems) > 0:
		c.Status, c.Problems = CheckFailed, problems
		c.Detail = fmt.Sprintf("SQLite's integrity_check found %d problems: the database file is damaged; "+
			"restore a backup (idenplane restore) before upgrading", len(problems))
	default:
		c.Status, c.Detail = CheckOK, "SQLite's integrity_check found the database file whole"
	}
	return c
}

// diskSpace compares the free space beside the database with what its
// snapshot takes: its pages in use, a tenth more, and snapshotMargin.
func (s *Service) diskSpace(ctx context.Context) (*DiskSpace, Check) {
	c := Check{Name: checkDiskSpace}
	pages, err := s.deps.Store.SnapshotBytes(ctx)
	switch {
	case errors.Is(err, store.ErrSQLiteOnly):
		c.Status, c.Detail = CheckSkipped, "no snapshot is taken of a PostgreSQL database: back it up with pg_dump"
		return nil, c
	case err != nil:
		c.Status, c.Detail = CheckError, "the database's size could not be read: "+err.Error()
		return nil, c
	}
	d := &DiskSpace{Directory: s.dir(), NeededBytes: pages + pages/10 + snapshotMargin}
	d.FreeBytes, err = freeBytes(d.Directory)
	switch {
	case errors.Is(err, errFreeSpaceUnknown):
		c.Status, c.Detail = CheckSkipped, err.Error()
	case err != nil:
		c.Status, c.Detail = CheckError, err.Error()
	case d.FreeBytes < d.NeededBytes:
		c.Status = CheckFailed
		c.Detail = fmt.Sprintf("%d bytes are free in %s; the snapshot needs about %d", d.FreeBytes, d.Directory, d.NeededBytes)
	default:
		c.Status = CheckOK
		c.Detail = fmt.Sprintf("%d bytes are free in %s; the snapshot needs about %d", d.FreeBytes, d.Directory, d.NeededBytes)
	}
	return d, c
}

func (s *Service) foreignKeys(ctx context.Context) Check {
	c := Check{Name: checkForeignKeys}
	problems, err := s.deps.Store.ForeignKeyCheck(ctx)
	switch {
	case errors.Is(err, store.ErrSQLiteOnly):
		c.Status, c.Detail = CheckSkipped, "PostgreSQL enforces every foreign key itself"
	case err != nil:
		c.Status, c.Detail = CheckError, "foreign_key_check could not run: "+err.Error()
	case len(problems) > 0:
		c.Status, c.Problems = CheckFailed, problems
		c.Detail = fmt.Sprintf("SQLite's foreign_key_check found %d rows referring to rows that do not exist", len(problems))
	default:
		c.Status, c.Detail = CheckOK, "every foreign key refers to a row that exists"
	}
	return c
}

// realms reads each realm as the server's code does, every column of
// this binary's schema: a migration the code does not match shows here.
func (s *Service) realms(ctx context.Context) Check {
	c := Check{Name: checkRealms}
	list, err := s.deps.Store.ListRealms(ctx)
	if err != nil {
		c.Status, c.Detail = CheckFailed, "the realms could not be listed: "+err.Error()
		return c
	}
	for _, r := range list {
		if _, err := s.deps.Store.GetRealm(ctx, r.Name); err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("realm %s: %v", r.Name, err))
		}
	}
	if len(c.Problems) > 0 {
		c.Status = CheckFailed
		c.Detail = fmt.Sprintf("%d of %d realms could not be read", len(c.Problems), len(list))
		return c
	}
	c.Status, c.Detail = CheckOK, fmt.Sprintf("each of the %d realms read", len(list))
	return c
}
