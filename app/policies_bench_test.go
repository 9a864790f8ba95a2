package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// BenchmarkPolicyEvaluate measures the AuthZEN endpoints over HTTP on
// loopback with keep-alive connections (4 × GOMAXPROCS clients, a client
// authenticated by its credentials), for a realm with 100 policies of
// which 12 cover the request: one evaluation a request (single), and
// batches of 20 (batch-20); it reports evaluations/s. Beside them, the
// client-credentials grant (ES256) of the same server, for the ratio.
func BenchmarkPolicyEvaluate(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	s := newTestServer(b, func(c *Config) { c.BaseURL = base })
	// The server's own handler: not the tests' OpenAPI checks, which cost
	// a batch's body more than its evaluations.
	srv := httptest.NewUnstartedServer(s.app.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	b.Cleanup(srv.Close)
	s.createRealm("bench")
	mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/keys/rotate", map[string]any{"algorithm": "ES256", "immediate": true}),
		http.StatusOK)
	secret := benchPolicyRealm(b, s)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
	post := func(path string, body []byte) error {
		req, _ := http.NewRequest(http.MethodPost, base+"/realms/bench"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("pep", secret)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return &httpStatusError{resp.StatusCode}
		}
		return nil
	}
	request := func(i int) map[string]any {
		users := []string{"alice", "bob", "carol", "dave"}
		return map[string]any{"subject": map[string]any{"type": "user", "id": users[i%len(users)]},
			"action": map[string]any{"name": []string{"read", "edit"}[i%2]},
			"resource": map[string]any{"type": "document", "id": fmt.Sprint(i), "properties": map[string]any{
				"ownerID": users[(i+1)%len(users)] + "@bench.test", "classification": "internal"}},
			"context": map[string]any{"time": "2026-05-04T10:00:00Z"}}
	}
	single, _ := json.Marshal(request(0))
	evaluations := make([]any, 20)
	for i := range evaluations {
		evaluations[i] = request(i)
	}
	batch, _ := json.Marshal(map[string]any{"evaluations": evaluations, "options": map[string]any{"evaluations_semantic": "execute_all"}})

	for _, c := range []struct {
		name string
		path string
		body []byte
		per  int
	}{
		{"single", "/access/v1/evaluation", single, 1},
		{"batch-20", "/access/v1/evaluations", batch, 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := post(c.path, c.body); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(4)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := post(c.path, c.body); err != nil {
						b.Error(err)
						return
					}
				}
			})
			elapsed := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N*c.per)/elapsed, "evaluations/s")
			b.ReportMetric(float64(b.N)/elapsed, "requests/s")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
		})
	}
	b.Run("client-credentials", func(b *testing.B) {
		s.admin(http.MethodDelete, "/admin/realms/bench/clients/svc", nil) // made again by each round
		s.runGrants(b, base)
		b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
	})
}

// benchPolicyRealm gives realm bench four users with roles, groups and
// attributes, the entitled client pep, and 100 policies over ten resource
// types: ten for documents, and two for any type, cover the benchmark's
// requests. It answers pep's secret.
func benchPolicyRealm(b *testing.B, s *testServer) string {
	b.Helper()
	post := func(path string, body any) map[string]any {
		b.Helper()
		r := s.admin(http.MethodPost, "/admin/realms/bench"+path, body)
		if r.Status >= 300 {
			b.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
		}
		if len(r.Body) > 0 && r.Body[0] == '{' {
			return r.object(b)
		}
		return nil
	}
	post("/custom-attributes", map[string]any{"name": "department", "type": "string"})
	post("/roles", map[string]any{"name": "editor"})
	post("/roles", map[string]any{"name": "authzen"})
	staff := post("/groups", map[string]any{"name": "staff"})["id"].(string)
	for i, name := range []string{"alice", "bob", "carol", "dave"} {
		id := s.createUser("bench", map[string]any{"username": name, "email": name + "@bench.test",
			"attributes": map[string]any{"department": []string{"finance", "sales"}[i%2]}})["id"].(string)
		if i%2 == 0 {
			post("/users/"+id+"/role-mappings/realm", map[string]any{"roleNames": []string{"editor"}})
		}
		mustStatus(b, s.admin(http.MethodPut, "/admin/realms/bench/users/"+id+"/groups/"+staff, nil), http.StatusOK)
	}
	secret := post("/clients", map[string]any{"clientId": "pep", "grantTypes": []string{"client_credentials"}})["secret"].(string)
	sa := s.admin(http.MethodGet, "/admin/realms/bench/clients/pep/service-account-user", nil).object(b)["id"].(string)
	post("/users/"+sa+"/role-mappings/realm", map[string]any{"roleNames": []string{"authzen"}})

	conditions := []string{
		`"editor" in subject.roles`,
		`resource.properties.ownerID == subject.email`,
		`subject.groups.exists(g, g.startsWith("/staff")) && action.name == "read"`,
		`"department" in subject.attributes && "finance" in subject.attributes["department"]`,
		`context.time.getHours("UTC") >= 8 && context.time.getHours("UTC") < 18`,
		`has(resource.properties.classification) && resource.properties.classification == "secret"`,
		`subject.id.endsWith("@contractor.test")`,
		`sets.intersects(subject.roles, ["admin", "auditor"])`,
		`size(subject.groups) > 5`,
		`subject.emailVerified && "editor" in subject.roles`,
	}
	types := []string{"document", "invoice", "report", "payroll", "console", "pipeline", "api", "ticket", "wiki", "repo"}
	for i := range 100 {
		effect, rtype := "permit", types[i%len(types)]
		if i%5 == 4 {
			effect = "deny"
		}
		if i == 98 || i == 99 {
			rtype = "*"
		}
		post("/policies", map[string]any{"name": fmt.Sprintf("policy %03d", i), "effect": effect,
			"target":    map[string]any{"resourceTypes": []string{rtype}, "actions": []string{"read", "edit", "delete"}},
			"condition": conditions[(i/len(types)+i)%len(conditions)]})
	}
	return secret
}
