package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest/tlstest"
	"github.com/idenplane/idenplane/app/auditstreams"
)

// auditRecord is a record as a destination gets it: the event's payload
// with its sequence.
type auditRecord struct {
	Sequence int64          `json:"sequence"`
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Realm    string         `json:"realm"`
	Data     map[string]any `json:"data"`
}

// syslogLine is one RFC 5424 message a receiver parsed.
type syslogLine struct {
	pri, msgID, realm, id string
	seq                   int64
	record                auditRecord
}

var syslogPattern = regexp.MustCompile(`^<(\d{1,3})>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (\S+) idenplane - (\S+) ` +
	`\[idenplane@32473 realm="([^"]*)" seq="(\d+)" id="([^"]*)"\] (\{.*\})$`)

// syslogReceiver is a syslog server on loopback over TCP (octet counting,
// optionally TLS) or UDP: it parses each message as RFC 5424 and keeps
// them in the order they came.
type syslogReceiver struct {
	t    *testing.T
	addr string
	mu   sync.Mutex
	got  []syslogLine
	stop func()
}

func (r *syslogReceiver) add(t *testing.T, raw []byte) {
	m := syslogPattern.FindSubmatch(raw)
	if m == nil {
		t.Errorf("not an RFC 5424 message of a record: %q", raw)
		return
	}
	l := syslogLine{pri: string(m[1]), msgID: string(m[4]), realm: string(m[5]), id: string(m[7])}
	l.seq, _ = strconv.ParseInt(string(m[6]), 10, 64)
	if err := json.Unmarshal(m[8], &l.record); err != nil {
		t.Errorf("MSG is not a record: %s", m[8])
	}
	r.mu.Lock()
	r.got = append(r.got, l)
	r.mu.Unlock()
}

func (r *syslogReceiver) lines() []syslogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]syslogLine(nil), r.got...)
}

// waitFor waits until the receiver has n messages.
func (r *syslogReceiver) waitFor(n int) []syslogLine {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got := r.lines(); len(got) >= n {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.t.Fatalf("the receiver has %d messages, want %d", len(r.lines()), n)
	return nil
}

// newSyslogTCP listens on addr ("127.0.0.1:0" for any port), with TLS
// when cfg is not nil, and reads octet-counted frames (RFC 6587).
func newSyslogTCP(t *testing.T, addr string, cfg *tls.Config) *syslogReceiver {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if cfg != nil {
		l = tls.NewListener(l, cfg)
	}
	r := &syslogReceiver{t: t, addr: l.Addr().String()}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					n, err := br.ReadString(' ')
					if err != nil {
						return // the sender's close, or a handshake refused
					}
					size, err := strconv.Atoi(strings.TrimSuffix(n, " "))
					if err != nil || size <= 0 {
						t.Errorf("not an octet count: %q", n)
						return
					}
					msg := make([]byte, size)
					if _, err := io.ReadFull(br, msg); err != nil {
						t.Errorf("a frame cut short: %v", err)
						return
					}
					r.add(t, msg)
				}
			})
		}
	})
	r.stop = func() { l.Close(); wg.Wait() }
	t.Cleanup(r.stop)
	return r
}

// newSyslogUDP reads one message a datagram (RFC 5426).
func newSyslogUDP(t *testing.T) *syslogReceiver {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &syslogReceiver{t: t, addr: pc.LocalAddr().String()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<16)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			r.add(t, append([]byte(nil), buf[:n]...))
		}
	}()
	r.stop = func() { pc.Close(); <-done }
	t.Cleanup(r.stop)
	return r
}

// auditTestServer is an App on a hand-moved clock that may call loopback,
// writes file streams in dir, and has realm acme.
func auditTestServer(t *testing.T, dir string) (*testServer, *testClock) {
	clock := &testClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := newTestServer(t, allowLoopback, func(c *Config) { c.Now, c.AuditDir = clock.now, dir })
	s.createRealm("acme")
	return s, clock
}

func (s *testServer) createStream(t *testing.T, body map[string]any) auditstreams.Rep {
	t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms/acme/audit-streams", body)
	mustStatus(t, r, http.StatusCreated)
	var out auditstreams.Rep
	r.decode(t, &out)
	return out
}

