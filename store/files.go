package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// privateFileMode is the mode of every file that holds data: the database,
// its -wal and -shm files (SQLite gives them the database file's mode), and
// backups. Password hashes and sealed secrets are nobody else's business.
const privateFileMode = 0o600

// createPrivateFile makes path, if it does not exist, with privateFileMode.
// SQLite would create the database 0644 less the umask; it keeps the mode of
// a file it finds. The umask may only take bits away, so the mode is set
// exactly after creation.
func createPrivateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, privateFileMode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := f.Chmod(privateFileMode); err != nil {
		f.Close()
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}
