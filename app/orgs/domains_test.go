package orgs_test

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/orgs"
)

// dnsServer is an authoritative DNS server on loopback answering the TXT
// records a test publishes; every other name does not exist.
type dnsServer struct {
	addr     string
	mu       sync.Mutex
	txt      map[string][]string // by fully qualified name
	failing  bool                // answer SERVFAIL to everything
	lookedUp []string
}

func startDNS(t *testing.T) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dnsServer{addr: pc.LocalAddr().String(), txt: map[string][]string{}}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.serve)}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return d
}

func (d *dnsServer) serve(w dns.ResponseWriter, req *dns.Msg) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if d.failing {
		m.Rcode = dns.RcodeServerFailure
		_ = w.WriteMsg(m)
		return
	}
	for _, q := range req.Question {
		d.lookedUp = append(d.lookedUp, q.Name)
		values, ok := d.txt[strings.ToLower(q.Name)]
		if !ok {
			m.Rcode = dns.RcodeNameError
			continue
		}
		if q.Qtype == dns.TypeTXT {
			for _, v := range values {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT,
					Class: dns.ClassINET, Ttl: 60}, Txt: []string{v}})
			}
		}
	}
	_ = w.WriteMsg(m)
}

func (d *dnsServer) publish(name string, values ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.txt[dns.Fqdn(name)] = values
}

func (d *dnsServer) fail(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failing = on
}

func newDNSServer(t *testing.T) (*apptest.Server, *dnsServer) {
	t.Helper()
	d := startDNS(t)
	s := realapp.New(t, func(c *app.Config) { c.DNSResolver = d.addr })
	s.CreateRealm("acme")
	return s, d
}

func initiate(s *apptest.Server, slug, domain string) orgs.DomainChallengeRep {
	s.T.Helper()
	r := s.Admin(http.MethodPost, orgsPath+"/"+slug+"/verify-domain/initiate", map[string]any{"domain": domain})
	apptest.MustStatus(s.T, r, http.StatusOK)
	var c orgs.DomainChallengeRep
	r.Decode(s.T, &c)
	return c
}

func verify(s *apptest.Server, slug, domain string) *apptest.Response {
	s.T.Helper()
	return s.Admin(http.MethodPost, orgsPath+"/"+slug+"/verify-domain", map[string]any{"domain": domain})
}

func TestDomainVerification(t *testing.T) {
	s, d := newDNSServer(t)
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "domains": []any{map[string]any{"name": "acme.test"}}})
	createOrg(s, map[string]any{"slug": "rival", "name": "Rival", "domains": []any{map[string]any{"name": "acme.test"}}})

	c := initiate(s, "acme", "ACME.test")
	if c.Domain != "acme.test" || c.RecordName != "_idenplane-challenge.acme.test" || c.RecordType != "TXT" ||
		!strings.HasPrefix(c.RecordValue, "idenplane-verification=") || c.Verified {
		t.Errorf("challenge %+v", c)
	}
	// Nothing published yet, then a wrong value: refused, each said.
	r := verify(s, "acme", "acme.test")
	apptest.MustError(t, r, 400, "invalid_request", "domain")
	if !strings.Contains(string(r.Body), "no TXT record at") {
		t.Errorf("missing record not said: %s", r.Body)
	}
	d.publish("_idenplane-challenge.acme.test", "idenplane-verification=wrong", "v=spf1 -all")
	r = verify(s, "acme", "acme.test")
	apptest.MustError(t, r, 400, "invalid_request", "domain")
	if !strings.Contains(string(r.Body), "with the value asked for") {
		t.Errorf("wrong record not said: %s", r.Body)
	}
	if getOrg(s, "acme").Domains[0].Verified {
		t.Fatal("verified without the record")
	}

	d.publish("_idenplane-challenge.acme.test", "v=spf1 -all", c.RecordValue)
	r = verify(s, "acme", "acme.test")
	apptest.MustStatus(t, r, http.StatusOK)
	if got := getOrg(s, "acme").Domains; len(got) != 1 || !got[0].Verified {
		t.Errorf("domains after verification %+v", got)
	}
	// Verified again: still verified. Searched by the domain: found.
	apptest.MustStatus(t, verify(s, "acme", "acme.test"), http.StatusOK)

	// The rival cannot verify it, even with the record, nor can another
	// organization add it.
	rc := initiate(s, "rival", "acme.test")
	d.publish("_idenplane-challenge.acme.test", rc.RecordValue)
	apptest.MustError(t, verify(s, "rival", "acme.test"), 409, "conflict", "domain")
	apptest.MustError(t, s.Admin(http.MethodPost, orgsPath, map[string]any{"slug": "third", "name": "Third",
		"domains": []any{map[string]any{"name": "acme.test"}}}), 409, "conflict", "domains")
	apptest.MustError(t, s.Admin(http.MethodPut, orgsPath+"/rival", map[string]any{
		"domains": []any{map[string]any{"name": "acme.test"}, map[string]any{"name": "rival.test"}}}), 409, "conflict", "domains")

	// A PUT that keeps the domain keeps its verification, and may repeat it.
	apptest.MustStatus(t, s.Admin(http.MethodPut, orgsPath+"/acme", map[string]any{
		"domains": []any{map[string]any{"name": "acme.test", "verified": true}, map[string]any{"name": "acme.example"}}}), http.StatusOK)
	if got := getOrg(s, "acme").Domains; len(got) != 2 || got[0].Name != "acme.example" || got[0].Verified || !got[1].Verified {
		t.Errorf("domains after a PUT %+v", got)
	}
	// Dropped, it is free for the rival.
	apptest.MustStatus(t, s.Admin(http.MethodPut, orgsPath+"/acme", map[string]any{"domains": []any{}}), http.StatusOK)
	apptest.MustStatus(t, verify(s, "rival", "acme.test"), http.StatusOK)
}

