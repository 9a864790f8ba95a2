package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"strings"
)

// valueKind is what a column holds, whatever each database calls it:
// SQLite's BLOB is PostgreSQL's BYTEA, and SQLite keeps a BOOLEAN as the
// integer 0 or 1.
type valueKind int

const (
	kindText valueKind = iota + 1
	kindBytes
	kindInt
	kindBool
)

func (k valueKind) String() string {
	switch k {
	case kindText:
		return "text"
	case kindBytes:
		return "bytes"
	case kindInt:
		return "integer"
	case kindBool:
		return "boolean"
	}
	return "unknown"
}

// kindOfType reads a column's declared type (SQLite's, or PostgreSQL's
// format_type) as the kind copy writes and compares its values as.
func kindOfType(typ string) (valueKind, error) {
	t := strings.ToLower(strings.TrimSpace(typ))
	switch {
	case strings.HasPrefix(t, "bool"):
		return kindBool, nil
	case strings.Contains(t, "int"):
		return kindInt, nil
	case t == "blob" || t == "bytea":
		return kindBytes, nil
	case strings.Contains(t, "text") || strings.Contains(t, "char") || strings.Contains(t, "clob"):
		return kindText, nil
	}
	return 0, fmt.Errorf("type %q is none copy knows", typ)
}

// canonical is v, as a driver read it, in the one Go type of its kind:
// string, []byte (never nil: an empty BLOB is not NULL, though SQLite's
// driver reads it as a nil slice, and pgx would write a nil one as NULL),
// int64 or bool. NULL is nil. It is what copy writes, and what it
// compares.
func canonical(k valueKind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case kindText:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case kindBytes:
		switch x := v.(type) {
		case []byte:
			if x == nil {
				return []byte{}, nil
			}
			return x, nil
		case string:
			return []byte(x), nil
		}
	case kindInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
		}
	case kindBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		}
	}
	return nil, fmt.Errorf("a %T value (%v) in a column of %s", v, v, k)
}

// tableSum is a table's rows counted and hashed in order: SHA-256 over
// each value's kind, length and bytes, so that no two different tables
// of rows encode the same.
type tableSum struct {
	rows int64
	h    hash.Hash
	buf  []byte
}

func newTableSum() *tableSum { return &tableSum{h: sha256.New()} }

// add adds a row of canonical values.
func (s *tableSum) add(row []any) {
	s.rows++
	b := s.buf[:0]
	for _, v := range row {
		switch x := v.(type) {
		case nil:
			b = append(b, 'N')
		case string:
			b = append(b, 'T')
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		case []byte:
			b = append(b, 'X')
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		case int64:
			b = append(b, 'I')
			b = binary.BigEndian.AppendUint64(b, uint64(x))
		case bool:
			b = append(b, 'B')
			if x {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	}
	b = append(b, '\n')
	s.h.Write(b)
	s.buf = b
}

func (s *tableSum) sum() string { return hex.EncodeToString(s.h.Sum(nil)) }
