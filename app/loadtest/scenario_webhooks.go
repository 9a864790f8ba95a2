package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// webhooks: an administrator's updates of users, each a user.updated
// event, delivered to a webhook of the load realm whose receiver runs in
// this process on loopback. The requests are the updates; what the
// scenario reports beside them is the deliveries received per second.

// hookEvent is the event type the webhook takes: what a user update is.
const hookEvent = "user.updated"

// hookSampleEvery is how often a delivery's signature is checked: each
// check is an HMAC in the generator, on the server's cores.
const hookSampleEvery = 64

// hookReceiver counts the deliveries it answers, and checks the Standard
// Webhooks signature of the first and then of one in hookSampleEvery.
type hookReceiver struct {
	url      string
	srv      *http.Server
	verifier *standardwebhooks.Webhook // set once the webhook's secret is known
	received atomic.Int64
	mu       sync.Mutex
	firstErr error
}

func startHookReceiver() (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hookReceiver{url: "http://" + ln.Addr().String() + "/hooks"}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if n := h.received.Add(1); n%hookSampleEvery == 1 {
		h.check(body, r.Header)
	}
	w.WriteHeader(http.StatusNoContent)
}

var errHookSignature = errors.New("a webhook delivery's signature does not verify")

func (h *hookReceiver) check(body []byte, header http.Header) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.verifier == nil || h.firstErr != nil {
		return
	}
	if err := h.verifier.Verify(body, header); err != nil {
		h.firstErr = fmt.Errorf("%w: %w (webhook-id %s)", errHookSignature, err, header.Get("webhook-id"))
	}
}

// err is the first delivery that failed its check.
func (h *hookReceiver) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.firstErr
}

// prepareWebhooks starts the receiver and subscribes it to the load
// realm's user updates through the admin API; release deletes the
// webhook with what it has not delivered, so that no later scenario pays
// for its deliveries.
func prepareWebhooks(ctx context.Context, e *loadEnv) (func(context.Context) error, error) {
	if len(e.sample) == 0 {
		return nil, fmt.Errorf("%w: no seeded users", errLoadSetup)
	}
	h, err := startHookReceiver()
	if err != nil {
		return nil, err
	}
	path := "/admin/realms/" + loadRealm + "/webhooks"
	var hook struct{ ID, Secret string }
	if err := e.admin(ctx, http.MethodPost, path, map[string]any{"url": h.url, "events": []string{hookEvent},
		"enabled": true, "description": "the load test's receiver"}, http.StatusCreated, &hook); err != nil {
		_ = h.srv.Close()
		return nil, err
	}
	verifier, err := standardwebhooks.NewWebhook(hook.Secret)
	if err != nil {
		_ = h.srv.Close()
		return nil, fmt.Errorf("the webhook's secret: %w", err)
	}
	h.mu.Lock()
	h.verifier = verifier
	h.mu.Unlock()
	e.hooks = h
	return func(ctx context.Context) error {
		e.hooks = nil
		err := e.admin(ctx, http.MethodDelete, path+"/"+hook.ID, nil, http.StatusNoContent, nil)
		return errors.Join(err, h.srv.Close())
	}, nil
}

// hookWorkers update sampled users' first names through the admin API,
// each update an event the webhook takes. A delivery that failed its
// check fails the next update.
func hookWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	h := e.hooks
	if h == nil {
		return nil, errors.New("webhooks: no receiver")
	}
	c, header := t.client(hc), e.adminHeader()
	calls := make([]loadCall, n)
	for w := range n {
		next := 0
		calls[w] = func(ctx context.Context) (bool, error) {
			if err := h.err(); err != nil {
				return false, err
			}
			next++
			u := e.sample[rand.IntN(len(e.sample))]
			body := fmt.Appendf(nil, `{"firstName":"Load %d-%d"}`, w, next)
			_, shed, err := c.doJSON(ctx, http.MethodPatch, "/admin/realms/"+loadRealm+"/users/"+u.id, "application/json",
				body, header, http.StatusOK)
			return shed, err
		}
	}
	return calls, nil
}

// hookDeliveries counts the deliveries the receiver answered.
func hookDeliveries(e *loadEnv) func() int64 {
	if h := e.hooks; h != nil {
		return h.received.Load
	}
	return func() int64 { return 0 }
}
