package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/store"
)

// The load test's realms: loadRealm (RS256) holds the seeded users, their
// sessions and every client; the others differ only in their signing
// algorithm, for the client-credentials grant.
const (
	loadRealm      = "loadtest"
	loadRealmES256 = "loadtest-es256"
	loadRealmEdDSA = "loadtest-eddsa"
	loadSvcClient  = "svc"    // client credentials
	loadAppClient  = "app"    // password and refresh token grants
	loadNHIClient  = "worker" // a non-human identity's client
	// seedBatch users or sessions go in one write transaction: large enough
	// that the commit's fsync is spread thin, small enough to show progress.
	seedBatch = 10_000
)

func loadUsername(i int) string { return fmt.Sprintf("user%07d", i) }

// setUp makes the realms and clients through the admin API, as an
// operator would.
func (e *loadEnv) setUp(ctx context.Context, srv *loadServer) error {
	e.srv = srv
	for _, r := range []struct{ name, alg string }{{loadRealm, "RS256"}, {loadRealmES256, "ES256"}, {loadRealmEdDSA, "EdDSA"}} {
		if err := e.admin(ctx, http.MethodPost, "/admin/realms", map[string]any{"name": r.name, "eventsEnabled": !e.cfg.NoEvents},
			http.StatusCreated, nil); err != nil {
			return err
		}
		if r.alg != "RS256" {
			if err := e.admin(ctx, http.MethodPost, "/admin/realms/"+r.name+"/keys/rotate",
				map[string]any{"algorithm": r.alg, "immediate": true}, http.StatusOK, nil); err != nil {
				return err
			}
		}
		var svc struct{ Secret string }
		if err := e.admin(ctx, http.MethodPost, "/admin/realms/"+r.name+"/clients",
			map[string]any{"clientId": loadSvcClient, "grantTypes": []string{grantClientCredentials}}, http.StatusCreated, &svc); err != nil {
			return err
		}
		e.svcSecret[r.name] = svc.Secret
	}
	var app struct{ Secret string }
	if err := e.admin(ctx, http.MethodPost, "/admin/realms/"+loadRealm+"/clients",
		map[string]any{"clientId": loadAppClient, "grantTypes": []string{grantPassword, grantRefreshToken}}, http.StatusCreated, &app); err != nil {
		return err
	}
	e.appSecret = app.Secret
	return e.setUpIdentity(ctx)
}

// setUpIdentity makes the non-human identity of the nhi scenarios, with a
// client secret and an API key.
func (e *loadEnv) setUpIdentity(ctx context.Context) error {
	nhi := "/admin/realms/" + loadRealm + "/nhi"
	var n struct{ ID string }
	if err := e.admin(ctx, http.MethodPost, nhi, map[string]any{"kind": "workload", "name": loadNHIClient},
		http.StatusCreated, &n); err != nil {
		return err
	}
	var secret struct{ Secret string }
	if err := e.admin(ctx, http.MethodPost, nhi+"/"+n.ID+"/credentials", map[string]any{"type": "client_secret"},
		http.StatusCreated, &secret); err != nil {
		return err
	}
	var key struct {
		APIKey string `json:"apiKey"`
	}
	if err := e.admin(ctx, http.MethodPost, nhi+"/"+n.ID+"/credentials", map[string]any{"type": "api_key"},
		http.StatusCreated, &key); err != nil {
		return err
	}
	e.nhiSecret, e.nhiAPIKey = secret.Secret, key.APIKey
	return nil
}

