//go:build linux

package upgrade

import (
	"fmt"
	"syscall"
)

// freeBytes is the space an unprivileged process may still write in the
// file system of dir: the blocks available to it, not those the root
// reserve keeps.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil // Bsize is 32 bits on some architectures
}
