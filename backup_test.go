package main

// These tests run the real binary: file modes, and the database file being
// whole after a clean stop.

import (
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// cliMode is a file's permission bits.
func cliMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	return info.Mode().Perm()
}

// cliWithUmask runs fn with the process umask set to mask: children
// started in fn inherit it. Tests of this package do not run in parallel
// with this one, and files the test itself makes meanwhile are none.
func cliWithUmask(mask int, fn func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

// TestCLIFileModes: the database, its -wal and -shm files and backups are
// 0600, like the key file, whatever the umask.
func TestCLIFileModes(t *testing.T) {
	for _, mask := range []int{0o000, 0o022, 0o277} {
		t.Run(fmt.Sprintf("umask %03o", mask), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "idenplane.db")
			expect := func(when string, files ...string) {
				t.Helper()
				for _, f := range files {
					if mode := cliMode(t, f); mode != 0o600 {
						t.Errorf("%s: %s has mode %v, want 0600", when, filepath.Base(f), mode)
					}
				}
			}
			var s *cliServer
			cliWithUmask(mask, func() { s = cliStartServer(t, db, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey) })
			expect("after start", db, db+"-wal", db+"-shm", db+".key")
			s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "modes"}, http.StatusCreated)
			expect("after a write", db, db+"-wal", db+"-shm")

			backupFile := filepath.Join(dir, "backup.db")
			var res cliResult
			cliWithUmask(mask, func() { res = cliRun(t, dir, cliEnv(), "", "backup", "--db", db, backupFile) })
			if res.code != 0 {
				t.Fatalf("backup: code %d, stderr:\n%s", res.code, res.stderr)
			}
			expect("backup", backupFile)
			s.stopGracefully()
		})
	}
}

// TestCLIStoppedDatabaseIsOneFile: after SIGTERM the database file alone
// holds every write, even though another process (here, this test) has the
// database open, which keeps SQLite from emptying the WAL on its own.
func TestCLIStoppedDatabaseIsOneFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "idenplane.db")
	s := cliStartServer(t, db, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "whole"}, http.StatusCreated)
	want := []string{"ann", "ben", "cai"}
	for _, name := range want {
		s.must(http.MethodPost, "/admin/realms/whole/users", cliAPIKey, map[string]any{"username": name}, http.StatusCreated)
	}

	bystander, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer bystander.Close()
	var n int
	if err := bystander.QueryRow("SELECT count(*) FROM realms").Scan(&n); err != nil {
		t.Fatal(err)
	}
	s.stopGracefully()
	if info, err := os.Stat(db + "-wal"); err == nil && info.Size() != 0 {
		t.Errorf("after a clean stop the -wal file holds %d bytes", info.Size())
	}

	// Copy the database file, and only it, elsewhere.
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	copyDir := t.TempDir()
	alone := filepath.Join(copyDir, "copy.db")
	if err := os.WriteFile(alone, data, 0o600); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite", "file:"+alone)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query("SELECT u.username FROM users u JOIN realms r ON r.id = u.realm_id WHERE r.name = 'whole' ORDER BY u.username")
	if err != nil {
		t.Fatalf("the database file alone: %v", err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("users in the database file alone: %v, want %v", got, want)
	}
	// And a server starts on it with the key file beside it.
	key, err := os.ReadFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hex.DecodeString(strings.TrimSpace(string(key))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone+".key", key, 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := cliStartServer(t, alone, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	if names := s2.usernames("whole", cliAPIKey); !slices.Equal(names, want) {
		t.Errorf("users served from the copy: %v, want %v", names, want)
	}
	s2.stopGracefully()
}
