package identity

import (
	"context"
	"sync"
	"testing"
	"time"
)

func freeMemories(h *hashMemories) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.free)
}

func TestHashMemoriesKeptUpToTheSlots(t *testing.T) {
	c := New(Deps{HashSlots: make(chan struct{}, 2)})
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := c.HashPassword(context.Background(), "correct horse"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := freeMemories(c.memories); n != 2 {
		t.Fatalf("%d memories kept after six hashes on two slots, want 2", n)
	}
}

func TestHashMemoriesLetGoWhenIdle(t *testing.T) {
	h := &hashMemories{after: 20 * time.Millisecond}
	a, b := h.get(), h.get()
	if a == b {
		t.Fatal("two callers got the same memory")
	}
	h.put(a)
	h.put(b)
	if got := h.get(); got != b {
		t.Error("a kept memory was not reused")
	} else {
		h.put(got)
	}
	for deadline := time.Now().Add(5 * time.Second); freeMemories(h) != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("memories still kept 5 s after the last hash")
		}
	}
	if got := h.get(); got == a || got == b {
		t.Error("a let-go memory was handed out again")
	}
}
