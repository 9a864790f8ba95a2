package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"golang.org/x/crypto/argon2"
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
// runs at most GOMAXPROCS of them at once.
const HashMemory = argonMemoryKiB << 10

var errBadHash = errors.New("unsupported password hash")

// hashPassword returns an argon2id hash in PHC string format, so hashes of
// other formats (imported ones) can sit beside it and be told apart.
func (a *App) hashPassword(ctx context.Context, password string) (string, error) {
	if err := a.acquireHashSlot(ctx, a.hashWait); err != nil {
		return "", err
	}
	defer func() { <-a.hashSlots }()
	return HashPassword(password), nil
}

// HashPassword hashes password with argon2id and a fresh salt, unbounded:
// callers other than hashPassword (the load test's seeding) take no hash
// slot.
func HashPassword(password string) string {
	salt := make([]byte, argonSaltLen)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemoryKiB, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// verifyPassword checks password against a PHC hash in constant time.
func (a *App) verifyPassword(ctx context.Context, hash, password string) (bool, error) {
	return a.verifyPasswordWithin(ctx, hash, password, a.hashWait)
}

// verifyPasswordWithin is verifyPassword waiting at most wait for a hash
// slot.
func (a *App) verifyPasswordWithin(ctx context.Context, hash, password string, wait time.Duration) (bool, error) {
	p, err := parseArgon2id(hash)
	if err != nil {
		return false, err
	}
	if err := a.acquireHashSlot(ctx, wait); err != nil {
		return false, err
	}
	defer func() { <-a.hashSlots }()
	key := argon2.IDKey([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}

// hashWait bounds the wait for a hash slot. A login storm queues here, each
// waiting request holding a few kilobytes instead of the 19 MiB of a hash;
// past hashWait the request is refused with a 503 and Retry-After rather
// than queued without end.
const (
	hashWait       = 3 * time.Second
	hashRetryAfter = 2 * time.Second
)

// errHashBusy is a password check or hash refused because every hash slot
// stayed taken for hashWait.
var errHashBusy = apperr.Busy(hashRetryAfter, "the server is busy checking passwords; try again shortly")

func (a *App) acquireHashSlot(ctx context.Context, wait time.Duration) error {
	select {
	case a.hashSlots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case a.hashSlots <- struct{}{}:
		return nil
	case <-t.C:
		return errHashBusy
	case <-ctx.Done():
		return errHashBusy
	}
}

type argon2Params struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

func parseArgon2id(hash string) (*argon2Params, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return nil, errBadHash
	}
	var p argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return nil, errBadHash
	}
	// Bounds keep an imported hash from asking for gigabytes per login.
	if p.memory < 1024 || p.memory > 256*1024 || p.time < 1 || p.time > 10 || p.threads < 1 || p.threads > 8 {
		return nil, errBadHash
	}
	var err error
	if p.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(p.salt) < 8 {
		return nil, errBadHash
	}
	if p.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(p.key) < 16 || len(p.key) > 64 {
		return nil, errBadHash
	}
	return &p, nil
}