func (s *testServer) getStream(t *testing.T, id string) auditstreams.Rep {
	t.Helper()
	var out auditstreams.Rep
	r := s.admin(http.MethodGet, "/admin/realms/acme/audit-streams/"+id, nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &out)
	return out
}

// sendAudit runs the audit worker's passes until one sends nothing.
func (s *testServer) sendAudit(t *testing.T) {
	t.Helper()
	for range 50 {
		if s.app.auditStreams.DeliverDue(context.Background()) == 0 {
			return
		}
	}
	t.Fatal("the audit streams did not settle in 50 passes")
}

// users creates n users named prefix1, prefix2…: n user.created events.
func (s *testServer) users(prefix string, n int) {
	for i := 1; i <= n; i++ {
		s.createUser("acme", map[string]any{"username": fmt.Sprintf("%s%d", prefix, i)})
	}
}

// mustRunInOrder fails unless seqs run on from first without a gap.
func mustRunInOrder(t *testing.T, what string, seqs []int64, first int64) {
	t.Helper()
	for i, seq := range seqs {
		if seq != first+int64(i) {
			t.Fatalf("%s: sequences %v, want %d on without a gap", what, seqs, first)
		}
	}
}

// Over TCP and over UDP, a syslog receiver gets an RFC 5424 message for
// each user created, in order of the realm's sequence, the sequence in
// the structured data and in the record alike.
func TestAuditStreamSyslog(t *testing.T) {
	for _, transport := range []string{"tcp", "udp"} {
		t.Run(transport, func(t *testing.T) {
			s, _ := auditTestServer(t, "")
			var rcv *syslogReceiver
			if transport == "udp" {
				rcv = newSyslogUDP(t)
			} else {
				rcv = newSyslogTCP(t, "127.0.0.1:0", nil)
			}
			st := s.createStream(t, map[string]any{"type": "syslog", "events": []string{"user.created"},
				"syslog": map[string]any{"address": rcv.addr, "transport": transport, "facility": 13}})
			if st.Syslog == nil || st.Syslog.Transport != auditstreams.Transport(transport) || st.LastDeliveredSequence != 0 {
				t.Fatalf("created %+v", st)
			}
			s.users("sys", 5)
			s.sendAudit(t)
			got := rcv.waitFor(5)
			var seqs []int64
			for i, l := range got {
				// facility 13, severity notice (5)
				if l.pri != "109" || l.msgID != "user.created" || l.realm != "acme" || l.record.Sequence != l.seq ||
					l.record.ID != l.id || l.record.Type != "user.created" || l.record.Realm != "acme" {
					t.Fatalf("message %d: %+v", i, l)
				}
				user, _ := l.record.Data["user"].(map[string]any)
				if user["username"] != fmt.Sprintf("sys%d", i+1) {
					t.Fatalf("message %d is of %v", i, user["username"])
				}
				seqs = append(seqs, l.seq)
			}
			mustRunInOrder(t, "syslog", seqs, seqs[0])
			if after := s.getStream(t, st.ID); after.LastDeliveredSequence < seqs[len(seqs)-1] || after.Lag != 0 || after.LastError != "" {
				t.Fatalf("after delivery: %+v", after)
			}
		})
	}
}

