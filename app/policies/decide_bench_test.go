package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

// BenchmarkDecide measures the decision point alone, without HTTP: a
// realm with 100 policies over ten resource types, of which twelve cover
// each request (a user's, resolved to the user), one request at a time
// and in batches of 20 with one subject; it reports evaluations/s.
func BenchmarkDecide(b *testing.B) {
	st, _ := apptest.OpenStore(b)
	ctx := context.Background()
	realm := &store.Realm{ID: "11111111-1111-4111-8111-111111111111", Name: "bench", Enabled: true, AccessTokenLifespan: 300,
		RefreshTokenLifespan: 1800, OfflineTokenLifespan: 86400}
	if err := st.CreateRealm(ctx, realm); err != nil {
		b.Fatal(err)
	}
	user := &store.User{ID: "22222222-2222-4222-8222-222222222222", RealmID: realm.ID, Username: "alice", Email: "alice@bench.test",
		Enabled: true}
	if err := st.CreateUser(ctx, user); err != nil {
		b.Fatal(err)
	}
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
		if i >= 98 {
			rtype = Any
		}
		rt, _ := json.Marshal([]string{rtype})
		p := &store.AuthzPolicy{ID: fmt.Sprintf("33333333-0000-4000-8000-%012d", i), RealmID: realm.ID, Name: fmt.Sprintf("policy %03d", i),
			Enabled: true, Effect: effect, ResourceTypes: string(rt), Actions: `["read","edit","delete"]`,
			Expression: conditions[(i/len(types)+i)%len(conditions)], CreatedAt: 1, UpdatedAt: 1}
		if err := st.CreateAuthzPolicy(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	s := New(Deps{Store: st})
	q := func(i int) *Request {
		return &Request{Subject: &Subject{Type: SubjectUser, ID: "alice"}, Action: &Action{Name: []string{"read", "edit"}[i%2]},
			Resource: &Resource{Type: "document", ID: fmt.Sprint(i), Properties: map[string]any{"ownerID": "alice@bench.test",
				"classification": "internal"}}, Context: map[string]any{"time": "2026-05-04T10:00:00Z"}}
	}
	f := Facts{Now: time.Now()}
	batch := make([]*Request, 20)
	for i := range batch {
		batch[i] = q(i)
	}
	if d, err := s.Decide(ctx, realm, q(0), f); err != nil || len(d.Policies) != 12 {
		b.Fatalf("%+v %v", d, err)
	}
	for _, c := range []struct {
		name string
		reqs []*Request
	}{{"single", batch[:1]}, {"batch-20", batch}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					for _, r := range c.reqs {
						if _, err := s.Decide(ctx, realm, r, f); err != nil {
							b.Error(err)
							return
						}
					}
				}
			})
			b.ReportMetric(float64(b.N*len(c.reqs))/time.Since(start).Seconds(), "evaluations/s")
		})
	}
}
