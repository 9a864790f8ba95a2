package events

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/idenplane/idenplane/store"
)

// csvFlushRows is how many rows an export writes between flushes to the
// client: often enough that memory stays flat, rarely enough to be cheap.
const csvFlushRows = 500

// csvExport streams a CSV download row by row. Nothing is sent before the
// first row or the end, so a query that fails at once still gets a JSON
// error.
type csvExport struct {
	log      *slog.Logger
	w        http.ResponseWriter
	r        *http.Request
	filename string
	header   []string
	csv      *csv.Writer
	rows     int
}

func (s *Service) newCSVExport(w http.ResponseWriter, r *http.Request, filename string, header []string) *csvExport {
	return &csvExport{log: s.deps.Log, w: w, r: r, filename: filename, header: header}
}

func (x *csvExport) start() error {
	h := x.w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+x.filename+`"`)
	x.w.WriteHeader(http.StatusOK)
	x.csv = csv.NewWriter(x.w)
	return x.csv.Write(x.header)
}

// row writes one record; it may change the cells of record.
func (x *csvExport) row(record []string) error {
	if x.csv == nil {
		if err := x.start(); err != nil {
			return err
		}
	}
	for i, c := range record {
		record[i] = defuseFormula(c)
	}
	if err := x.csv.Write(record); err != nil {
		return err
	}
	if x.rows++; x.rows%csvFlushRows == 0 {
		return x.flush()
	}
	return nil
}

func (x *csvExport) flush() error {
	x.csv.Flush()
	if err := x.csv.Error(); err != nil {
		return err
	}
	if err := http.NewResponseController(x.w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// finish ends the export after the rows were read, with their error.
func (x *csvExport) finish(err error) error {
	if err == nil && x.csv == nil {
		err = x.start() // no rows: the header alone
	}
	if err == nil {
		err = x.flush()
	}
	switch {
	case err == nil:
		return nil
	case x.r.Context().Err() != nil:
		x.log.Debug("export abandoned by the client", "file", x.filename, "rows", x.rows, "err", err)
		return nil
	case x.csv == nil:
		return err // nothing sent yet: answer with an error
	}
	x.log.Error("export failed after it started", "file", x.filename, "rows", x.rows, "err", err)
	// Half a CSV is sent: abort the connection so the client sees a failed
	// download rather than a complete-looking, truncated file.
	panic(http.ErrAbortHandler)
}

// defuseFormula keeps spreadsheets from running a cell as a formula, as
// OWASP advises for CSV injection: a cell starting with = + - @, tab or
// carriage return gets a leading apostrophe.
func defuseFormula(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func csvTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

var adminEventCSVHeader = []string{"id", "time", "realmId", "operationType", "resourceType", "resourcePath",
	"authType", "authUserId", "authUsername", "ipAddress", "representation"}

// ExportAdminEvents streams the realm's admin events that match the
// query's filters as a CSV download, every one unless max is given.
func (s *Service) ExportAdminEvents(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.adminEventQuery(r, true)
	if err != nil {
		return err
	}
	x := s.newCSVExport(w, r, realm.Name+"-admin-events.csv", adminEventCSVHeader)
	record := make([]string, len(adminEventCSVHeader))
	err = s.deps.Store.EachAdminEvent(r.Context(), realm.ID, f, func(e *store.AdminEvent) error {
		record[0], record[1], record[2], record[3] = e.ID, csvTime(e.Time), e.RealmID, e.OperationType
		record[4], record[5], record[6], record[7] = e.ResourceType, e.ResourcePath, e.AuthType, e.AuthUserID
		record[8], record[9], record[10] = e.AuthUsername, e.IPAddress, e.Representation
		return x.row(record)
	})
	return x.finish(err)
}

var loginEventCSVHeader = []string{"id", "time", "type", "realmId", "clientId", "userId", "sessionId",
	"ipAddress", "error", "details"}

// ExportLoginEvents streams the realm's login events that match the
// query's filters as a CSV download, every one unless max is given.
func (s *Service) ExportLoginEvents(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.loginEventQuery(r, true)
	if err != nil {
		return err
	}
	x := s.newCSVExport(w, r, realm.Name+"-login-events.csv", loginEventCSVHeader)
	record := make([]string, len(loginEventCSVHeader))
	err = s.deps.Store.EachLoginEvent(r.Context(), realm.ID, f, func(e *store.LoginEvent) error {
		details, err := json.Marshal(e.Details)
		if err != nil {
			return err
		}
		record[0], record[1], record[2], record[3], record[4] = e.ID, csvTime(e.Time), string(e.Type), e.RealmID, e.ClientID
		record[5], record[6], record[7], record[8], record[9] = e.UserID, e.SessionID, e.IPAddress, e.Error, string(details)
		return x.row(record)
	})
	return x.finish(err)
}