// Over TLS, the receiver's certificate is checked against the stream's
// caPem; one it does not chain to fails the batch, which waits.
func TestAuditStreamSyslogTLS(t *testing.T) {
	s, clock := auditTestServer(t, "")
	ca := tlstest.NewCA(t)
	certPath, keyPath := ca.WriteServerFiles(t, t.TempDir(), 2)
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	rcv := newSyslogTCP(t, "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	other := tlstest.NewCA(t)
	st := s.createStream(t, map[string]any{"type": "syslog", "events": []string{"user.*"},
		"syslog": map[string]any{"address": rcv.addr, "transport": "tls", "caPem": string(other.PEM)}})
	s.users("tls", 2)
	s.sendAudit(t)
	if failing := s.getStream(t, st.ID); !strings.Contains(failing.LastError, "certificate") || failing.Lag == 0 ||
		failing.LastErrorTimestamp == 0 {
		t.Fatalf("a receiver of another CA: %+v", failing)
	}
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/audit-streams/"+st.ID, map[string]any{"type": "syslog",
		"events": []string{"user.*"}, "syslog": map[string]any{"address": rcv.addr, "transport": "tls", "caPem": string(ca.PEM)}}),
		http.StatusOK)
	clock.advance(auditstreams.MaxRetryWait)
	s.sendAudit(t)
	got := rcv.waitFor(2)
	mustRunInOrder(t, "tls", []int64{got[0].seq, got[1].seq}, got[0].seq)
	if after := s.getStream(t, st.ID); after.Lag != 0 {
		t.Fatalf("after delivery: %+v", after)
	}
}

// A receiver that is down fails the batch: the stream shows the error and
// its lag, and keeps its cursor; back (on the same port), it gets every
// record it missed and those since, in order, once the retry is due.
func TestAuditStreamCatchesUp(t *testing.T) {
	s, clock := auditTestServer(t, "")
	rcv := newSyslogTCP(t, "127.0.0.1:0", nil)
	st := s.createStream(t, map[string]any{"type": "syslog", "events": []string{"user.created"},
		"syslog": map[string]any{"address": rcv.addr}})
	s.users("before", 2)
	s.sendAudit(t)
	first := rcv.waitFor(2)
	rcv.stop()

	s.users("during", 3)
	s.sendAudit(t)
	down := s.getStream(t, st.ID)
	if down.LastError == "" || down.Lag != 3 || down.LastDeliveredSequence != first[1].seq || down.NextAttemptTimestamp == 0 {
		t.Fatalf("while the receiver is down: %+v", down)
	}
	back := newSyslogTCP(t, rcv.addr, nil)
	s.users("after", 1)
	s.sendAudit(t)
	if n := len(back.lines()); n != 0 {
		t.Fatalf("%d messages sent before the retry was due", n)
	}
	clock.advance(auditstreams.MaxRetryWait)
	s.sendAudit(t)
	got := back.waitFor(4)
	var seqs []int64
	var names []string
	for _, l := range got {
		seqs = append(seqs, l.seq)
		user, _ := l.record.Data["user"].(map[string]any)
		names = append(names, user["username"].(string))
	}
	mustRunInOrder(t, "after the outage", seqs, first[1].seq+1)
	if strings.Join(names, ",") != "during1,during2,during3,after1" {
		t.Fatalf("caught up with %v", names)
	}
	if after := s.getStream(t, st.ID); after.Lag != 0 || after.LastDeliveredSequence != seqs[3] || after.NextAttemptTimestamp != 0 {
		t.Fatalf("caught up: %+v", after)
	}
	// Every stream has passed them: the records are gone from the disk.
	if recs, err := s.store.AuditRecordsAfter(context.Background(), s.realmID(t, "acme"), 0, 100); err != nil || len(recs) != 0 {
		t.Fatalf("%d records kept after every stream passed them (%v)", len(recs), err)
	}
}

func (s *testServer) realmID(t *testing.T, name string) string {
	t.Helper()
	realm, err := s.store.GetRealm(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return realm.ID
}

// httpCollector is an HTTP receiver on loopback that keeps each request.
type httpCollector struct {
	mu       sync.Mutex
	requests []collected
	answers  []int
	url      string
}

type collected struct {
	path, contentType, authorization string
	body                             []byte
}

func newHTTPCollector(t *testing.T, answer string) *httpCollector {
	c := &httpCollector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.requests = append(c.requests, collected{path: r.URL.Path, contentType: r.Header.Get("Content-Type"),
			authorization: r.Header.Get("Authorization"), body: body})
		status := http.StatusOK
		if len(c.answers) > 0 {
			status, c.answers = c.answers[0], c.answers[1:]
		}
		c.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func (c *httpCollector) got() []collected {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]collected(nil), c.requests...)
}

