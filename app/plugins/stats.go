package plugins

import (
	"slices"
	"sync"
	"time"
)

// recentCalls is how many of a plugin's latest call times its p99 is of.
const recentCalls = 1000

// stats counts a plugin's calls since the server started.
type stats struct {
	mu      sync.Mutex
	calls   int64
	errors  int64
	dropped int64 // events an observer never got: the queue was full
	times   []time.Duration
	next    int
}

func (s *stats) record(d time.Duration, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if failed {
		s.errors++
	}
	if len(s.times) < recentCalls {
		s.times = append(s.times, d)
		return
	}
	s.times[s.next] = d
	s.next = (s.next + 1) % recentCalls
}

func (s *stats) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropped++
}

// snapshot answers the counts and the 99th percentile of the recent call
// times (nearest rank).
func (s *stats) snapshot() (calls, errs, dropped int64, p99 time.Duration) {
	s.mu.Lock()
	times := slices.Clone(s.times)
	calls, errs, dropped = s.calls, s.errors, s.dropped
	s.mu.Unlock()
	if len(times) == 0 {
		return calls, errs, dropped, 0
	}
	slices.Sort(times)
	rank := (len(times)*99 + 99) / 100 // ceil(0.99 n)
	return calls, errs, dropped, times[rank-1]
}
