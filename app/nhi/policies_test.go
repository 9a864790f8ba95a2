package nhi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/nhi"
	"github.com/idenplane/idenplane/store"
)

const policiesPath = nhiPath + "/credential-policies"

const day = 24 * time.Hour

func TestCredentialPolicies(t *testing.T) {
	s := newServer(t)
	body := map[string]any{"name": "monthly", "maxAge": 30 * 86400, "rotationInterval": 20 * 86400, "gracePeriod": 3600,
		"warnBefore": 2 * 86400}
	r := s.Admin(http.MethodPost, policiesPath, body)
	apptest.MustStatus(t, r, http.StatusCreated)
	p := r.Object(t)
	id := p["id"].(string)
	if p["maxAge"] != float64(30*86400) || !strings.HasSuffix(r.Header.Get("Location"), policiesPath+"/"+id) {
		t.Fatalf("created %s", r.Body)
	}
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"no name", http.MethodPost, policiesPath, map[string]any{"maxAge": 1}, 400, "invalid_field", "name"},
		{"a taken name", http.MethodPost, policiesPath, body, 409, "conflict", "name"},
		{"negative", http.MethodPost, policiesPath, map[string]any{"name": "x", "warnBefore": -1}, 400, "invalid_field", "warnBefore"},
		{"due after expiry", http.MethodPost, policiesPath, map[string]any{"name": "x", "maxAge": 10, "rotationInterval": 20}, 400, "invalid_field", "rotationInterval"},
		{"grace beyond 30 days", http.MethodPost, policiesPath, map[string]any{"name": "x", "gracePeriod": 31 * 86400}, 400, "invalid_field", "gracePeriod"},
		{"unknown field", http.MethodPost, policiesPath, map[string]any{"name": "x", "ttl": 1}, 400, "unknown_field", "ttl"},
		{"unknown policy", http.MethodGet, policiesPath + "/" + uuid.NewString(), nil, 404, "not_found", ""},
		{"its status", http.MethodGet, policiesPath + "/" + uuid.NewString() + "/rotation-status", nil, 404, "not_found", ""},
		{"an update breaking a rule", http.MethodPut, policiesPath + "/" + id, map[string]any{"maxAge": 86400}, 400, "invalid_field", "rotationInterval"},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(c.method, c.path, c.body), c.status, c.code, c.field)
		})
	}
	r = s.Admin(http.MethodPut, policiesPath+"/"+id, map[string]any{"description": "for services", "warnBefore": 86400})
	apptest.MustStatus(t, r, http.StatusOK)
	if got := s.Admin(http.MethodGet, policiesPath+"/"+id, nil).Object(t); got["description"] != "for services" ||
		got["warnBefore"] != float64(86400) || got["maxAge"] != float64(30*86400) {
		t.Errorf("after PUT %v", got)
	}
	var list []map[string]any
	s.Admin(http.MethodGet, policiesPath, nil).Decode(t, &list)
	if len(list) != 1 {
		t.Errorf("list %v", list)
	}
	// Assigned to an identity; an unknown one refused.
	n := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc", "credentialPolicyId": id})
	if n.CredentialPolicyID != id {
		t.Fatalf("assigned %+v", n)
	}
	apptest.MustError(t, s.Admin(http.MethodPut, nhiPath+"/"+n.ID, map[string]any{"credentialPolicyId": "nope"}), 400, "invalid_field", "credentialPolicyId")
	// Deleting it leaves its identities without one.
	apptest.MustStatus(t, s.Admin(http.MethodDelete, policiesPath+"/"+id, nil), http.StatusNoContent)
	if got := getIdentity(t, s, n.ID); got.CredentialPolicyID != "" {
		t.Errorf("after deleting its policy: %+v", got)
	}
	apptest.MustError(t, s.Admin(http.MethodDelete, policiesPath+"/"+id, nil), 404, "not_found", "")
}

type rotationJSON struct {
	Due, Overdue, Expired []struct {
		CredentialID     string `json:"credentialId"`
		IdentityName     string `json:"identityName"`
		DueTimestamp     *int64 `json:"dueTimestamp"`
		ExpiresTimestamp *int64 `json:"expiresTimestamp"`
	}
}

func (r rotationJSON) summary() string {
	ids := func(list []struct {
		CredentialID     string `json:"credentialId"`
		IdentityName     string `json:"identityName"`
		DueTimestamp     *int64 `json:"dueTimestamp"`
		ExpiresTimestamp *int64 `json:"expiresTimestamp"`
	}) string {
		var out []string
		for _, e := range list {
			out = append(out, e.IdentityName)
		}
		return strings.Join(out, ",")
	}
	return "due=" + ids(r.Due) + " overdue=" + ids(r.Overdue) + " expired=" + ids(r.Expired)
}

