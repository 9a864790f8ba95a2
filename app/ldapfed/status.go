package ldapfed

import "sync/atomic"

// SyncResult is the outcome of one sync, as the sync answers it and the
// provider shows its last.
type SyncResult struct {
	Action     string    `json:"action"`    // full or changed
	StartedAt  int64     `json:"startedAt"` // Unix milliseconds
	Read       int       `json:"read"`      // entries the directory sent
	Created    int       `json:"created"`
	Updated    int       `json:"updated"`
	Disabled   int       `json:"disabled"`
	Deleted    int       `json:"deleted"`
	Failed     int       `json:"failed"`
	DurationMs int64     `json:"durationMs"`
	Failures   []Failure `json:"failures"` // the first maxFailures
	// Error is why the sync stopped before its end, empty when it ran
	// through.
	Error string `json:"error,omitempty"`
}

// Failure is an entry a sync could not take, and why.
type Failure struct {
	DN     string `json:"dn"`
	Reason string `json:"reason"`
}

// maxFailures bounds the failures a result lists; Failed counts them all.
const maxFailures = 100

func (r *SyncResult) fail(dn, reason string) {
	r.Failed++
	if len(r.Failures) < maxFailures {
		r.Failures = append(r.Failures, Failure{DN: dn, Reason: reason})
	}
}

// Progress is a running sync's state, shown while it runs.
type Progress struct {
	Action    string `json:"action"`
	StartedAt int64  `json:"startedAt"`
	Processed int64  `json:"processed"` // entries read so far
}

// progress is a running sync's counter, written by the sync and read by
// the provider's GET.
type progress struct {
	action    string
	startedAt int64
	processed atomic.Int64
}

// progressOf is the sync of the provider running now, nil for none.
func (s *Service) progressOf(id string) *Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.running[id]
	if p == nil {
		return nil
	}
	return &Progress{Action: p.action, StartedAt: p.startedAt, Processed: p.processed.Load()}
}