// The three HTTP formats: a JSON array, Splunk HEC events with its token,
// and Elastic _bulk NDJSON with an index action line before each record;
// each batch in order, its secret never in an answer.
func TestAuditStreamHTTPFormats(t *testing.T) {
	s, _ := auditTestServer(t, "")
	generic := newHTTPCollector(t, "")
	splunk := newHTTPCollector(t, `{"text":"Success","code":0}`)
	elastic := newHTTPCollector(t, `{"took":3,"errors":false,"items":[]}`)
	gs := s.createStream(t, map[string]any{"type": "http", "events": []string{"user.created"},
		"http": map[string]any{"url": generic.url + "/ingest", "authorization": "Bearer generic-secret-1"}})
	ss := s.createStream(t, map[string]any{"type": "http", "events": []string{"user.created"}, "description": "Splunk",
		"http": map[string]any{"url": splunk.url + "/services/collector/event", "format": "splunk", "token": "hec-secret-2",
			"index": "identity"}})
	es := s.createStream(t, map[string]any{"type": "http", "events": []string{"user.created"},
		"http": map[string]any{"url": elastic.url + "/_bulk", "format": "elastic", "index": "idenplane-audit",
			"authorization": "ApiKey elastic-secret-3"}})
	s.users("h", 3)
	s.sendAudit(t)

	// generic: one POST of a JSON array
	g := generic.got()
	if len(g) != 1 || g[0].path != "/ingest" || g[0].contentType != "application/json" || g[0].authorization != "Bearer generic-secret-1" {
		t.Fatalf("generic requests %+v", g)
	}
	var arr []auditRecord
	if err := json.Unmarshal(g[0].body, &arr); err != nil || len(arr) != 3 {
		t.Fatalf("generic body %s: %v", g[0].body, err)
	}
	mustRunInOrder(t, "generic", []int64{arr[0].Sequence, arr[1].Sequence, arr[2].Sequence}, arr[0].Sequence)
	if arr[0].Type != "user.created" || arr[0].Realm != "acme" || !strings.HasPrefix(arr[0].ID, "evt_") {
		t.Fatalf("generic record %+v", arr[0])
	}

	// Splunk HEC: concatenated event objects
	sp := splunk.got()
	if len(sp) != 1 || sp[0].path != "/services/collector/event" || sp[0].authorization != "Splunk hec-secret-2" {
		t.Fatalf("splunk requests %+v", sp)
	}
	dec := json.NewDecoder(bytes.NewReader(sp[0].body))
	var hecSeqs []int64
	for dec.More() {
		var ev struct {
			Time       float64     `json:"time"`
			Host       string      `json:"host"`
			Source     string      `json:"source"`
			SourceType string      `json:"sourcetype"`
			Index      string      `json:"index"`
			Event      auditRecord `json:"event"`
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("splunk body %s: %v", sp[0].body, err)
		}
		if ev.Time < 1.7e9 || ev.Source != "idenplane" || ev.SourceType != "_json" || ev.Index != "identity" || ev.Host == "" ||
			ev.Event.Type != "user.created" {
			t.Fatalf("HEC event %+v", ev)
		}
		hecSeqs = append(hecSeqs, ev.Event.Sequence)
	}
	if len(hecSeqs) != 3 {
		t.Fatalf("%d HEC events, want 3", len(hecSeqs))
	}
	mustRunInOrder(t, "splunk", hecSeqs, arr[0].Sequence)

	// Elastic _bulk: action line, document line
	el := elastic.got()
	if len(el) != 1 || el[0].path != "/_bulk" || el[0].contentType != "application/x-ndjson" ||
		el[0].authorization != "ApiKey elastic-secret-3" {
		t.Fatalf("elastic requests %+v", el)
	}
	lines := strings.Split(strings.TrimSuffix(string(el[0].body), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("bulk body of %d lines, want 6: %s", len(lines), el[0].body)
	}
	for i := 0; i < len(lines); i += 2 {
		var action struct {
			Index struct {
				Index string `json:"_index"`
				ID    string `json:"_id"`
			} `json:"index"`
		}
		var doc auditRecord
		if json.Unmarshal([]byte(lines[i]), &action) != nil || json.Unmarshal([]byte(lines[i+1]), &doc) != nil ||
			action.Index.Index != "idenplane-audit" || action.Index.ID != doc.ID || doc.Sequence != arr[i/2].Sequence {
			t.Fatalf("bulk pair %d: %s / %s", i/2, lines[i], lines[i+1])
		}
	}

	// A bulk answer that reports failed items is a failure: the batch waits.
	elastic.mu.Lock()
	elastic.requests = nil
	elastic.mu.Unlock()
	bad := newHTTPCollector(t, `{"errors":true,"items":[{"index":{"status":429}}]}`)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/audit-streams/"+es.ID, map[string]any{"type": "http",
		"events": []string{"user.created"}, "http": map[string]any{"url": bad.url + "/_bulk", "format": "elastic", "index": "idenplane-audit",
			"authorization": auditstreams.Redacted}}), http.StatusOK)
	s.users("x", 1)
	s.sendAudit(t)
	if got := s.getStream(t, es.ID); !strings.Contains(got.LastError, "failed") || got.Lag != 1 {
		t.Fatalf("after a bulk answer with errors: %+v", got)
	}
	if b := bad.got(); len(b) != 1 || b[0].authorization != "ApiKey elastic-secret-3" {
		t.Fatalf("a PUT sending the redacted secret back did not keep it: %+v", b)
	}

	// Secrets: redacted in every answer, sealed in the database.
	for _, id := range []string{gs.ID, ss.ID, es.ID} {
		got := s.admin(http.MethodGet, "/admin/realms/acme/audit-streams/"+id, nil)
		if strings.Contains(string(got.Body), "secret-") || !strings.Contains(string(got.Body), auditstreams.Redacted) {
			t.Fatalf("GET of a stream: %s", got.Body)
		}
	}
	list := s.admin(http.MethodGet, "/admin/realms/acme/audit-streams", nil)
	if strings.Contains(string(list.Body), "secret-") {
		t.Fatalf("the list shows a secret: %s", list.Body)
	}
	if got := s.getStream(t, ss.ID); got.HTTP.Token == nil || *got.HTTP.Token != auditstreams.Redacted || got.HTTP.Authorization != nil {
		t.Fatalf("splunk stream as answered: %+v", got.HTTP)
	}
	// A format changed leaves the old format's secret behind.
	r := s.admin(http.MethodPut, "/admin/realms/acme/audit-streams/"+ss.ID, map[string]any{"type": "http",
		"events": []string{"user.created"}, "http": map[string]any{"url": splunk.url + "/services/collector/event", "format": "json"}})
	mustStatus(t, r, http.StatusOK)
	if strings.Contains(string(r.Body), auditstreams.Redacted) {
		t.Fatalf("the splunk token kept as a json stream's authorization: %s", r.Body)
	}
	s.users("y", 1)
	s.sendAudit(t)
	if sp := splunk.got(); len(sp) != 3 || sp[2].authorization != "" {
		t.Fatalf("after the format changed: %+v", sp[1:])
	}
	secrets := map[string]string{"generic": "generic-secret-1", "splunk": "hec-secret-2", "elastic": "elastic-secret-3"}
	mustHoldNoToken(t, "the database file", s.dbPath, secrets)
	mustHoldNoToken(t, "the -wal file", s.dbPath+"-wal", secrets)
}

