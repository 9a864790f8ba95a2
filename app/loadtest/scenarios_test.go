package loadtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/identity"
)

// runScenario runs one scenario briefly, with the server in this process
// and a realm of a few users, and answers the report; the run failing
// fails the test.
func runScenario(t *testing.T, name string) *loadReport {
	t.Helper()
	cfg := Config{Schema: apptest.Schema(t), Version: "test", HashPassword: identity.Argon2idHash,
		Duration: 500 * time.Millisecond, Concurrency: 2, Users: 20, Sessions: 5, Scenarios: []string{name},
		JSON: true, Dir: t.TempDir(), Progress: io.Discard}
	var out bytes.Buffer
	if err := Run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.Bytes())
	}
	var rep loadReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out.Bytes())
	}
	return &rep
}

// mustHaveRun is the scenario's one result, which made requests and had
// none fail.
func mustHaveRun(t *testing.T, rep *loadReport, name string) *loadResult {
	t.Helper()
	if len(rep.Results) != 1 || rep.Results[0].Name != name {
		t.Fatalf("results %+v, skipped %+v: want %s alone", rep.Results, rep.Skipped, name)
	}
	r := rep.Results[0]
	if r.Requests == 0 || r.Errors != 0 {
		t.Fatalf("%s: %d requests, %d errors (first: %s)", name, r.Requests, r.Errors, r.FirstError)
	}
	t.Logf("%s: %d requests, %.0f/s, p99 %.2f ms, floor %s %.0f/s, %s %s", name, r.Requests, r.RPS, r.P99Ms,
		r.FloorName, r.Floor, r.Target, r.Value)
	return r
}

// The scenarios of the product beyond the token endpoint each set up what
// they need through the admin API and run against a real server, every
// request answered as the scenario expects.
func TestRunProductScenarios(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(t *testing.T, r *loadResult)
	}{
		// The floor is two signatures measured in the run, and the ratio
		// is printed against it.
		{"saml-sso", func(t *testing.T, r *loadResult) {
			if r.FloorName != floorRS256x2 || r.Floor <= 0 || r.Ratio <= 0 || r.Target == "" {
				t.Errorf("floor %s %v, ratio %v, target %q", r.FloorName, r.Floor, r.Ratio, r.Target)
			}
		}},
		{"scim-filter", func(t *testing.T, r *loadResult) {
			if r.Target == "" || r.Concurrency != 2 {
				t.Errorf("target %q at %d connections", r.Target, r.Concurrency)
			}
		}},
		{"scim-patch", nil},
		{"broker", nil},
		// Every update is delivered: the receiver counts them.
		{"webhooks", func(t *testing.T, r *loadResult) {
			if r.Effect != "deliveries" || r.EffectRate <= 0 {
				t.Errorf("effect %q at %v/s", r.Effect, r.EffectRate)
			}
		}},
		{"policy-eval", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustHaveRun(t, runScenario(t, c.name), c.name)
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

// ldap-bind starts a real slapd. Without one the scenario is skipped,
// saying why, and the run does not fail; so does this test, but under
// CI=true, which must run it.
func TestRunLDAPScenario(t *testing.T) {
	rep := runScenario(t, "ldap-bind")
	if len(rep.Skipped) > 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ldap-bind skipped under CI=true: %s", rep.Skipped[0].Reason)
		}
		t.Skipf("ldap-bind skipped: %s", rep.Skipped[0].Reason)
	}
	r := mustHaveRun(t, rep, "ldap-bind")
	if r.FloorName != floorLDAPBind || r.Floor <= 0 || r.Ratio <= 0 {
		t.Errorf("floor %s %v, ratio %v", r.FloorName, r.Floor, r.Ratio)
	}
}

// The webhook receiver answers and counts every delivery, and checks the
// Standard Webhooks signature of the first and of one in hookSampleEvery:
// a delivery signed with another secret is its error, which fails the
// scenario's next request.
func TestHookReceiverChecksSignatures(t *testing.T) {
	h, err := startHookReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer h.srv.Close()
	const secret, other = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_c2VjcmV0IG9mIGFub3RoZXIgd2ViaG9vaw=="
	mustWebhook := func(secret string) *standardwebhooks.Webhook {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		return wh
	}
	h.verifier = mustWebhook(secret)
	deliver := func(signer *standardwebhooks.Webhook, id string) {
		t.Helper()
		body, now := []byte(`{"type":"user.updated"}`), time.Now()
		sig, err := signer.Sign(id, now, body)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url, bytes.NewReader(body))
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("receiver answered %d", resp.StatusCode)
		}
	}
	deliver(h.verifier, "msg_1")
	deliver(mustWebhook(other), "msg_2") // not sampled
	if err := h.err(); err != nil || h.received.Load() != 2 {
		t.Fatalf("after two deliveries: %d counted, error %v", h.received.Load(), err)
	}
	h.received.Store(hookSampleEvery)
	deliver(mustWebhook(other), "msg_forged")
	if err := h.err(); !errors.Is(err, errHookSignature) || h.received.Load() != hookSampleEvery+1 {
		t.Fatalf("a forged sampled delivery: %d counted, error %v", h.received.Load(), err)
	}
}
