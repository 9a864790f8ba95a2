package ldapfed_test

import (
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
)

// countingProxy forwards loopback connections to target and counts them.
func countingProxy(t *testing.T, target string) (addr string, accepted *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int64)
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in); out.Close() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l.Addr().String(), accepted
}

// Sign-ins share a connection bound as the provider's account; one the
// directory dropped is not reused.
func TestSignInReusesConnections(t *testing.T) {
	e := newSignInEnv(t, nil)
	addr, accepted := countingProxy(t, strings.TrimPrefix(e.d.URL, "ldap://"))
	createProvider(t, e.s, with(directoryProvider("corp", e.d), "connectionUrl", "ldap://"+addr))
	e.mustSignIn("ann", "ann-pw")
	e.mustSignIn("ann", "ann-pw")
	e.mustRefuse("ann", "wrong", "invalid user credentials")
	e.mustSignIn("bob", "bob-pw")
	e.mustRefuse("nobody", "x", "invalid user credentials")
	if n := accepted.Load(); n != 1 {
		t.Fatalf("%d connections for five sign-ins, want 1", n)
	}
	e.d.Restart()
	e.mustSignIn("ann", "ann-pw")
	if n := accepted.Load(); n != 2 {
		t.Fatalf("%d connections after the directory restarted, want 2", n)
	}
}
