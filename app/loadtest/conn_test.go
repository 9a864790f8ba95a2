package loadtest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The load generator's connections are kept alive across requests, read
// chunked and sized bodies whole, and are replaced when the server closes
// them.
func TestLoadConns(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big": // over the server's buffer: sent chunked
			w.Write([]byte(strings.Repeat("x", 10000)))
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye"))
		default:
			body := make([]byte, r.ContentLength)
			r.Body.Read(body)
			w.Write(append([]byte("got "), body...))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := newLoadConns([]string{strings.TrimPrefix(srv.URL, "http://")}, 1)
	defer p.close()
	c := &loadClient{conns: p, base: srv.URL}

	for i := range 3 {
		body, shed, err := c.do(t.Context(), http.MethodPost, "/echo", map[string][]string{"a": {"b"}}, nil, http.StatusOK)
		if err != nil || shed || string(body) != "got a=b" {
			t.Fatalf("request %d: %q %t %v", i, body, shed, err)
		}
	}
	if body, _, err := c.do(t.Context(), http.MethodGet, "/big", nil, nil, http.StatusOK); err != nil || len(body) != 10000 {
		t.Fatalf("chunked body: %d bytes, %v", len(body), err)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for four requests, want one kept alive", n)
	}
	if _, _, err := c.do(t.Context(), http.MethodGet, "/close", nil, nil, http.StatusOK); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.do(t.Context(), http.MethodGet, "/echo", nil, nil, http.StatusOK); err != nil {
		t.Fatalf("after the server closed the connection: %v", err)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want a second after the server closed the first", n)
	}
	if _, _, err := c.do(t.Context(), http.MethodGet, "/echo", nil, nil, http.StatusTeapot); err == nil {
		t.Fatal("an unexpected status was not an error")
	}
}
