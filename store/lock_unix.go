//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an advisory lock (flock, LOCK_SH or LOCK_EX) on
// <dbPath>.lock without waiting, and returns what releases it. The lock
// file is left in place: removing it would let two processes lock two
// different files of the same name. The kernel drops the lock when the
// process ends, however it ends, so a crashed server never leaves a
// database marked in use.
func lockFile(dbPath string, how int) (release func() error, err error) {
	path := dbPath + ".lock"
	// Read-only: flock needs no more, and a lock file the umask left
	// read-only still opens.
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, privateFileMode)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s is locked)", ErrInUse, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f.Close, nil
}

func lockShared(dbPath string) (func() error, error) { return lockFile(dbPath, syscall.LOCK_SH) }

// LockExclusive holds the database for this process alone until release is
// called: no store opened with Config.Lock opens meanwhile. It is
// ErrInUse while any such store is open, in this process or another.
func LockExclusive(dbPath string) (release func() error, err error) {
	return lockFile(dbPath, syscall.LOCK_EX)
}
