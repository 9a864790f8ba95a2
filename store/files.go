package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// createPrivateTemp makes an empty file with privateFileMode beside path,
// for writing what is renamed to path once complete.
func createPrivateTemp(path, purpose string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"."+purpose+"-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	err = errors.Join(f.Chmod(privateFileMode), f.Close())
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// syncFile flushes a file's contents to disk.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// syncDir flushes a directory, so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// removeSidecars removes a database's -wal and -shm files.
func removeSidecars(path string) error {
	var errs []error
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
