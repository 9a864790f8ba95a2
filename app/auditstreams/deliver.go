package auditstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

const (
	// DefaultRetryBase is the wait after a stream's first failure.
	DefaultRetryBase = 5 * time.Second
	// MaxRetryWait caps the doubling waits: a destination back from an
	// outage is caught up within minutes.
	MaxRetryWait = 5 * time.Minute
	// DefaultAttemptTimeout bounds the sending of one batch.
	DefaultAttemptTimeout = 10 * time.Second
	// PollInterval is how often the worker looks for records when nothing
	// wakes it.
	PollInterval = time.Second
	// BatchSize bounds the records one send carries.
	BatchSize = 500
	// batchesPerPass bounds one stream's sends in a pass, so that a long
	// backlog does not hold up the pass's end (and its purge).
	batchesPerPass = 20
	// maxErrorLength bounds a stream's recorded error.
	maxErrorLength = 300
)

// destination sends a batch of records, in order, and says whether the
// receiver took all of it: only then does the cursor move past it.
type destination interface {
	send(ctx context.Context, recs []*store.AuditRecord) error
}

// Start runs the delivery worker until ctx ends and returns a function
// that waits for it. One server of a fleet sends at a time.
func (s *Service) Start(ctx context.Context) (wait func()) {
	return s.deps.Store.Worker(ctx, "auditstreams", PollInterval, s.wake, func(ctx context.Context) { s.DeliverDue(ctx) })
}

// DeliverDue sends each enabled stream that is not waiting out a failure
// the records after its cursor, the streams in parallel, then deletes the
// records every stream has passed. It says how many records were sent.
func (s *Service) DeliverDue(ctx context.Context) (sent int) {
	streams, err := s.deps.Store.AllEnabledAuditStreams(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.deps.Log.Error("reading the audit streams failed", "err", err)
		}
		return 0
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	moved := false
	for _, a := range streams {
		wg.Go(func() {
			n, advanced := s.deliver(ctx, a)
			mu.Lock()
			sent += n
			moved = moved || advanced
			mu.Unlock()
		})
	}
	wg.Wait()
	if moved {
		s.Purge(ctx)
	}
	return sent
}

// Purge deletes the records every enabled stream of their realm has
// passed, and all those of a realm without one.
func (s *Service) Purge(ctx context.Context) {
	if _, err := s.deps.Store.PurgeAuditRecords(ctx); err != nil && ctx.Err() == nil {
		s.deps.Log.Error("purging audit records failed", "err", err)
	}
}

// deliver sends a its records after its cursor, batch by batch, and says
// how many it sent and whether its cursor moved.
func (s *Service) deliver(ctx context.Context, a *store.AuditStream) (sent int, moved bool) {
	c, err := s.deps.Store.AuditCursor(ctx, a.ID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
			s.deps.Log.Error("reading an audit stream's cursor failed", "stream", a.ID, "err", err)
		}
		return 0, false
	}
	if c.NextAttemptAt > s.deps.Now().UnixMilli() {
		return 0, false
	}
	var dest destination
	for range batchesPerPass {
		recs, err := s.deps.Store.AuditRecordsAfter(ctx, a.RealmID, c.DeliveredSeq, BatchSize)
		if err != nil || len(recs) == 0 {
			if err != nil && ctx.Err() == nil {
				s.deps.Log.Error("reading audit records failed", "stream", a.ID, "err", err)
			}
			return sent, moved
		}
		var take []*store.AuditRecord
		for _, r := range recs {
			if bus.Matches(a.Events, bus.Type(r.EventType)) {
				take = append(take, r)
			}
		}
		if len(take) > 0 {
			if dest == nil {
				if dest, err = s.destination(a); err != nil {
					s.failed(ctx, a, c, err)
					return sent, moved
				}
			}
			sctx, cancel := context.WithTimeout(ctx, s.deps.AttemptTimeout)
			err = dest.send(sctx, take)
			cancel()
			if ctx.Err() != nil {
				return sent, moved // shutting down: the cursor stays, the batch goes again
			}
			if err != nil {
				s.failed(ctx, a, c, err)
				return sent, moved
			}
		}
		last := recs[len(recs)-1].Seq
		if err := s.deps.Store.AdvanceAuditCursor(context.WithoutCancel(ctx), a.ID, last, s.deps.Now().UnixMilli()); err != nil {
			s.deps.Log.Error("moving an audit stream's cursor failed", "stream", a.ID, "err", err)
			return sent, moved
		}
		c.DeliveredSeq, c.Failures = last, 0
		sent, moved = sent+len(take), true
		if len(recs) < BatchSize {
			return sent, moved
		}
	}
	s.Wake() // more to send: the next pass comes at once
	return sent, moved
}

// failed records a's failure and when to try again; its cursor stays.
func (s *Service) failed(ctx context.Context, a *store.AuditStream, c *store.AuditCursor, sendErr error) {
	now := s.deps.Now()
	next := now.Add(s.retryWait(c.Failures + 1))
	msg := truncate(sendErr.Error(), maxErrorLength)
	if err := s.deps.Store.FailAuditCursor(context.WithoutCancel(ctx), a.ID, msg, now.UnixMilli(), next.UnixMilli()); err != nil {
		s.deps.Log.Error("recording an audit stream's failure failed", "stream", a.ID, "err", err)
	}
	if c.Failures == 0 {
		s.deps.Log.Warn("audit stream failing", "stream", a.ID, "type", a.Type, "err", msg)
	}
}

// retryWait is the wait after the nth failure in a row: RetryBase doubled
// for each before it, at most MaxRetryWait, less up to a fifth at random
// so that the streams an outage hit together are not retried together.
func (s *Service) retryWait(n int) time.Duration {
	wait := s.deps.RetryBase
	for i := 1; i < n && wait < MaxRetryWait; i++ {
		wait *= 2
	}
	wait = min(wait, MaxRetryWait)
	return wait - time.Duration(rand.Int64N(int64(wait)/5+1))
}

// destination is what sends a's records.
func (s *Service) destination(a *store.AuditStream) (destination, error) {
	switch Type(a.Type) {
	case TypeSyslog:
		var set SyslogSettings
		if err := json.Unmarshal(a.Settings, &set); err != nil {
			return nil, fmt.Errorf("settings of audit stream %s: %w", a.ID, err)
		}
		return s.newSyslog(&set)
	case TypeHTTP:
		var set HTTPSettings
		if err := json.Unmarshal(a.Settings, &set); err != nil {
			return nil, fmt.Errorf("settings of audit stream %s: %w", a.ID, err)
		}
		return &httpSink{set: set, secret: a.Secret, client: s.deps.Client, host: s.hostname}, nil
	case TypeFile:
		var set FileSettings
		if err := json.Unmarshal(a.Settings, &set); err != nil {
			return nil, fmt.Errorf("settings of audit stream %s: %w", a.ID, err)
		}
		if s.deps.Dir == "" {
			return nil, errors.New("the server has no --audit-dir: file streams are off")
		}
		return &fileSink{dir: s.deps.Dir, set: set}, nil
	}
	return nil, fmt.Errorf("audit stream %s: unknown type %q", a.ID, a.Type)
}

// recordJSON is a record as destinations get it: the event's payload
// (app/bus) with its sequence first.
func recordJSON(r *store.AuditRecord) []byte {
	b := make([]byte, 0, len(r.Payload)+24)
	b = append(b, `{"sequence":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	if len(r.Payload) > 2 && r.Payload[0] == '{' {
		return append(append(b, ','), r.Payload[1:]...)
	}
	return append(b, '}')
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
