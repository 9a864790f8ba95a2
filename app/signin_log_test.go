package app

import (
	"bytes"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// lockedBuffer is a log destination the server's goroutines share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSignInLogLines: failed sign-ins and lockouts leave one line each,
// whether or not the realm keeps events, in both log formats; the fail2ban
// filter shipped in docs/ finds the address of each, and a username typed
// to look like another address never moves it.
func TestSignInLogLines(t *testing.T) {
	f2b := apptest.NeedTool(t, "fail2ban-regex", "fail2ban (fail2ban-regex)")
	filter, err := filepath.Abs("../docs/fail2ban/idenplane.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			out := &lockedBuffer{}
			var h slog.Handler = slog.NewTextHandler(out, nil)
			if format == "json" {
				h = slog.NewJSONHandler(out, nil)
			}
			s := newTestServer(t, func(c *Config) { c.Logger = slog.New(h) })
			s.systemMFA(false)
			// Events off: the lines are written all the same.
			mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "eventsEnabled": false}), http.StatusCreated)
			mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli",
				"clientType": "PUBLIC", "grantTypes": []string{"password"}}), http.StatusCreated)
			s.createUser("acme", map[string]any{"username": "alice", "password": "a-long-enough-password"})
			mustStatus(t, s.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "ops",
				"password": "a-long-enough-password"}), http.StatusCreated)

			grant := func(remote, username, password string) {
				t.Helper()
				body := "grant_type=password&client_id=cli&username=" + username + "&password=" + password
				s.sendFrom(remote, http.MethodPost, "/realms/acme/protocol/openid-connect/token", strings.NewReader(body),
					http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
			}
			grant("198.51.100.7:1000", "alice", "wrong")
			grant("198.51.100.8:1000", "nobody", "wrong")
			grant("198.51.100.9:1000", "x%20ip%3D6.6.6.6", "wrong")
			grant("198.51.100.9:1000", "x%22%20ip%3D6.6.6.7%20", "wrong")
			for range 5 { // the fifth locks alice out
				grant("203.0.113.5:1000", "alice", "wrong")
			}
			admin := func(remote, password string) {
				body := `{"username":"ops","password":"` + password + `"}`
				s.sendFrom(remote, http.MethodPost, "/admin/auth/login", strings.NewReader(body),
					http.Header{"Content-Type": {"application/json"}})
			}
			admin("192.0.2.50:1000", "wrong")
			admin("192.0.2.51:1000", "a-long-enough-password")

			logged := out.String()
			lines := 0
			for _, l := range strings.Split(logged, "\n") {
				if strings.Contains(l, "sign-in failed") || strings.Contains(l, "account locked") {
					lines++
				}
			}
			if lines != 11 { // 4 + 5 failures, 1 lockout, 1 admin failure
				t.Fatalf("%d failure lines, want 11:\n%s", lines, logged)
			}
			if !strings.Contains(logged, "administrator signed in") {
				t.Fatalf("no line for the administrator's sign-in:\n%s", logged)
			}

			file := filepath.Join(t.TempDir(), "idenplane.log")
			if err := os.WriteFile(file, []byte(logged), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := exec.Command(f2b, "-o", "ip", file, filter).CombinedOutput()
			if err != nil {
				t.Fatalf("fail2ban-regex: %v\n%s", err, res)
			}
			ips := regexp.MustCompile(`(?m)^\s*(\d+\.\d+\.\d+\.\d+)\s*$`).FindAllStringSubmatch(string(res), -1)
			var got []string
			for _, m := range ips {
				got = append(got, m[1])
			}
			want := []string{"198.51.100.7", "198.51.100.8", "198.51.100.9", "198.51.100.9"}
			for range 6 {
				want = append(want, "203.0.113.5")
			}
			want = append(want, "192.0.2.50")
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("fail2ban found %v, want %v\nfail2ban-regex said:\n%s\nlog:\n%s", got, want, res, logged)
			}
		})
	}
}
