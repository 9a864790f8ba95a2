package argon2id

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"golang.org/x/crypto/argon2"
)

// The RFC 9106 §5.3 test vector has a secret and associated data, which
// IDKey never uses; x/crypto's own vector without them is checked instead,
// and every other case against x/crypto itself.
func TestIDKeyMatchesXCrypto(t *testing.T) {
	want, _ := hex.DecodeString("655ad15eac652dc59f7170a7332bf49b8469be1fdb9c28bb")
	var m Memory
	if got := m.IDKey([]byte("password"), []byte("somesalt"), 1, 64, 1, 24); !bytes.Equal(got, want) {
		t.Fatalf("x/crypto's vector: %x, want %x", got, want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// One Memory through every case, growing and shrinking, so that each
	// hash starts over blocks another left behind.
	for i := range 60 {
		password, salt := make([]byte, rng.IntN(40)), make([]byte, 8+rng.IntN(24))
		for _, b := range [][]byte{password, salt} {
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
		}
		time, memory, threads, keyLen := uint32(1+rng.IntN(3)), uint32(8+rng.IntN(600)), uint8(1+rng.IntN(4)), uint32(4+rng.IntN(60))
		got := m.IDKey(password, salt, time, memory, threads, keyLen)
		if want := argon2.IDKey(password, salt, time, memory, threads, keyLen); !bytes.Equal(got, want) {
			t.Fatalf("case %d (t=%d m=%d p=%d len=%d): %x, want %x", i, time, memory, threads, keyLen, got, want)
		}
	}
}

// The server's parameters, twice over one Memory.
func TestIDKeyServerParameters(t *testing.T) {
	var m Memory
	for _, password := range []string{"first password", "second password"} {
		got := m.IDKey([]byte(password), []byte("0123456789abcdef"), 2, 19*1024, 1, 32)
		if want := argon2.IDKey([]byte(password), []byte("0123456789abcdef"), 2, 19*1024, 1, 32); !bytes.Equal(got, want) {
			t.Fatalf("%q: %x, want %x", password, got, want)
		}
	}
}

func BenchmarkIDKey(b *testing.B) {
	salt := []byte("0123456789abcdef")
	b.Run("reused memory", func(b *testing.B) {
		var m Memory
		for b.Loop() {
			m.IDKey([]byte("load-test-password-1"), salt, 2, 19*1024, 1, 32)
		}
	})
	b.Run("x-crypto", func(b *testing.B) {
		for b.Loop() {
			argon2.IDKey([]byte("load-test-password-1"), salt, 2, 19*1024, 1, 32)
		}
	})
}

func BenchmarkIDKeyParallel(b *testing.B) {
	salt := []byte("0123456789abcdef")
	b.Run("reused memory", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			var m Memory
			for pb.Next() {
				m.IDKey([]byte("load-test-password-1"), salt, 2, 19*1024, 1, 32)
			}
		})
	})
	b.Run("x-crypto", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				argon2.IDKey([]byte("load-test-password-1"), salt, 2, 19*1024, 1, 32)
			}
		})
	})
}
