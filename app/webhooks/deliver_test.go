package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// An endpoint that does not answer within the attempt's timeout fails the
// attempt, which is retried later like any other failure.
func TestDeliveryTimesOut(t *testing.T) {
	st, _ := apptest.OpenStore(t)
	ctx := context.Background()
	realm := &store.Realm{ID: "r1", Name: "acme", Enabled: true}
	if err := st.CreateRealm(ctx, realm); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	s := New(Deps{Store: st, Now: func() time.Time { return now }, AttemptTimeout: 50 * time.Millisecond,
		Client: NewClient([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})})
	hook := &store.Webhook{ID: "w1", RealmID: realm.ID, URL: slow.URL, Events: []string{"*"}, Enabled: true, Secret: newSecret()}
	if err := st.CreateWebhook(ctx, hook); err != nil {
		t.Fatal(err)
	}
	b := bus.New(s.deps.Now)
	b.Subscribe(s)
	if err := b.Publish(ctx, st, realm, bus.UserCreated, map[string]any{"userId": "u1"}); err != nil {
		t.Fatal(err)
	}
	if n := s.DeliverDue(ctx); n != 0 {
		t.Fatalf("%d delivered to an endpoint that never answers", n)
	}
	attempts, err := st.ListWebhookAttempts(ctx, "w1", 0, 10)
	if err != nil || len(attempts) != 1 {
		t.Fatalf("attempts %+v %v", attempts, err)
	}
	a := attempts[0]
	if a.StatusCode != 0 || !strings.Contains(a.Error, "no answer within 50ms") || a.NextAttemptAt <= a.AttemptedAt {
		t.Fatalf("a timed-out attempt: %+v", a)
	}
}
