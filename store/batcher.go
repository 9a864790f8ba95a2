package store

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Batcher writes items by group commit: each caller's item is written,
// and flushed to disk, before its Do returns, as one write per item
// would; but items that arrive while a write is under way wait for the
// next one, which takes all of them together. Under load a request then
// pays a share of one commit and one disk flush instead of a whole one,
// and no item is ever only in memory.
//
// There is no writer goroutine: the first caller to find no write under
// way leads, writes what is queued, and hands the lead to the oldest
// caller that queued meanwhile, so no one caller writes for everyone.
type Batcher[T any] struct {
	// write writes a batch and returns each item's outcome, in order.
	write func(ctx context.Context, batch []T) []error
	// gap spaces the writes under load: every commit writes the pages its
	// rows touched (the table's and each index's) and flushes, however few
	// rows it holds. A caller waits at most this long, and only when the
	// previous write was that recent.
	gap time.Duration

	mu      sync.Mutex
	pending []*batched[T]
	writing bool
	last    time.Time // when the last write ended
}

type batched[T any] struct {
	item T
	done chan error // the item's outcome, or errLeadNext
}

var errLeadNext = errors.New("lead the next batch")

// NewBatcher returns a Batcher whose batches write writes, at most one
// every gap.
func NewBatcher[T any](gap time.Duration, write func(ctx context.Context, batch []T) []error) *Batcher[T] {
	return &Batcher[T]{write: write, gap: gap}
}

// Do writes item in the next batch and returns its outcome. A batch is
// written with the context of the caller that leads it.
func (b *Batcher[T]) Do(ctx context.Context, item T) error {
	me := &batched[T]{item: item, done: make(chan error, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, me)
	lead := !b.writing
	b.writing = true
	b.mu.Unlock()
	if !lead {
		if err := <-me.done; !errors.Is(err, errLeadNext) {
			return err
		}
	}
	if wait := b.gap - time.Since(b.last); wait > 0 {
		time.Sleep(wait)
	}
	b.mu.Lock()
	batch := b.pending
	b.pending = nil
	b.mu.Unlock()

	items := make([]T, len(batch))
	for i, q := range batch {
		items[i] = q.item
	}
	results := b.write(ctx, items)
	var mine error
	for i, q := range batch {
		if q == me {
			mine = results[i]
		} else {
			q.done <- results[i]
		}
	}

	b.mu.Lock()
	b.last = time.Now()
	if len(b.pending) > 0 {
		b.pending[0].done <- errLeadNext
	} else {
		b.writing = false
	}
	b.mu.Unlock()
	return mine
}