func TestDomainVerificationBadInput(t *testing.T) {
	s, d := newDNSServer(t)
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "domains": []any{map[string]any{"name": "acme.test"}}})
	for _, tc := range []struct {
		name, path  string
		body        any
		status      int
		code, field string
	}{
		{"unknown organization", "/nope/verify-domain/initiate", map[string]any{"domain": "acme.test"}, 404, "not_found", ""},
		{"no domain", "/acme/verify-domain/initiate", map[string]any{}, 400, "invalid_field", "domain"},
		{"not a domain", "/acme/verify-domain/initiate", map[string]any{"domain": "10.0.0.1"}, 400, "invalid_field", "domain"},
		{"another domain", "/acme/verify-domain/initiate", map[string]any{"domain": "other.test"}, 404, "not_found", "domain"},
		{"domain not a string", "/acme/verify-domain/initiate", map[string]any{"domain": 1}, 400, "invalid_field", "domain"},
		{"unknown field", "/acme/verify-domain", map[string]any{"domain": "acme.test", "value": "x"}, 400, "unknown_field", "value"},
		{"verified before initiated", "/acme/verify-domain", map[string]any{"domain": "acme.test"}, 400, "invalid_request", "domain"},
		{"verify another domain", "/acme/verify-domain", map[string]any{"domain": "other.test"}, 404, "not_found", "domain"},
		{"verify in an unknown organization", "/nope/verify-domain", map[string]any{"domain": "acme.test"}, 404, "not_found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, orgsPath+tc.path, tc.body), tc.status, tc.code, tc.field)
		})
	}
	// A resolver that fails: 503 with Retry-After, nothing verified.
	c := initiate(s, "acme", "acme.test")
	d.publish("_idenplane-challenge.acme.test", c.RecordValue)
	d.fail(true)
	r := verify(s, "acme", "acme.test")
	apptest.MustError(t, r, 503, "unavailable", "")
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	if getOrg(s, "acme").Domains[0].Verified {
		t.Fatal("verified by a failing resolver")
	}
	d.fail(false)
	apptest.MustStatus(t, verify(s, "acme", "acme.test"), http.StatusOK)
	// A second initiation replaces the value: the old record no longer counts.
	createOrg(s, map[string]any{"slug": "beta", "name": "Beta", "domains": []any{map[string]any{"name": "beta.test"}}})
	old := initiate(s, "beta", "beta.test")
	initiate(s, "beta", "beta.test")
	d.publish("_idenplane-challenge.beta.test", old.RecordValue)
	apptest.MustError(t, verify(s, "beta", "beta.test"), 400, "invalid_request", "domain")
}
