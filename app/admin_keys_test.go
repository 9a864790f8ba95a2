package app

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/signingkeys"
	"github.com/idenplane/idenplane/store"
)

func TestAdminKeysBadInputs(t *testing.T) {
	s, _ := keysTestServer(t)
	keysTestRealm(s, "acme")
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/keys/config", map[string]any{"rotationDays": 30}), http.StatusOK)
	before := keysTestStates(keysTestList(s, "acme"))

	const config, rotate = "/admin/realms/acme/keys/config", "/admin/realms/acme/keys/rotate"
	for _, tc := range []struct {
		method, path string
		body         any
		headers      []string
		status       int
		code, field  string
	}{
		{http.MethodPut, config, `{"algorithm":"HS256"}`, nil, 400, "invalid_field", "algorithm"},
		{http.MethodPut, config, `{"algorithm":"rs256"}`, nil, 400, "invalid_field", "algorithm"},
		{http.MethodPut, config, `{"algorithm":"none"}`, nil, 400, "invalid_field", "algorithm"},
		{http.MethodPut, config, `{"algorithm":""}`, nil, 400, "invalid_field", "algorithm"},
		{http.MethodPut, config, `{"algorithm":256}`, nil, 400, "invalid_field", "algorithm"},
		{http.MethodPut, config, `{"rotationDays":-1}`, nil, 400, "invalid_field", "rotationDays"},
		{http.MethodPut, config, `{"rotationDays":3651}`, nil, 400, "invalid_field", "rotationDays"},
		{http.MethodPut, config, `{"rotationDays":1.5}`, nil, 400, "invalid_field", "rotationDays"},
		{http.MethodPut, config, `{"rotationDays":"90"}`, nil, 400, "invalid_field", "rotationDays"},
		{http.MethodPut, config, `{"rotationDays":1e100}`, nil, 400, "invalid_field", "rotationDays"},
		{http.MethodPut, config, `{"rotationDays":7,"keys":[]}`, nil, 400, "unknown_field", "keys"},
		{http.MethodPut, config, `{"RotationDays":7}`, nil, 400, "unknown_field", "RotationDays"},
		{http.MethodPut, config, `[]`, nil, 400, "invalid_json", ""},
		{http.MethodPut, config, `{"rotationDays":7`, nil, 400, "invalid_json", ""},
		{http.MethodPut, config, `{"rotationDays":7} {}`, nil, 400, "invalid_json", ""},
		{http.MethodPut, config, ``, nil, 400, "invalid_json", ""},
		{http.MethodPut, config, `{"rotationDays":7}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
		{http.MethodPost, rotate, `{"algorithm":"HS256","immediate":true}`, nil, 400, "invalid_field", "algorithm"},
		{http.MethodPost, rotate, `{"algorithm":"PS256"}`, nil, 400, "invalid_field", "algorithm"},
		{http.MethodPost, rotate, `{"algorithm":["ES256"]}`, nil, 400, "invalid_field", "algorithm"},
		{http.MethodPost, rotate, `{"immediate":"yes"}`, nil, 400, "invalid_field", "immediate"},
		{http.MethodPost, rotate, `{"immediate":1}`, nil, 400, "invalid_field", "immediate"},
		{http.MethodPost, rotate, `{"immediate":true,"kid":"x"}`, nil, 400, "unknown_field", "kid"},
		{http.MethodPost, rotate, `{"Immediate":true}`, nil, 400, "unknown_field", "Immediate"},
		{http.MethodPost, rotate, `[{"immediate":true}]`, nil, 400, "invalid_json", ""},
		{http.MethodPost, rotate, `{"immediate":true`, nil, 400, "invalid_json", ""},
		{http.MethodPost, rotate, `{"immediate":true}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
		{http.MethodGet, "/admin/realms/ghost/keys", nil, nil, 404, "not_found", ""},
		{http.MethodPost, "/admin/realms/ghost/keys/rotate", `{"immediate":true}`, nil, 404, "not_found", ""},
		{http.MethodPost, "/admin/realms/ghost/keys/rotate", nil, nil, 404, "not_found", ""},
		{http.MethodGet, "/admin/realms/ghost/keys/config", nil, nil, 404, "not_found", ""},
		{http.MethodPut, "/admin/realms/ghost/keys/config", `{"rotationDays":7}`, nil, 404, "not_found", ""},
		{http.MethodDelete, "/admin/realms/acme/keys", nil, nil, 405, "method_not_allowed", ""},
		{http.MethodPatch, config, `{"rotationDays":7}`, nil, 405, "method_not_allowed", ""},
		{http.MethodGet, rotate, nil, nil, 405, "method_not_allowed", ""},
	} {
		t.Run(tc.method+" "+tc.path+" "+strings.Join(tc.headers, ",")+" "+func() string { s, _ := tc.body.(string); return s }(), func(t *testing.T) {
			mustError(t, s.admin(tc.method, tc.path, tc.body, tc.headers...), tc.status, tc.code, tc.field)
		})
	}
	// Nothing was changed by any of them.
	if after := keysTestStates(keysTestList(s, "acme")); after != before {
		t.Fatalf("keys changed: %s, was %s", after, before)
	}
	r := s.admin(http.MethodGet, config, nil)
	keysTestMustEqual(t, "config", r.object(t), map[string]any{"algorithm": "RS256", "rotationDays": 30})
	// Without credentials, nothing is shown.
	for _, path := range []string{"/admin/realms/acme/keys", config} {
		mustError(t, s.request(http.MethodGet, path, nil), http.StatusUnauthorized, "unauthorized", "")
	}
	mustError(t, s.request(http.MethodPost, rotate, `{"immediate":true}`), http.StatusUnauthorized, "unauthorized", "")
}

func TestAdminKeysConfigPut(t *testing.T) {
	s, _ := keysTestServer(t)
	keysTestRealm(s, "acme")
	const config = "/admin/realms/acme/keys/config"
	for _, step := range []struct {
		body string
		want map[string]any
	}{
		{`{"rotationDays":0}`, map[string]any{"algorithm": "RS256", "rotationDays": 0}},
		{`{"rotationDays":3650}`, map[string]any{"algorithm": "RS256", "rotationDays": 3650}},
		{`{"algorithm":"EdDSA","rotationDays":1}`, map[string]any{"algorithm": "EdDSA", "rotationDays": 1}},
		{`{}`, map[string]any{"algorithm": "EdDSA", "rotationDays": 1}},
		{`{"rotationDays":null}`, map[string]any{"algorithm": "EdDSA", "rotationDays": 90}},
	} {
		r := s.admin(http.MethodPut, config, step.body)
		mustStatus(t, r, http.StatusOK)
		keysTestMustEqual(t, "PUT "+step.body, r.object(t), step.want)
		r = s.admin(http.MethodGet, config, nil)
		keysTestMustEqual(t, "GET after PUT "+step.body, r.object(t), step.want)
	}
}

func TestAdminKeysRotateBody(t *testing.T) {
	s, _ := keysTestServer(t)
	keysTestRealm(s, "acme")
	first := keysTestFind(t, keysTestList(s, "acme"), store.KeyActive)
	// An empty object and null fields are the defaults: schedule, realm's algorithm.
	for _, body := range []string{`{}`, `{"algorithm":null,"immediate":false}`} {
		keys := keysTestRotate(s, "acme", body)
		if len(keys) != 2 || keys[0].Status != store.KeyNext || keys[0].Algorithm != "RS256" || keys[1].KID != first.KID {
			t.Fatalf("rotate %s: %s", body, keysTestStates(keys))
		}
	}
	// The answer is what GET lists.
	r := s.admin(http.MethodPost, "/admin/realms/acme/keys/rotate", map[string]any{"immediate": true})
	mustStatus(t, r, http.StatusOK)
	var rotated []signingkeys.KeyRep
	r.decode(t, &rotated)
	keysTestMustEqual(t, "rotate answer", rotated, keysTestList(s, "acme"))
}

func TestAdminKeysListShape(t *testing.T) {
	s, _ := keysTestServer(t)
	keysTestRealm(s, "acme")
	keysTestRotate(s, "acme", map[string]any{"immediate": true, "algorithm": "ES256"})
	keysTestRotate(s, "acme", nil)
	r := s.admin(http.MethodGet, "/admin/realms/acme/keys", nil)
	mustStatus(t, r, http.StatusOK)
	var raw []map[string]any
	r.decode(t, &raw)
	want := [][]string{
		{"algorithm", "createdTimestamp", "kid", "publicKey", "status"},
		{"activatedTimestamp", "algorithm", "createdTimestamp", "kid", "publicKey", "status"},
		{"activatedTimestamp", "algorithm", "createdTimestamp", "kid", "publicKey", "publishUntil", "retiredTimestamp", "status"},
	}
	if len(raw) != len(want) {
		t.Fatalf("listed %d keys: %s", len(raw), r.Body)
	}
	for i, k := range raw {
		var fields []string
		for f := range k {
			fields = append(fields, f)
		}
		slices.Sort(fields)
		if !slices.Equal(fields, want[i]) {
			t.Fatalf("key %d fields %v, want %v", i, fields, want[i])
		}
	}
	pub := raw[1]["publicKey"].(map[string]any)
	if pub["kty"] != "EC" || pub["crv"] != "P-256" || pub["alg"] != "ES256" || pub["use"] != "sig" || pub["kid"] != raw[1]["kid"] {
		t.Fatalf("ES256 public key %v", pub)
	}
}

func TestAdminKeysEvents(t *testing.T) {
	s, _ := keysTestServer(t)
	keysTestRealm(s, "acme")
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"adminEventsEnabled": true}), http.StatusOK)
	keysTestRotate(s, "acme", map[string]any{"immediate": true})
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/keys/config", map[string]any{"rotationDays": 5}), http.StatusOK)
	events := eventsTestAdminEvents(s, "acme", "")
	var got []string
	for _, e := range events {
		if e.ResourceType == "REALM" {
			continue // the events config change above
		}
		got = append(got, e.OperationType+" "+e.ResourceType+" "+e.ResourcePath+" "+string(e.Representation))
	}
	slices.Sort(got)
	want := []string{
		`ACTION KEY keys/rotate {"immediate":true}`,
		`UPDATE KEY keys/config {"algorithm":"RS256","rotationDays":5}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("admin events:\n got %q\nwant %q", got, want)
	}
}

func TestAdminKeysImport(t *testing.T) {
	s, _ := keysTestServer(t)
	keysTestRealm(s, "acme")
	keysTestRotate(s, "acme", map[string]any{"immediate": true, "algorithm": "ES256"})
	old := keysTestKIDs(keysTestList(s, "acme"))

	r := s.admin(http.MethodGet, "/admin/realms/acme/export?includeSecrets=true", nil)
	mustStatus(t, r, http.StatusOK)
	export := r.Body
	for _, kid := range old {
		if strings.Contains(string(export), kid) {
			t.Fatalf("the export carries key %s", kid)
		}
	}

	// A copy imported under another name gets keys of its own.
	var doc map[string]any
	if err := json.Unmarshal(export, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "id")
	doc["name"] = "copy"
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import", doc), http.StatusCreated)
	keys := keysTestList(s, "copy")
	if len(keys) != 1 || keys[0].Status != store.KeyActive || keys[0].Algorithm != "RS256" || slices.Contains(old, keys[0].KID) {
		t.Fatalf("imported copy's keys: %s", keysTestStates(keys))
	}

	// Overwriting a realm replaces its keys too: keys are not exported.
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=true", export), http.StatusCreated)
	keys = keysTestList(s, "acme")
	if len(keys) != 1 || keys[0].Status != store.KeyActive || slices.Contains(old, keys[0].KID) {
		t.Fatalf("overwritten realm's keys: %s (old %v)", keysTestStates(keys), old)
	}
	r = s.admin(http.MethodGet, "/admin/realms/acme/keys/config", nil)
	keysTestMustEqual(t, "overwritten realm's config", r.object(t), map[string]any{"algorithm": "RS256", "rotationDays": 90})

	// An import through the package function, as the CLI does, too.
	realm, err := ImportRealm(context.Background(), s.store, []byte(`{"formatVersion":1,"name":"cli"}`), ImportOptions{}, s.app.now())
	if err != nil {
		t.Fatal(err)
	}
	if _, k := keysTestSign(t, s, realm, keysTestPayload); k.Algorithm != "RS256" {
		t.Fatalf("CLI-imported realm signs with %s", k.Algorithm)
	}
	if keys := keysTestList(s, "cli"); len(keys) != 1 {
		t.Fatalf("CLI-imported realm's keys: %s", keysTestStates(keys))
	}
}
