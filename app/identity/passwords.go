package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity/argon2id"
)

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// HashMemory is what one password hash or check allocates; the server
// runs at most as many of them at once as it has hash slots.
const HashMemory = argonMemoryKiB << 10

// ErrBadHash is a stored hash of a format this server cannot check.
var ErrBadHash = errors.New("unsupported password hash")

// HashPassword returns an argon2id hash in PHC string format, so hashes of
// other formats (imported ones) can sit beside it and be told apart.
func (c *Core) HashPassword(ctx context.Context, password string) (string, error) {
	if err := c.acquireHashSlot(ctx, c.hashWait); err != nil {
		return "", err
	}
	defer func() { <-c.hashSlots }()
	m := c.memories.get()
	defer c.memories.put(m)
	return argon2idHashIn(m, password), nil
}

// Argon2idHash hashes password with a fresh salt, unbounded and in memory
// of its own: callers other than HashPassword (seeding a load test) take
// no hash slot.
func Argon2idHash(password string) string {
	return argon2idHashIn(new(argon2id.Memory), password)
}

// NewArgon2idHasher returns Argon2idHash keeping its working memory
// between calls as the server does, for measuring the hash alone. It is
// safe for concurrent use.
func NewArgon2idHasher() func(password string) string {
	memories := &hashMemories{after: hashMemoryIdle}
	return func(password string) string {
		m := memories.get()
		defer memories.put(m)
		return argon2idHashIn(m, password)
	}
}

func argon2idHashIn(m *argon2id.Memory, password string) string {
	salt := make([]byte, argonSaltLen)
	_, _ = rand.Read(salt)
	key := m.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemoryKiB, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// VerifyPassword checks password against a PHC hash in constant time.
func (c *Core) VerifyPassword(ctx context.Context, hash, password string) (bool, error) {
	return c.verifyPasswordWithin(ctx, hash, password, c.hashWait)
}

// verifyPasswordWithin is VerifyPassword waiting at most wait for a hash
// slot.
func (c *Core) verifyPasswordWithin(ctx context.Context, hash, password string, wait time.Duration) (bool, error) {
	if !strings.HasPrefix(hash, "$argon2id$") {
		// Another product's format (foreign_hashes.go), checked natively.
		if _, err := HashFormat(hash); err != nil {
			return false, err
		}
		if err := c.acquireHashSlot(ctx, wait); err != nil {
			return false, err
		}
		defer func() { <-c.hashSlots }()
		return verifyForeign(hash, password)
	}
	p, err := parseArgon2id(hash)
	if err != nil {
		return false, err
	}
	if err := c.acquireHashSlot(ctx, wait); err != nil {
		return false, err
	}
	defer func() { <-c.hashSlots }()
	m := c.memories.get()
	defer c.memories.put(m)
	key := m.IDKey([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}

// DefaultHashWait bounds the wait for a hash slot. A login storm queues
// here, each waiting request holding a few kilobytes instead of the 19 MiB
// of a hash; past the wait the request is refused with a 503 and
// Retry-After rather than queued without end.
const (
	DefaultHashWait = 3 * time.Second
	HashRetryAfter  = 2 * time.Second
)

// ErrHashBusy is a password check or hash refused because every hash slot
// stayed taken for the hash wait.
var ErrHashBusy = apperr.Busy(HashRetryAfter, "the server is busy checking passwords; try again shortly")

func (c *Core) acquireHashSlot(ctx context.Context, wait time.Duration) error {
	select {
	case c.hashSlots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case c.hashSlots <- struct{}{}:
		return nil
	case <-t.C:
		return ErrHashBusy
	case <-ctx.Done():
		return ErrHashBusy
	}
}

type argon2Params struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

// ValidatePasswordHash accepts a hash this server can check: argon2id in
// PHC string format, or another product's format (foreign_hashes.go:
// bcrypt, PBKDF2, Argon2i), with parameters in bounds. Imported hashes are
// taken as they are, once they pass it; a foreign one is replaced by
// argon2id at its user's next sign-in.
func ValidatePasswordHash(hash string) error {
	_, err := HashFormat(hash)
	return err
}

func parseArgon2id(hash string) (*argon2Params, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return nil, ErrBadHash
	}
	var p argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return nil, ErrBadHash
	}
	// Bounds keep an imported hash from asking for gigabytes per login.
	if p.memory < 1024 || p.memory > 256*1024 || p.time < 1 || p.time > 10 || p.threads < 1 || p.threads > 8 {
		return nil, ErrBadHash
	}
	var err error
	if p.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(p.salt) < 8 {
		return nil, ErrBadHash
	}
	if p.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(p.key) < 16 || len(p.key) > 64 {
		return nil, ErrBadHash
	}
	return &p, nil
}

// dummyArgon2Hash is a valid hash of a random password, never matched.
const dummyArgon2Hash = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$2wqRVv4D0CWE2dJ+y3i9r0Q6rYfXhmTb8CFL/1HJxyc"