// The rotation policy with a fixed clock: a credential is due from
// warnBefore ahead of its rotation interval, overdue after it, expired at
// the policy's maximum age; the upkeep job announces each credential
// expiring and expired once, and expires one issued before its identity
// had the policy.
func TestRotationPolicyOverTime(t *testing.T) {
	clk := newClock()
	s := newServer(t, withClock(clk))
	r := s.Admin(http.MethodPost, policiesPath, map[string]any{"name": "monthly", "maxAge": 30 * 86400,
		"rotationInterval": 20 * 86400, "gracePeriod": 600, "warnBefore": 2 * 86400})
	apptest.MustStatus(t, r, http.StatusCreated)
	policy := r.Object(t)["id"].(string)
	a := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc-a", "credentialPolicyId": policy})
	b := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc-b"}) // no policy yet
	secret := issueCredential(t, s, a.ID, map[string]any{"type": "client_secret"})
	if secret.ExpiresTimestamp == nil || *secret.ExpiresTimestamp != secret.CreatedTimestamp+30*86400_000 {
		t.Fatalf("the policy's maximum age is the expiry: %+v", secret)
	}
	longKey := issueCredential(t, s, b.ID, map[string]any{"type": "api_key"})

	sweeper := nhi.New(nhi.Deps{Store: s.Store, Core: identity.New(identity.Deps{Store: s.Store, Now: clk.Now}), Now: clk.Now,
		Realm: func(*http.Request) (*store.Realm, error) { return nil, nil }})
	sweep := func(wantExpiring, wantExpired int) {
		t.Helper()
		expiring, expired, err := sweeper.Sweep(context.Background())
		if err != nil || expiring != wantExpiring || expired != wantExpired {
			t.Fatalf("sweep at %s: expiring %d, expired %d, %v; want %d, %d", clk.Now(), expiring, expired, err, wantExpiring, wantExpired)
		}
	}
	status := func(path string) string {
		t.Helper()
		r := s.Admin(http.MethodGet, path, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		var st rotationJSON
		r.Decode(t, &st)
		return st.summary()
	}
	realmWide, ofPolicy := nhiPath+"/rotation-status", policiesPath+"/"+policy+"/rotation-status"
	for _, step := range []struct {
		at                   time.Duration
		realm, policy        string
		expiring, expired    int
		auditExpiring, audit int
	}{
		{17 * day, "due= overdue= expired=", "due= overdue= expired=", 0, 0, 0, 0},
		{18*day + time.Hour, "due=svc-a overdue= expired=", "due=svc-a overdue= expired=", 0, 0, 0, 0},
		{21 * day, "due= overdue=svc-a expired=", "due= overdue=svc-a expired=", 0, 0, 0, 0},
		{28*day + time.Hour, "due= overdue=svc-a expired=", "due= overdue=svc-a expired=", 1, 0, 1, 0},
		{29 * day, "due= overdue=svc-a expired=", "due= overdue=svc-a expired=", 0, 0, 1, 0},
		{31 * day, "due= overdue= expired=svc-a", "due= overdue= expired=svc-a", 0, 1, 1, 1},
		{32 * day, "due= overdue= expired=svc-a", "due= overdue= expired=svc-a", 0, 0, 1, 1},
	} {
		clk.ns.Store(time.Unix(0, 0).Add(time.Duration(secret.CreatedTimestamp) * time.Millisecond).Add(step.at).UnixNano())
		if got := status(realmWide); got != step.realm {
			t.Errorf("at %s, realm-wide: %s, want %s", step.at, got, step.realm)
		}
		if got := status(ofPolicy); got != step.policy {
			t.Errorf("at %s, the policy's: %s, want %s", step.at, got, step.policy)
		}
		sweep(step.expiring, step.expired)
		if got := len(auditLog(t, s, "?action=NHI_CREDENTIAL_EXPIRING")); got != step.auditExpiring {
			t.Errorf("at %s: %d NHI_CREDENTIAL_EXPIRING records, want %d", step.at, got, step.auditExpiring)
		}
		if got := len(auditLog(t, s, "?action=NHI_CREDENTIAL_EXPIRED")); got != step.audit {
			t.Errorf("at %s: %d NHI_CREDENTIAL_EXPIRED records, want %d", step.at, got, step.audit)
		}
	}
	if got := listCredentials(t, s, a.ID)[secret.ID]; got.State != "expired" {
		t.Errorf("a's secret %+v", got)
	}
	// b takes the policy: its month-old key, issued without an expiry,
	// is expired by the next sweep (and announced).
	if got := listCredentials(t, s, b.ID)[longKey.ID]; got.State != "active" || got.ExpiresTimestamp != nil {
		t.Fatalf("b's key before %+v", got)
	}
	apptest.MustStatus(t, s.Admin(http.MethodPut, nhiPath+"/"+b.ID, map[string]any{"credentialPolicyId": policy}), http.StatusOK)
	sweep(0, 1)
	if got := listCredentials(t, s, b.ID)[longKey.ID]; got.State != "expired" || *got.ExpiresTimestamp != longKey.CreatedTimestamp+30*86400_000 {
		t.Fatalf("b's key after the sweep %+v", got)
	}
	// A rotation under the policy keeps its grace period by default.
	fresh := issueCredential(t, s, b.ID, map[string]any{"type": "client_secret"})
	r = s.Admin(http.MethodPost, nhiPath+"/"+b.ID+"/credentials/"+fresh.ID+"/rotate", nil)
	apptest.MustStatus(t, r, http.StatusCreated)
	if got := listCredentials(t, s, b.ID)[fresh.ID]; got.RevokedTimestamp == nil || *got.RevokedTimestamp != clk.Millis()+600_000 {
		t.Errorf("rotated under the policy: %+v", got)
	}
}