// A file stream writes JSON lines and rotates before a line would take
// the file past its size, keeping the number of files asked; the lines
// of the files, oldest first, run on in order.
func TestAuditStreamFileRotates(t *testing.T) {
	dir := t.TempDir()
	s, _ := auditTestServer(t, dir)
	st := s.createStream(t, map[string]any{"type": "file", "events": []string{"user.created"},
		"file": map[string]any{"name": "acme-audit.jsonl", "maxSizeBytes": 1024, "keep": 2}})
	if st.File == nil || st.File.MaxSizeBytes != 1024 || st.File.Keep != 2 {
		t.Fatalf("created %+v", st)
	}
	s.users("f", 4)
	s.sendAudit(t)
	s.users("g", 4)
	s.sendAudit(t)

	path := filepath.Join(dir, "acme-audit.jsonl")
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Fatalf("a third rotated file is kept: %v", err)
	}
	var seqs []int64
	for _, p := range []string{path + ".2", path + ".1", path} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(p), err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(data) > 1024 && len(lines) > 1 {
			t.Fatalf("%s holds %d bytes in %d lines, past its size", filepath.Base(p), len(data), len(lines))
		}
		for _, line := range lines {
			var rec auditRecord
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s: a line that is not a record: %q", filepath.Base(p), line)
			}
			seqs = append(seqs, rec.Sequence)
		}
		if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
			t.Fatalf("%s is %v, want 0600", filepath.Base(p), info.Mode().Perm())
		}
	}
	mustRunInOrder(t, "files", seqs, seqs[0])
	got := s.getStream(t, st.ID)
	if seqs[len(seqs)-1] != got.LastDeliveredSequence || got.Lag != 0 || len(seqs) >= 8 {
		t.Fatalf("files end at %d of %d lines; the stream: %+v (the oldest lines should be rotated away)", seqs[len(seqs)-1], len(seqs), got)
	}
}

