//go:build !unix

package store

// Without flock there is no in-use check: restore cannot tell a running
// server's database from an idle one, and relies on the operator.

func lockShared(string) (func() error, error) { return func() error { return nil }, nil }

// LockExclusive does nothing where flock is missing.
func LockExclusive(string) (func() error, error) { return func() error { return nil }, nil }
