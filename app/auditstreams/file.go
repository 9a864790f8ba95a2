package auditstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

const (
	// DefaultMaxSize is the size past which a file is rotated.
	DefaultMaxSize = 100 << 20
	minMaxSize     = 1 << 10
	maxMaxSize     = 1 << 40
	// DefaultKeep is how many rotated files are kept.
	DefaultKeep = 5
	maxKeep     = 100
)

// fileName is what a file stream's name may be: one plain file name in
// the audit directory, so that no name reaches outside it, and none ends
// in a rotated file's ".N".
var fileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)
var rotatedSuffix = regexp.MustCompile(`\.[0-9]+$`)

// FileSettings are a file destination's: JSON lines appended to Name in
// the server's --audit-dir, rotated when they would pass MaxSizeBytes
// (Name.1 the newest of the Keep kept).
type FileSettings struct {
	Name         string `json:"name"`
	MaxSizeBytes int64  `json:"maxSizeBytes,omitempty"` // absent: 100 MiB
	Keep         int    `json:"keep,omitempty"`         // absent: 5
}

// checkFile checks in and fills in its defaults; id is the stream's own,
// which may keep its name.
func (s *Service) checkFile(ctx context.Context, in *FileSettings, id string) error {
	if s.deps.Dir == "" {
		return apperr.Field("type", "file streams need the server's --audit-dir (IDENPLANE_AUDIT_DIR): the directory they write in")
	}
	if !fileName.MatchString(in.Name) || in.Name == "." || in.Name == ".." || rotatedSuffix.MatchString(in.Name) {
		return apperr.Field("file.name", "must be a file name in the audit directory: letters, digits, '.', '_' and '-', "+
			"at most 100, not ending in .N (the rotated files' names)")
	}
	if in.MaxSizeBytes == 0 {
		in.MaxSizeBytes = DefaultMaxSize
	}
	if in.MaxSizeBytes < minMaxSize || in.MaxSizeBytes > maxMaxSize {
		return apperr.Field("file.maxSizeBytes", "must be from %d to %d", minMaxSize, int64(maxMaxSize))
	}
	if in.Keep == 0 {
		in.Keep = DefaultKeep
	}
	if in.Keep < 1 || in.Keep > maxKeep {
		return apperr.Field("file.keep", "must be from 1 to %d", maxKeep)
	}
	others, err := s.deps.Store.AuditStreamsOfType(ctx, string(TypeFile))
	if err != nil {
		return err
	}
	for _, o := range others {
		var set FileSettings
		if o.ID != id && json.Unmarshal(o.Settings, &set) == nil && set.Name == in.Name {
			return apperr.Conflict("file.name", "another audit stream writes %s", in.Name)
		}
	}
	return nil
}

// fileSink appends JSON lines, and rotates.
type fileSink struct {
	dir string
	set FileSettings
}

// send appends the batch, a record a line, rotating the file before a
// line that would take it past its size; each file is synced before the
// cursor may move. A failure part way through writes the batch again
// whole next time: a receiver tells the lines it has by their sequence.
func (d *fileSink) send(_ context.Context, recs []*store.AuditRecord) error {
	path := filepath.Join(d.dir, d.set.Name)
	f, size, err := openAppend(path)
	if err != nil {
		return err
	}
	var buf []byte
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := f.Write(buf)
		buf = buf[:0]
		return err
	}
	for _, r := range recs {
		line := append(recordJSON(r), '\n')
		if size > 0 && size+int64(len(line)) > d.set.MaxSizeBytes {
			if err := flush(); err != nil {
				f.Close()
				return err
			}
			if err := closeSynced(f); err != nil {
				return err
			}
			if err := rotate(path, d.set.Keep); err != nil {
				return err
			}
			if f, size, err = openAppend(path); err != nil {
				return err
			}
		}
		buf = append(buf, line...)
		size += int64(len(line))
	}
	if err := flush(); err != nil {
		f.Close()
		return err
	}
	return closeSynced(f)
}

func openAppend(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	return f, st.Size(), nil
}

func closeSynced(f *os.File) error {
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rotate moves path to path.1, path.1 to path.2 and so on, dropping the
// one past keep.
func rotate(path string, keep int) error {
	if err := os.Remove(path + "." + strconv.Itoa(keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for i := keep - 1; i >= 1; i-- {
		from := path + "." + strconv.Itoa(i)
		if err := os.Rename(from, path+"."+strconv.Itoa(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return os.Rename(path, path+".1")
}