// Bad input is refused with the field named, and nothing is stored; an
// unknown stream is a 404 on every route.
func TestAuditStreamBadInput(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.AuditDir = t.TempDir() }) // no --outbound-allow: loopback is off limits
	s.createRealm("acme")
	const path = "/admin/realms/acme/audit-streams"
	syslog := func(address string) map[string]any {
		return map[string]any{"type": "syslog", "syslog": map[string]any{"address": address}}
	}
	httpStream := func(set map[string]any) map[string]any { return map[string]any{"type": "http", "http": set} }
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no type", map[string]any{"syslog": map[string]any{"address": "logs.example.com:514"}}, "type"},
		{"unknown type", map[string]any{"type": "kafka"}, "type"},
		{"settings of another type", map[string]any{"type": "syslog", "syslog": map[string]any{"address": "logs.example.com:514"},
			"file": map[string]any{"name": "a.log"}}, "file"},
		{"no settings", map[string]any{"type": "http"}, "http"},
		{"no address", map[string]any{"type": "syslog", "syslog": map[string]any{}}, "syslog.address"},
		{"address without port", syslog("logs.example.com"), "syslog.address"},
		{"port zero", syslog("logs.example.com:0"), "syslog.address"},
		{"port too big", syslog("logs.example.com:70000"), "syslog.address"},
		{"port by name", syslog("logs.example.com:syslog"), "syslog.address"},
		{"loopback receiver", syslog("127.0.0.1:514"), "syslog.address"},
		{"private receiver", syslog("10.0.0.5:514"), "syslog.address"},
		{"metadata receiver", syslog("169.254.169.254:514"), "syslog.address"},
		{"decimal address", syslog("2130706433:514"), "syslog.address"},
		{"unknown transport", map[string]any{"type": "syslog", "syslog": map[string]any{"address": "logs.example.com:514", "transport": "sctp"}}, "syslog.transport"},
		{"facility", map[string]any{"type": "syslog", "syslog": map[string]any{"address": "logs.example.com:514", "facility": 24}}, "syslog.facility"},
		{"caPem over tcp", map[string]any{"type": "syslog", "syslog": map[string]any{"address": "logs.example.com:514", "caPem": "x"}}, "syslog.caPem"},
		{"caPem not PEM", map[string]any{"type": "syslog", "syslog": map[string]any{"address": "logs.example.com:6514", "transport": "tls", "caPem": "x"}}, "syslog.caPem"},
		{"hostname with a space", map[string]any{"type": "syslog", "syslog": map[string]any{"address": "logs.example.com:514", "hostname": "a b"}}, "syslog.hostname"},
		{"no url", httpStream(map[string]any{}), "http.url"},
		{"http url", httpStream(map[string]any{"url": "http://siem.example.com/in"}), "http.url"},
		{"http to loopback without --outbound-allow", httpStream(map[string]any{"url": "http://127.0.0.1:9/in"}), "http.url"},
		{"private url", httpStream(map[string]any{"url": "https://10.1.2.3/in"}), "http.url"},
		{"credentials in the url", httpStream(map[string]any{"url": "https://u:p@siem.example.com/in"}), "http.url"},
		{"unknown format", httpStream(map[string]any{"url": "https://siem.example.com/in", "format": "csv"}), "http.format"},
		{"splunk without token", httpStream(map[string]any{"url": "https://siem.example.com/services/collector/event", "format": "splunk"}), "http.token"},
		{"splunk with authorization", httpStream(map[string]any{"url": "https://siem.example.com/services/collector/event", "format": "splunk",
			"token": "t", "authorization": "Bearer x"}), "http.authorization"},
		{"elastic without index", httpStream(map[string]any{"url": "https://es.example.com/_bulk", "format": "elastic"}), "http.index"},
		{"elastic upper-case index", httpStream(map[string]any{"url": "https://es.example.com/_bulk", "format": "elastic", "index": "Audit"}), "http.index"},
		{"token for json", httpStream(map[string]any{"url": "https://siem.example.com/in", "token": "t"}), "http.token"},
		{"header with a newline", httpStream(map[string]any{"url": "https://siem.example.com/in", "authorization": "Bearer a\nX-Evil: 1"}), "http.authorization"},
		{"unknown event", map[string]any{"type": "syslog", "events": []string{"user.exploded"}, "syslog": map[string]any{"address": "logs.example.com:514"}}, "events"},
		{"unknown group", map[string]any{"type": "syslog", "events": []string{"cake.*"}, "syslog": map[string]any{"address": "logs.example.com:514"}}, "events"},
		{"no events", map[string]any{"type": "syslog", "events": []string{}, "syslog": map[string]any{"address": "logs.example.com:514"}}, "events"},
		{"file path", map[string]any{"type": "file", "file": map[string]any{"name": "../etc/passwd"}}, "file.name"},
		{"file absolute", map[string]any{"type": "file", "file": map[string]any{"name": "/var/log/x"}}, "file.name"},
		{"file dot-dot", map[string]any{"type": "file", "file": map[string]any{"name": ".."}}, "file.name"},
		{"file rotated name", map[string]any{"type": "file", "file": map[string]any{"name": "audit.log.1"}}, "file.name"},
		{"file too small", map[string]any{"type": "file", "file": map[string]any{"name": "a.log", "maxSizeBytes": 10}}, "file.maxSizeBytes"},
		{"file keep", map[string]any{"type": "file", "file": map[string]any{"name": "a.log", "keep": 1000}}, "file.keep"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, path, tc.body), http.StatusBadRequest, "invalid_field", tc.field)
		})
	}
	mustError(t, s.admin(http.MethodPost, path, map[string]any{"type": "syslog", "colour": "red",
		"syslog": map[string]any{"address": "logs.example.com:514"}}), http.StatusBadRequest, "unknown_field", "colour")
	mustStatus(t, s.admin(http.MethodPost, path, map[string]any{"type": "syslog", "description": strings.Repeat("x", 2<<20),
		"syslog": map[string]any{"address": "logs.example.com:514"}}), http.StatusRequestEntityTooLarge)
	var list []auditstreams.Rep
	s.admin(http.MethodGet, path, nil).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("refused streams stored: %+v", list)
	}

	// A stream that exists: a bad PUT leaves it as it was.
	ok := s.createStream(t, map[string]any{"type": "syslog", "syslog": map[string]any{"address": "logs.example.com:514"}})
	if strings.Join(ok.Events, ",") != "*" || !ok.Enabled || *ok.Syslog.Facility != auditstreams.DefaultFacility || ok.Syslog.Transport != "tcp" {
		t.Fatalf("defaults: %+v", ok)
	}
	for _, tc := range cases[:16] {
		body := tc.body
		if body["type"] == "kafka" || body["type"] == nil {
			continue
		}
		mustStatus(t, s.admin(http.MethodPut, path+"/"+ok.ID, body), http.StatusBadRequest)
	}
	mustError(t, s.admin(http.MethodPut, path+"/"+ok.ID, map[string]any{"type": "file", "file": map[string]any{"name": "a.log"}}),
		http.StatusBadRequest, "invalid_field", "type")
	if after := s.getStream(t, ok.ID); after.Syslog.Address != "logs.example.com:514" || after.UpdatedTimestamp != ok.UpdatedTimestamp {
		t.Fatalf("a refused PUT changed the stream: %+v", after)
	}
	// Two streams may not write one file.
	s.createStream(t, map[string]any{"type": "file", "file": map[string]any{"name": "a.log"}})
	mustError(t, s.admin(http.MethodPost, path, map[string]any{"type": "file", "file": map[string]any{"name": "a.log"}}),
		http.StatusConflict, "conflict", "file.name")

	for _, id := range []string{"nope", "7d0c6c63-6a43-4b57-9d22-b1d0bb0f4c00"} {
		mustStatus(t, s.admin(http.MethodGet, path+"/"+id, nil), http.StatusNotFound)
		mustStatus(t, s.admin(http.MethodPut, path+"/"+id, map[string]any{"type": "syslog",
			"syslog": map[string]any{"address": "logs.example.com:514"}}), http.StatusNotFound)
		mustStatus(t, s.admin(http.MethodDelete, path+"/"+id, nil), http.StatusNotFound)
	}
	s.admin(http.MethodGet, path, nil).decode(t, &list)
	if len(list) != 2 {
		t.Fatalf("streams after the refusals: %+v", list)
	}
	// File streams without --audit-dir.
	bare := newTestServer(t)
	bare.createRealm("acme")
	mustError(t, bare.admin(http.MethodPost, path, map[string]any{"type": "file", "file": map[string]any{"name": "a.log"}}),
		http.StatusBadRequest, "invalid_field", "type")
}