// admin sends an admin API request and decodes the answer into out.
func (e *loadEnv) admin(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.srv.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Admin-API-Key", e.apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%w: %s %s: status %d: %s", errLoadSetup, method, path, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// seed writes the users and sessions straight into the database, beside
// the running server, in batched transactions. Every user has the same
// password hash: one argon2id hash made once, not a million.
func (e *loadEnv) seed(ctx context.Context, spec loadServerSpec) error {
	st, err := store.Open(ctx, spec.storeConfig())
	if err != nil {
		return err
	}
	defer st.Close()
	realm, err := st.GetRealm(ctx, loadRealm)
	if err != nil {
		return err
	}
	e.hashedPass = e.cfg.HashPassword(e.password)
	ids, err := seedUsers(ctx, st, realm.ID, e.cfg.Users, e.hashedPass, newProgress(e.cfg.Progress, "seeding users", e.cfg.Users))
	if err != nil {
		return err
	}
	e.sample = sampleUsers(ids)
	return seedSessions(ctx, st, realm, ids, e.cfg.Sessions, newProgress(e.cfg.Progress, "seeding sessions", e.cfg.Sessions))
}

// seedUsers inserts n users named user0000000, user0000001, … and returns
// their IDs.
func seedUsers(ctx context.Context, st *store.Store, realmID string, n int, hash string, p *progress) ([]string, error) {
	now := time.Now().UnixMilli()
	ids := make([]string, 0, n)
	batch := make([]*store.User, 0, seedBatch)
	for i := 0; i < n; {
		batch = batch[:0]
		for ; i < n && len(batch) < seedBatch; i++ {
			name := loadUsername(i)
			u := &store.User{ID: uuid.NewString(), RealmID: realmID, Username: name, Email: name + "@example.com",
				FirstName: "Load", LastName: fmt.Sprintf("Tester %d", i), Enabled: true, EmailVerified: true,
				PasswordHash: hash, PasswordChangedAt: now, CreatedAt: now}
			batch = append(batch, u)
			ids = append(ids, u.ID)
		}
		if err := st.CreateUsers(ctx, batch); err != nil {
			return nil, err
		}
		p.set(i)
	}
	p.done()
	return ids, nil
}

// sampleSize is how many seeded users the scenarios that write users
// (SCIM, the admin updates behind webhooks) keep at hand, spread evenly
// over the realm.
const sampleSize = 256

// sampledUser is a seeded user a scenario names by ID.
type sampledUser struct {
	index int // of loadUsername
	id    string
}

// sampleUsers picks sampleSize of the seeded users, evenly spaced.
func sampleUsers(ids []string) []sampledUser {
	stride := max(1, len(ids)/sampleSize)
	var out []sampledUser
	for i := 0; i < len(ids) && len(out) < sampleSize; i += stride {
		out = append(out, sampledUser{index: i, id: ids[i]})
	}
	return out
}

// seedSessions makes n active SSO sessions of random users.
func seedSessions(ctx context.Context, st *store.Store, realm *store.Realm, userIDs []string, n int, p *progress) error {
	now := time.Now().UnixMilli()
	for i := 0; i < n; {
		err := st.Tx(ctx, func(tx *store.Store) error {
			for j := 0; i < n && j < seedBatch; i, j = i+1, j+1 {
				user := &store.User{ID: userIDs[rand.IntN(len(userIDs))]}
				s := app.NewSSOSession(realm, user, uuid.NewString(), "127.0.0.1", now)
				if err := tx.CreateSession(ctx, s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		p.set(i)
	}
	p.done()
	return nil
}

// progress draws a progress bar on a terminal, and a line per tenth
// elsewhere (a log, CI).
type progress struct {
	w       io.Writer
	label   string
	total   int
	start   time.Time
	tty     bool
	lastTen int
}

func newProgress(w io.Writer, label string, total int) *progress {
	p := &progress{w: w, label: label, total: max(total, 1), start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) set(n int) {
	frac := float64(n) / float64(p.total)
	elapsed := time.Since(p.start).Round(time.Second)
	if p.tty {
		const width = 30
		filled := int(frac * width)
		eta := ""
		if n > 0 && n < p.total {
			eta = fmt.Sprintf(", about %s left", (time.Duration(float64(time.Since(p.start))/frac) - time.Since(p.start)).Round(time.Second))
		}
		fmt.Fprintf(p.w, "\r%s [%s%s] %3.0f%% %d/%d %s%s   ", p.label, strings.Repeat("#", filled),
			strings.Repeat(".", width-filled), frac*100, n, p.total, elapsed, eta)
		return
	}
	if ten := int(frac * 10); ten > p.lastTen {
		p.lastTen = ten
		fmt.Fprintf(p.w, "%s: %d/%d (%.0f%%) after %s\n", p.label, n, p.total, frac*100, elapsed)
	}
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
