package nhi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

type bulkJSON struct {
	Created int `json:"created"`
	Failed  int `json:"failed"`
	Results []struct {
		Index    int           `json:"index"`
		Name     string        `json:"name"`
		Status   int           `json:"status"`
		Outcome  string        `json:"outcome"`
		Identity *identityJSON `json:"identity"`
		Error    string        `json:"error"`
		Field    string        `json:"field"`
	} `json:"results"`
}

const bulkPath = nhiPath + "/devices/bulk-register"

func bulkRegister(t *testing.T, s *apptest.Server, body any) bulkJSON {
	t.Helper()
	r := s.Admin(http.MethodPost, bulkPath, body)
	apptest.MustStatus(t, r, http.StatusOK)
	var b bulkJSON
	r.Decode(t, &b)
	return b
}

func countIdentities(t *testing.T, s *apptest.Server) int {
	t.Helper()
	var list []identityJSON
	s.Admin(http.MethodGet, nhiPath+"?max=1000", nil).Decode(t, &list)
	return len(list)
}

func TestBulkRegisterDevices(t *testing.T) {
	s := newServer(t)
	createIdentity(t, s, map[string]any{"kind": "service", "name": "taken"})
	devices := []map[string]any{
		{"name": "cam-1", "metadata": map[string]any{"site": "north"}},
		{"name": "cam-2"},
		{"name": "CAM-1"},    // the same service-account username as cam-1
		{"name": "bad name"}, // refused name
		{"name": "taken"},    // taken by an identity
		{"name": "bot-1", "kind": "bot"},
		{"name": "cam-3", "kind": "device"},
	}
	// All or nothing: one refusal, nothing registered.
	b := bulkRegister(t, s, map[string]any{"devices": devices, "allOrNothing": true})
	if b.Created != 0 || b.Failed != 4 || b.Results[0].Outcome != "rolled_back" || b.Results[3].Outcome != "failed" {
		t.Fatalf("all or nothing: %+v", b)
	}
	if got := countIdentities(t, s); got != 1 {
		t.Fatalf("%d identities after a refused all-or-nothing request", got)
	}
	// Each on its own: the good ones registered.
	b = bulkRegister(t, s, map[string]any{"devices": devices})
	want := []struct {
		status        int
		outcome, code string
		field         string
	}{
		{201, "created", "", ""}, {201, "created", "", ""}, {409, "failed", "conflict", "name"}, {400, "failed", "invalid_field", "name"},
		{409, "failed", "conflict", "name"}, {400, "failed", "invalid_field", "kind"}, {201, "created", "", ""},
	}
	if b.Created != 3 || b.Failed != 4 || len(b.Results) != len(want) {
		t.Fatalf("results %+v", b)
	}
	for i, w := range want {
		got := b.Results[i]
		if got.Index != i || got.Status != w.status || got.Outcome != w.outcome || got.Error != w.code || got.Field != w.field {
			t.Errorf("device %d: %+v, want %+v", i, got, w)
		}
	}
	if n := b.Results[0].Identity; n == nil || n.Kind != "device" || n.Metadata["site"] != "north" || getIdentity(t, s, n.ID).Name != "cam-1" {
		t.Errorf("registered %+v", n)
	}
	if got := countIdentities(t, s); got != 4 {
		t.Errorf("%d identities, want 4", got)
	}
	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"no devices", map[string]any{}, "devices"},
		{"an empty list", map[string]any{"devices": []any{}}, "devices"},
		{"over a thousand", map[string]any{"devices": make([]map[string]any, 1001)}, "devices"},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, bulkPath, c.body), 400, "invalid_field", c.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, bulkPath, `[{"name":"x"}]`), 400, "invalid_json", "")
}

// A thousand devices in one request, all or nothing.
func TestBulkRegisterAThousand(t *testing.T) {
	s := newServer(t)
	devices := make([]map[string]any, 1000)
	for i := range devices {
		devices[i] = map[string]any{"name": fmt.Sprintf("meter-%04d", i)}
	}
	b := bulkRegister(t, s, map[string]any{"devices": devices, "allOrNothing": true})
	if b.Created != 1000 || b.Failed != 0 {
		t.Fatalf("created %d, failed %d", b.Created, b.Failed)
	}
	if got := countIdentities(t, s); got != 1000 {
		t.Fatalf("%d identities", got)
	}
}
