package loadtest

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/identity"
)

// A short run with the server in this process: the realms are set up over
// the admin API, the users and sessions seeded beside the server, and each
// scenario's requests succeed; the password grant's do only if the seeded
// users' shared hash is the server's own.
func TestRunInProcess(t *testing.T) {
	// A second per scenario: a password sign-in is one argon2id hash, which
	// on a loaded machine takes longer than a shorter window, and a request
	// still in flight when the window closes is not counted.
	cfg := Config{Schema: apptest.Schema(t), Version: "test", HashPassword: identity.Argon2idHash,
		Duration: time.Second, Concurrency: 2, Users: 5, Sessions: 5,
		Scenarios: []string{"userinfo", "password", "user-lookup"}, JSON: true, Dir: t.TempDir(), Progress: io.Discard}
	var out bytes.Buffer
	if err := Run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.Bytes())
	}
	var rep loadReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out.Bytes())
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Name)
		if r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors (first: %s)", r.Name, r.Requests, r.Errors, r.FirstError)
		}
	}
	if !slices.Equal(names, cfg.Scenarios) {
		t.Fatalf("scenarios run %v, want %v", names, cfg.Scenarios)
	}
	if rep.ServerAlone || rep.Users != 5 || rep.Sessions != 5 || rep.Floors["argon2id"] <= 0 {
		t.Fatalf("report %+v", rep)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no password hash", Config{}, "HashPassword"},
		{"unknown scenario", Config{HashPassword: identity.Argon2idHash, Scenarios: []string{"cc-rs256", "nope"}}, `unknown scenario "nope"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Run(t.Context(), c.cfg, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %s", err, c.want)
			}
		})
	}
}
