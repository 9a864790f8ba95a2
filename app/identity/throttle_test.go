package identity

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// The flood guard's memory stays bounded: a key keeps only its latest
// failures, and a guarded address's invented names are not kept by name.
func TestThrottleMemoryBounded(t *testing.T) {
	e := newTestEnv(t)
	const ip = "192.0.2.1"
	for i := range LoginLimitPerIP {
		if _, err := e.core.CheckCredentials(t.Context(), e.realm, fmt.Sprintf("nobody%d", i), "a guess", ip); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	keys := len(e.core.throttle.failures)
	for i := range 50 {
		var throttled *ThrottledError
		if _, err := e.core.CheckCredentials(t.Context(), e.realm, fmt.Sprintf("someone%d", i), "a guess", ip); !errors.As(err, &throttled) {
			t.Fatalf("guarded guess %d: %v", i, err)
		}
	}
	if n := len(e.core.throttle.failures); n != keys {
		t.Fatalf("%d throttle keys after 50 guarded guesses, %d before", n, keys)
	}
	address, _ := signInAddressKeys(e.realm.ID, ip)
	if n := len(e.core.throttle.failures[address]); n != throttleKeep {
		t.Fatalf("the address keeps %d failures, want %d", n, throttleKeep)
	}

	th := NewThrottle(time.Now, ThrottleWindow)
	for range 1000 {
		th.Fail("k")
	}
	if n := len(th.failures["k"]); n != throttleKeep || th.Wait("k", LoginLimitPerIP) <= 0 {
		t.Fatalf("%d failures kept, wait %v", n, th.Wait("k", LoginLimitPerIP))
	}
}
