package main

// These tests run the real binary: backup while writing, restore, the
// refusals that keep data safe, file modes, and the database file being
// whole after a clean stop.

import (
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const cliPassphrase = "a long backup passphrase"

// cliPassphraseFile writes passphrase, with a line break as editors add
// one, to a file in dir.
func cliPassphraseFile(t *testing.T, dir, passphrase string) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("passphrase-%d", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(passphrase+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cliMode is a file's permission bits.
func cliMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	return info.Mode().Perm()
}

// cliClientSecret creates a confidential client with the client
// credentials grant and returns the secret it is shown once.
func cliClientSecret(t *testing.T, s *cliServer, realm, clientID string) string {
	t.Helper()
	var c struct{ Secret string }
	data := s.must(http.MethodPost, "/admin/realms/"+realm+"/clients", cliAPIKey,
		map[string]any{"clientId": clientID, "grantTypes": []string{"client_credentials"}}, http.StatusCreated)
	if err := json.Unmarshal(data, &c); err != nil || c.Secret == "" {
		t.Fatalf("client %s: no secret in %s (%v)", clientID, data, err)
	}
	return c.Secret
}

// cliClientToken runs the client credentials grant and returns the status
// and body: the server must open the realm's sealed signing key to sign.
func cliClientToken(t *testing.T, s *cliServer, realm, clientID, secret string) (int, string) {
	t.Helper()
	status, body := s.oidcPost(realm, "token", clientID, secret, url.Values{"grant_type": {"client_credentials"}})
	return status, string(body)
}

// cliExportSMTPPassword exports a realm with its secrets from db, which
// opens the sealed SMTP password, and returns that password.
func cliExportSMTPPassword(t *testing.T, db, realm string, env []string) string {
	t.Helper()
	res := cliRun(t, filepath.Dir(db), env, "", "export", "--db", db, "--realm", realm, "--include-secrets")
	if res.code != 0 {
		t.Fatalf("export: code %d, stderr:\n%s", res.code, res.stderr)
	}
	var doc struct {
		SMTPPassword string `json:"smtpPassword"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	return doc.SMTPPassword
}

// TestCLIBackupRestoreRoundTrip takes a backup while users are being
// created, restores it elsewhere and starts a server on it: every user
// acknowledged before the backup began is there, and the secrets open.
func TestCLIBackupRestoreRoundTrip(t *testing.T) {
	const workers = 4
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey}

	s := cliStartServer(t, db, env...)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey,
		map[string]any{"name": "rt", "smtpHost": "smtp.example.com", "smtpPassword": "smtp-secret"}, http.StatusCreated)
	secret := cliClientSecret(t, s, "rt", "reports")
	if status, body := cliClientToken(t, s, "rt", "reports", secret); status != http.StatusOK {
		t.Fatalf("token before the backup: %d %s", status, body)
	}
	certs := s.must(http.MethodGet, "/realms/rt/protocol/openid-connect/certs", "", nil, http.StatusOK)

	var (
		mu       sync.Mutex
		acked    []string
		count    atomic.Int64
		stop     = make(chan struct{})
		progress = make(chan struct{}, 1)
		wg       sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-user%05d", w, i)
				status, body, err := s.do(http.MethodPost, "/admin/realms/rt/users", cliAPIKey, map[string]any{"username": name})
				if err != nil || status != http.StatusCreated {
					t.Errorf("create %s: status %d, err %v, body %s", name, status, err, body)
					return
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
				count.Add(1)
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		})
	}
	stopWriters := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopWriters()
	waitFor := func(n int64) {
		t.Helper()
		deadline := time.After(cliWaitBound)
		for count.Load() < n {
			select {
			case <-progress:
			case <-deadline:
				t.Fatalf("fewer than %d users created", n)
			}
		}
	}

	waitFor(100)
	mu.Lock()
	before := slices.Clone(acked)
	mu.Unlock()
	backupFile := filepath.Join(dir, "backup.db")
	passphrase := cliPassphraseFile(t, dir, cliPassphrase)
	res := cliRun(t, dir, cliEnv(), "", "backup", "--db", db, "--passphrase-file", passphrase, backupFile)
	if res.code != 0 {
		t.Fatalf("backup: code %d, stderr:\n%s", res.code, res.stderr)
	}
	waitFor(count.Load() + 50) // the server went on writing beside the backup
	stopWriters()
	total := count.Load()
	s.stopGracefully()
	t.Logf("%d users acknowledged before the backup began, %d in all", len(before), total)

	restoredDir := t.TempDir()
	restored := filepath.Join(restoredDir, "idenplane.db")
	res = cliRun(t, restoredDir, cliEnv(), "", "restore", "--db", restored, "--passphrase-file", passphrase, backupFile)
	if res.code != 0 {
		t.Fatalf("restore: code %d, stderr:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, restored+".key") {
		t.Errorf("restore does not say where the key went:\n%s", res.stderr)
	}
	live, err := os.ReadFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(restored + ".key"); string(got) != string(live) {
		t.Errorf("restored key file %q, want the live one %q", got, live)
	}

	s2 := cliStartServer(t, restored, env...)
	have := make(map[string]bool)
	for _, n := range s2.usernames("rt", cliAPIKey) {
		have[n] = true
	}
	var lost []string
	for _, n := range before {
		if !have[n] {
			lost = append(lost, n)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d users acknowledged before the backup are not in it, e.g. %v", len(lost), len(before), lost[:min(5, len(lost))])
	}
	t.Logf("%d users in the backup", len(have))
	if len(have) > int(total) {
		t.Errorf("the restored realm has %d users; only %d were created", len(have), total)
	}
	// The secrets open: the client secret checks, the signing key signs
	// (the same key: the published set is unchanged), the SMTP password
	// decrypts.
	if status, body := cliClientToken(t, s2, "rt", "reports", secret); status != http.StatusOK || !strings.Contains(body, "access_token") {
		t.Errorf("token after restore: %d %s", status, body)
	}
	if got := s2.must(http.MethodGet, "/realms/rt/protocol/openid-connect/certs", "", nil, http.StatusOK); string(got) != string(certs) {
		t.Errorf("published keys after restore:\n%s\nwant:\n%s", got, certs)
	}
	if pw := cliExportSMTPPassword(t, restored, "rt", cliEnv()); pw != "smtp-secret" {
		t.Errorf("restored SMTP password %q", pw)
	}
	s2.stopGracefully()
}

// TestCLIBackupOfEnvMasterKey: a database whose master key is in
// IDENPLANE_MASTER_KEY backs up with that key, and restores to a key file.
func TestCLIBackupOfEnvMasterKey(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	masterKey := cliMasterKey(t)
	s := cliStartServer(t, db, "IDENPLANE_MASTER_KEY="+masterKey, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "envkey", "smtpPassword": "smtp-secret"}, http.StatusCreated)
	backupFile := filepath.Join(dir, "backup.db")
	res := cliRun(t, dir, cliEnv("IDENPLANE_MASTER_KEY="+masterKey, "IDENPLANE_BACKUP_PASSPHRASE="+cliPassphrase), "",
		"backup", "--db", db, backupFile)
	if res.code != 0 {
		t.Fatalf("backup: code %d, stderr:\n%s", res.code, res.stderr)
	}
	s.stopGracefully()

	restored := filepath.Join(t.TempDir(), "idenplane.db")
	res = cliRun(t, dir, cliEnv("IDENPLANE_BACKUP_PASSPHRASE="+cliPassphrase), "", "restore", "--db", restored, backupFile)
	if res.code != 0 {
		t.Fatalf("restore: code %d, stderr:\n%s", res.code, res.stderr)
	}
	keyFile, err := os.ReadFile(restored + ".key")
	if err != nil || strings.TrimSpace(string(keyFile)) != masterKey {
		t.Fatalf("restored key file %q (%v), want the IDENPLANE_MASTER_KEY value", keyFile, err)
	}
	if pw := cliExportSMTPPassword(t, restored, "envkey", cliEnv()); pw != "smtp-secret" {
		t.Errorf("restored SMTP password %q", pw)
	}

	// Restoring while IDENPLANE_MASTER_KEY names the key writes no key file.
	again := filepath.Join(t.TempDir(), "idenplane.db")
	res = cliRun(t, dir, cliEnv("IDENPLANE_MASTER_KEY="+masterKey, "IDENPLANE_BACKUP_PASSPHRASE="+cliPassphrase), "",
		"restore", "--db", again, backupFile)
	if res.code != 0 || !strings.Contains(res.stderr, "IDENPLANE_MASTER_KEY") {
		t.Fatalf("restore with the key set: code %d, stderr:\n%s", res.code, res.stderr)
	}
	if _, err := os.Stat(again + ".key"); err == nil {
		t.Error("restore wrote a key file although IDENPLANE_MASTER_KEY holds the key")
	}
}

// TestCLIBackupRestoreRefusals: each way a backup or restore could lose
// data or secrets is refused, and a refused restore changes nothing.
func TestCLIBackupRestoreRefusals(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	s := cliStartServer(t, db, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "keep", "smtpPassword": "smtp-secret"}, http.StatusCreated)
	passphrase := cliPassphraseFile(t, dir, cliPassphrase)
	withKey := filepath.Join(dir, "with-key.db")
	if res := cliRun(t, dir, cliEnv(), "", "backup", "--db", db, "--passphrase-file", passphrase, withKey); res.code != 0 {
		t.Fatalf("backup: code %d, stderr:\n%s", res.code, res.stderr)
	}
	withoutKey := filepath.Join(dir, "without-key.db")
	res := cliRun(t, dir, cliEnv(), "", "backup", "--db", db, "--without-key", withoutKey)
	if res.code != 0 || !strings.Contains(res.stderr, "WITHOUT THE MASTER KEY") || !strings.Contains(res.stderr, db+".key") {
		t.Fatalf("backup --without-key: code %d, want 0 and a warning naming the key file; stderr:\n%s", res.code, res.stderr)
	}

	t.Run("backup", func(t *testing.T) {
		cases := []struct {
			name string
			args []string
			env  []string
			code int
			want []string
		}{
			{"no choice about the key", nil, nil, 2, []string{"--passphrase-file", "--without-key", "IDENPLANE_BACKUP_PASSPHRASE"}},
			{"both choices", []string{"--without-key", "--passphrase-file", passphrase}, nil, 2, []string{"exclude"}},
			{"short passphrase", []string{"--passphrase-file", cliPassphraseFile(t, dir, "short")}, nil, 1, []string{"at least 12"}},
			{"empty passphrase file", []string{"--passphrase-file", cliPassphraseFile(t, dir, "")}, nil, 1, []string{"empty"}},
			{"empty passphrase variable", nil, []string{"IDENPLANE_BACKUP_PASSPHRASE="}, 1, []string{"empty"}},
		}
		for _, tc := range cases {
			target := filepath.Join(t.TempDir(), "backup.db")
			args := append(append([]string{"backup", "--db", db}, tc.args...), target)
			res := cliRun(t, dir, cliEnv(tc.env...), "", args...)
			if res.code != tc.code {
				t.Errorf("%s: code %d, want %d; stderr:\n%s", tc.name, res.code, tc.code, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("%s: stderr does not say %q:\n%s", tc.name, w, res.stderr)
				}
			}
			if _, err := os.Stat(target); err == nil {
				t.Errorf("%s: a backup was written", tc.name)
			}
		}
	})

	t.Run("restore into a new place", func(t *testing.T) {
		wrong := cliPassphraseFile(t, dir, "another long passphrase")
		cases := []struct {
			name string
			args []string
			env  []string
			want []string
		}{
			{"wrong passphrase", []string{"--passphrase-file", wrong, withKey}, nil, []string{"passphrase does not open"}},
			{"no passphrase", []string{withKey}, nil, []string{"--passphrase-file"}},
			{"backup without key, no key given", []string{withoutKey}, nil, []string{"IDENPLANE_MASTER_KEY", "without the master key"}},
			{"backup without key, wrong key", []string{withoutKey}, []string{"IDENPLANE_MASTER_KEY=" + cliMasterKey(t)},
				[]string{"IDENPLANE_MASTER_KEY", "does not open"}},
			{"another key in IDENPLANE_MASTER_KEY", []string{"--passphrase-file", passphrase, withKey},
				[]string{"IDENPLANE_MASTER_KEY=" + cliMasterKey(t)}, []string{"IDENPLANE_MASTER_KEY is set"}},
			{"missing backup", []string{filepath.Join(dir, "nope.db")}, nil, []string{"nope.db"}},
		}
		for _, tc := range cases {
			target := t.TempDir()
			args := append([]string{"restore", "--db", filepath.Join(target, "idenplane.db")}, tc.args...)
			res := cliRun(t, dir, cliEnv(tc.env...), "", args...)
			if res.code != 1 {
				t.Errorf("%s: code %d, want 1; stderr:\n%s", tc.name, res.code, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("%s: stderr does not say %q:\n%s", tc.name, w, res.stderr)
				}
			}
			// Nothing but the lock file the in-use check takes.
			entries, _ := os.ReadDir(target)
			for _, e := range entries {
				if e.Name() != "idenplane.db.lock" {
					t.Errorf("%s: a refused restore left %s", tc.name, e.Name())
				}
			}
		}
	})

	t.Run("restore over the database in use", func(t *testing.T) {
		before, err := os.ReadFile(db + ".key")
		if err != nil {
			t.Fatal(err)
		}
		res := cliRun(t, dir, cliEnv(), "", "restore", "--db", db, "--force", "--passphrase-file", passphrase, withKey)
		if res.code != 1 || !strings.Contains(res.stderr, "in use") {
			t.Fatalf("restore over a running server's database: code %d, stderr:\n%s", res.code, res.stderr)
		}
		s.must(http.MethodGet, "/admin/realms/keep", cliAPIKey, nil, http.StatusOK)
		if after, _ := os.ReadFile(db + ".key"); string(after) != string(before) {
			t.Error("the refused restore changed the key file")
		}
		if matches, _ := filepath.Glob(filepath.Join(dir, ".live.db.*")); len(matches) > 0 {
			t.Errorf("the refused restore left %v", matches)
		}
	})

	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "after-backup"}, http.StatusCreated)
	s.stopGracefully()

	t.Run("restore over an existing database", func(t *testing.T) {
		res := cliRun(t, dir, cliEnv(), "", "restore", "--db", db, "--passphrase-file", passphrase, withKey)
		if res.code != 1 || !strings.Contains(res.stderr, "--force") {
			t.Fatalf("restore over an existing database without --force: code %d, stderr:\n%s", res.code, res.stderr)
		}
		if !cliRealmExists(t, db, "after-backup") {
			t.Fatal("the refused restore replaced the database")
		}
		res = cliRun(t, dir, cliEnv(), "", "restore", "--db", db, "--force", "--passphrase-file", passphrase, withKey)
		if res.code != 0 {
			t.Fatalf("restore --force: code %d, stderr:\n%s", res.code, res.stderr)
		}
		if cliRealmExists(t, db, "after-backup") || !cliRealmExists(t, db, "keep") {
			t.Error("restore --force did not put the backup back")
		}
		// The key file was already the right one, and stays.
		if pw := cliExportSMTPPassword(t, db, "keep", cliEnv()); pw != "smtp-secret" {
			t.Errorf("SMTP password after restore --force: %q", pw)
		}
		// A backup made without the key restores in place with the key file
		// that is there.
		res = cliRun(t, dir, cliEnv(), "", "restore", "--db", db, "--force", withoutKey)
		if res.code != 0 || !strings.Contains(res.stderr, db+".key") {
			t.Fatalf("restore --force of the backup without key: code %d, stderr:\n%s", res.code, res.stderr)
		}
	})
}

// cliRealmExists reads the database file directly.
func cliRealmExists(t *testing.T, db, name string) bool {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow("SELECT count(*) FROM realms WHERE name = $1", name).Scan(&n); err != nil {
		t.Fatalf("read %s: %v", db, err)
	}
	return n == 1
}

// cliWithUmask runs fn with the process umask set to mask: children
// started in fn inherit it. Tests of this package do not run in parallel
// with this one, and files the test itself makes meanwhile are none.
func cliWithUmask(mask int, fn func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

// TestCLIFileModes: the database, its -wal and -shm files, backups and a
// restored database are 0600, like the key file, whatever the umask.
func TestCLIFileModes(t *testing.T) {
	for _, mask := range []int{0o000, 0o022, 0o277} {
		t.Run(fmt.Sprintf("umask %03o", mask), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "idenplane.db")
			passphrase := cliPassphraseFile(t, dir, cliPassphrase)
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
			cliWithUmask(mask, func() {
				res = cliRun(t, dir, cliEnv(), "", "backup", "--db", db, "--passphrase-file", passphrase, backupFile)
			})
			if res.code != 0 {
				t.Fatalf("backup: code %d, stderr:\n%s", res.code, res.stderr)
			}
			expect("backup", backupFile)
			s.stopGracefully()

			restored := filepath.Join(t.TempDir(), "idenplane.db")
			cliWithUmask(mask, func() {
				res = cliRun(t, dir, cliEnv(), "", "restore", "--db", restored, "--passphrase-file", passphrase, backupFile)
			})
			if res.code != 0 {
				t.Fatalf("restore: code %d, stderr:\n%s", res.code, res.stderr)
			}
			expect("restore", restored, restored+".key")
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
