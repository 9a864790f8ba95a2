package identity

import (
	"sync"
	"time"

	"github.com/idenplane/idenplane/app/identity/argon2id"
)

// hashMemoryIdle is how long the hashes' working memory is kept once no
// hash has run.
const hashMemoryIdle = 30 * time.Second

// hashMemories keeps the hashes' working memory (19 MiB each) from one
// hash to the next, at most one per hash slot since the slots bound how
// many are out at once. A sync.Pool did worse: under a sign-in storm the
// heap sits at its limit, the collector runs every few hashes and empties
// the pool, and the memories made anew sat beside the dropped ones until
// the next collection (the storm's peak RSS fell from 111-120 to 101 MB
// with this list). After hashMemoryIdle without a hash the memories are
// left to the collector, so that an idle server does not keep them.
type hashMemories struct {
	mu    sync.Mutex
	free  []*argon2id.Memory
	idle  *time.Timer
	after time.Duration
}

func (h *hashMemories) get() *argon2id.Memory {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.free); n > 0 {
		m := h.free[n-1]
		h.free = h.free[:n-1]
		return m
	}
	return new(argon2id.Memory)
}

func (h *hashMemories) put(m *argon2id.Memory) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.free = append(h.free, m)
	if h.idle == nil {
		h.idle = time.AfterFunc(h.after, h.release)
		return
	}
	h.idle.Reset(h.after)
}

func (h *hashMemories) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.free)
	h.free = h.free[:0]
}
