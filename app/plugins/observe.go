package plugins

import (
	"context"
	"sync"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// DefaultQueueSize bounds the events waiting for the observers. Unlike a
// webhook's outbox, the queue is in memory: observers are best-effort, and
// an event that finds it full, or a server that stops, loses it (counted
// in each observer's dropped).
const DefaultQueueSize = 1024

// observers hold the events for the plugins of the event hook, and hand
// them over once their transaction committed.
type observers struct {
	s       *Service
	mu      sync.Mutex
	pending []queued // queued in a transaction, not yet woken
	queue   chan queued
}

type queued struct {
	realm *store.Realm
	t     bus.Type
	body  []byte
}

func newObservers(s *Service, size int) *observers {
	return &observers{s: s, queue: make(chan queued, size)}
}

// Wants says whether an enabled observer takes events of type t
// (bus.Subscriber); from memory.
func (s *Service) Wants(_ context.Context, _ *store.Realm, t bus.Type) bool {
	return len(s.observing(t)) > 0
}

// observing are the enabled observers that take type t.
func (s *Service) observing(t bus.Type) []*plugin {
	var out []*plugin
	for _, p := range s.running(HookEvent) {
		if bus.Matches(p.man.Events, t) {
			out = append(out, p)
		}
	}
	return out
}

// Queue keeps e's payload for the observers until Wake (bus.Subscriber).
func (s *Service) Queue(ctx context.Context, _ *store.Store, e *bus.Event) (bool, error) {
	ps := s.observing(e.Type)
	if len(ps) == 0 {
		return false, nil
	}
	body, err := e.JSON()
	if err != nil {
		return false, err
	}
	o := s.obs
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) >= cap(o.queue) {
		dropFor(ps)
		return false, nil
	}
	o.pending = append(o.pending, queued{realm: e.Realm, t: e.Type, body: body})
	return true, nil
}

// Wake hands the events queued to the worker (bus.Subscriber).
func (s *Service) Wake() {
	o := s.obs
	o.mu.Lock()
	pending := o.pending
	o.pending = nil
	o.mu.Unlock()
	for _, q := range pending {
		select {
		case o.queue <- q:
		default:
			dropFor(s.observing(q.t))
		}
	}
}

func dropFor(ps []*plugin) {
	for _, p := range ps {
		p.stats.drop()
	}
}

// Start runs the observers' worker until ctx is done; the function it
// answers waits for the worker to stop.
func (s *Service) Start(ctx context.Context) func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case q := <-s.obs.queue:
				s.observe(ctx, q)
			}
		}
	}()
	return func() { <-done }
}

// observe hands one event to every observer that takes it, in name order.
func (s *Service) observe(ctx context.Context, q queued) {
	for _, p := range s.observing(q.t) {
		_, _ = s.call(ctx, p, HookEvent, q.realm, q.body, p.man.FailOpen)
	}
}
