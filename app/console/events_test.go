package console

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gorilla/mux"
)

// exportAPI is an API whose login events export writes its header row,
// flushes, and writes the rest only once the test has seen that row.
type exportAPI struct {
	fakeAPI
	seen chan struct{}
}

func (a *exportAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/admin/realms/acme/events/login/export" {
		a.fakeAPI.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="acme-login-events.csv"`)
	_, _ = io.WriteString(w, "id,time,type\n")
	// As the real export does, a writer that cannot flush is written to
	// all the same.
	if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		panic(err)
	}
	select {
	case <-a.seen:
	case <-time.After(5 * time.Second):
	}
	_, _ = io.WriteString(w, "e1,2026-01-01T00:00:00.000Z,LOGIN\n")
}

// The console passes the events' CSV on as the API writes it: a row the
// API flushed reaches the browser while the export still runs, so that a
// download of any size is never held whole in memory.
func TestExportStreamsRowsAsTheAPIWritesThem(t *testing.T) {
	api := &exportAPI{seen: make(chan struct{})}
	s := newTestService(t, api)
	cookies := sessionCookies(t, s, &session{AccessToken: "good", CSRF: "the-token",
		Expires: time.Now().Add(time.Hour).Unix(), Until: time.Now().Add(time.Hour).Unix()})
	m := mux.NewRouter()
	m.Handle(Prefix+"/realms/{realm}/events/export", s.Page(s.ExportLoginEvents))
	srv := httptest.NewServer(m)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+Prefix+"/realms/acme/events/export", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	got := make(chan string, 1)
	var resp *http.Response
	go func() {
		var err error
		if resp, err = srv.Client().Do(req); err != nil {
			got <- "error: " + err.Error()
			return
		}
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if line != "id,time,type\n" {
			t.Fatalf("the first line %q", line)
		}
	case <-time.After(3 * time.Second):
		close(api.seen)
		<-got
		t.Fatal("the header row reached the browser only after the export ended")
	}
	close(api.seen)
	defer resp.Body.Close()
	if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); ct != "text/csv; charset=utf-8" ||
		cd != `attachment; filename="acme-login-events.csv"` || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", resp.Header)
	}
}