// A stream takes the events from its creation on, not the history; PUT
// replaces what it takes; a disabled stream holds nothing back, and
// enabled again it starts at the realm's last record; DELETE removes it,
// and a realm's deletion its streams.
func TestAuditStreamLifecycle(t *testing.T) {
	s, _ := auditTestServer(t, "")
	early := newHTTPCollector(t, "")
	first := s.createStream(t, map[string]any{"type": "http", "http": map[string]any{"url": early.url}})
	s.users("old", 2)
	late := newHTTPCollector(t, "")
	second := s.createStream(t, map[string]any{"type": "http", "events": []string{"user.deleted"}, "http": map[string]any{"url": late.url}})
	if second.LastDeliveredSequence == 0 || second.Lag != 0 {
		t.Fatalf("a new stream starts at the realm's last record: %+v", second)
	}
	s.sendAudit(t)
	if n := len(late.got()); n != 0 {
		t.Fatalf("a new stream got %d batches of the history", n)
	}
	if got := s.getStream(t, first.ID); got.Lag != 0 || got.LastDeliveredSequence < 2 || got.LastDeliveredTimestamp == 0 {
		t.Fatalf("the first stream: %+v", got)
	}
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/audit-streams/"+first.ID, map[string]any{"type": "http",
		"enabled": false, "http": map[string]any{"url": early.url}}), http.StatusOK)
	s.users("quiet", 2)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/audit-streams/"+first.ID, map[string]any{"type": "http",
		"http": map[string]any{"url": early.url}}), http.StatusOK)
	before := len(early.got())
	s.sendAudit(t)
	for _, req := range early.got()[before:] {
		// The PUT that enabled it is an admin change it takes; the users
		// created while it was off are not.
		if strings.Contains(string(req.body), "quiet") && strings.Contains(string(req.body), "user.created") {
			t.Fatalf("a stream enabled again got what came while it was off: %s", req.body)
		}
	}
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/audit-streams/"+second.ID, nil), http.StatusNoContent)
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/audit-streams/"+second.ID, nil), http.StatusNotFound)
	s.users("last", 1)
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme", nil), http.StatusOK)
	if streams, err := s.store.AllEnabledAuditStreams(context.Background()); err != nil || len(streams) != 0 {
		t.Fatalf("streams of a deleted realm: %+v %v", streams, err)
	}
}
