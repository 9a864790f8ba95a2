package identity

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/idenplane/idenplane/app/identity/argon2id"
)

// hashMemoryIdle is how long the hashes' working memory is kept once no
// hash has run: a sign-in storm keeps it, a quiet server gives it back
// within a second.
const hashMemoryIdle = time.Second

// hashMemories keeps the hashes' working memory (19 MiB each) from one
// hash to the next, at most one per hash slot since the slots bound how
// many are out at once. A sync.Pool did worse: under a sign-in storm the
// heap sits at its limit, the collector runs every few hashes and empties
// the pool, and the memories made anew sat beside the dropped ones until
// the next collection. With this list the storm's peak RSS, after the
// load test's other scenarios, fell from 101-107 to 95-96 MB on 20,000
// users and from 111-120 to 100-109 MB on 100,000. Once idle the memories
// are dropped and handed back to the system at once: left to the
// runtime's scavenger, 25 MB of them were still resident seconds later.
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
	dropped := len(h.free)
	clear(h.free)
	h.free = h.free[:0]
	h.mu.Unlock()
	if dropped > 0 {
		debug.FreeOSMemory()
	}
}
