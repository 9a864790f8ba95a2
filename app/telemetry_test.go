package app

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/idenplane/idenplane/app/telemetry"
)

// otlpReceiver is an OTLP/HTTP collector on loopback: it keeps every span
// it is sent.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rcv := &otlpReceiver{}
	rcv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != telemetry.TracesPath ||
			r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("receiver: %s %s (%s), want a POST of protobuf to %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"), telemetry.TracesPath)
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil {
			t.Errorf("receiver: %v", err)
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		rcv.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				rcv.spans = append(rcv.spans, ss.Spans...)
			}
		}
		rcv.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rcv.Close)
	return rcv
}

// named is the one span named name, or the test fails.
func (rcv *otlpReceiver) named(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	var found []*tracepb.Span
	for _, s := range rcv.all() {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q, want 1", len(found), name)
	}
	return found[0]
}

func (rcv *otlpReceiver) all() []*tracepb.Span {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	return append([]*tracepb.Span(nil), rcv.spans...)
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			if v := kv.Value.GetStringValue(); v != "" {
				return v
			}
			return strings.TrimSpace(strings.Trim(kv.Value.String(), "int_value:"))
		}
	}
	return ""
}

// TestTracing: with an OTLP endpoint, a password grant reaches the
// collector as one trace, its HTTP span the root and the store's spans
// under it; a caller's traceparent is the parent of the request's span,
// and an outbound call carries the trace on.
func TestTracing(t *testing.T) {
	rcv := newOTLPReceiver(t)
	tp, err := telemetry.NewProvider(t.Context(), rcv.URL, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	var upstreamParent string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamParent = r.Header.Get("Traceparent")
		http.NotFound(w, r)
	}))
	defer upstream.Close()
	s := newOIDCTestServer(t, func(c *Config) {
		c.Tracer = tp
		c.OutboundAllowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "alice", "password": codeflowPassword})
	r := s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli", "grantTypes": []string{"password"}})
	mustStatus(t, r, http.StatusCreated)
	secret := r.object(t)["secret"].(string)

	form := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword},
		"client_id": {"cli"}, "client_secret": {secret}}
	r = s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded")
	mustStatus(t, r, http.StatusOK)

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	mustStatus(t, s.request(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil,
		"Traceparent: 00-"+callerTrace+"-"+callerSpan+"-01"), http.StatusOK)

	r = s.admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": "corp",
		"providerType": "oidc", "issuer": upstream.URL, "clientId": "c", "clientSecret": "s"})
	mustStatus(t, r, http.StatusBadRequest) // the upstream has no discovery document

	if err := tp.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}

	grant := rcv.named(t, "POST /realms/{realm}/protocol/openid-connect/token")
	if len(grant.ParentSpanId) != 0 || grant.Kind != tracepb.Span_SPAN_KIND_SERVER ||
		spanAttr(grant, "http.response.status_code") != "200" {
		t.Fatalf("the grant's span %v, want a server span at the root of its trace, status 200", grant)
	}
	byID := map[string]*tracepb.Span{}
	for _, sp := range rcv.all() {
		byID[string(sp.SpanId)] = sp
	}
	underGrant := func(sp *tracepb.Span) bool {
		for p := sp; p != nil; p = byID[string(p.ParentSpanId)] {
			if string(p.SpanId) == string(grant.SpanId) {
				return true
			}
		}
		return false
	}
	var store, children []string
	for _, sp := range rcv.all() {
		if string(sp.TraceId) != string(grant.TraceId) {
			continue
		}
		if !underGrant(sp) {
			t.Errorf("span %s of the grant's trace is not under its HTTP span", sp.Name)
		}
		if string(sp.ParentSpanId) == string(grant.SpanId) {
			children = append(children, sp.Name)
		}
		if strings.HasPrefix(sp.Name, "store.") {
			store = append(store, sp.Name)
		}
		for _, kv := range sp.Attributes {
			if v := kv.Value.GetStringValue(); strings.Contains(v, codeflowPassword) || strings.Contains(v, secret) ||
				strings.Contains(strings.ToUpper(v), "SELECT ") {
				t.Errorf("span %s holds %s=%q", sp.Name, kv.Key, v)
			}
		}
	}
	for _, want := range []string{"store.Tx", "store.GetClientByClientID"} {
		if !strings.Contains(strings.Join(children, " ")+" ", want+" ") {
			t.Errorf("no %s span among the grant's children %v", want, children)
		}
	}
	t.Logf("the grant's %d store spans: %v", len(store), store)

	wellKnown := rcv.named(t, "GET /realms/{realm}/.well-known/openid-configuration")
	if hex.EncodeToString(wellKnown.TraceId) != callerTrace || hex.EncodeToString(wellKnown.ParentSpanId) != callerSpan {
		t.Errorf("a request with a traceparent: trace %x parent %x, want the caller's %s %s",
			wellKnown.TraceId, wellKnown.ParentSpanId, callerTrace, callerSpan)
	}

	create := rcv.named(t, "POST /admin/realms/{realm}/identity-providers")
	parts := strings.Split(upstreamParent, "-")
	if len(parts) != 4 || parts[1] != hex.EncodeToString(create.TraceId) {
		t.Fatalf("the discovery call's traceparent %q, want the trace %x of the request that made it", upstreamParent, create.TraceId)
	}
	call := byID[string(mustHex(t, parts[2]))]
	if call == nil || call.Kind != tracepb.Span_SPAN_KIND_CLIENT || !strings.HasPrefix(spanAttr(call, "url.full"), upstream.URL) {
		t.Fatalf("the outbound call's span %v", call)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkTokenEndpointTracing measures the client credentials grant
// through the handler, with tracing off and on (spans exported in batches
// to a loopback collector).
func BenchmarkTokenEndpointTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/x-protobuf")
			}))
			defer collector.Close()
			s := newTestServer(b, func(c *Config) {
				if on {
					tp, err := telemetry.NewProvider(b.Context(), collector.URL, "bench")
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
					c.Tracer = tp
				}
			})
			s.createRealm("bench")
			r := s.admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{
				"clientId": "svc", "grantTypes": []string{"client_credentials"}})
			mustStatus(b, r, http.StatusCreated)
			auth := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("svc:"+r.object(b)["secret"].(string)))
			grant := func() {
				r := s.request(http.MethodPost, "/realms/bench/protocol/openid-connect/token", "grant_type=client_credentials",
					"Content-Type: application/x-www-form-urlencoded", auth)
				if r.Status != http.StatusOK {
					b.Fatalf("status %d: %s", r.Status, r.Body)
				}
			}
			grant()
			b.ReportAllocs()
			for b.Loop() {
				grant()
			}
		})
	}
}
