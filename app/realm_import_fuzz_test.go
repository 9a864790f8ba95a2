package app

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/scopes"
)

// Realm import files, through ImportRealm (what `idenplane import` calls)
// and through POST /admin/realms/import. Invariants: a refusal is a 4xx
// naming what is wrong, never a server error, and writes nothing; a realm
// imported exports, and its export imports back over it unchanged.

// importFuzzEnv is a fuzzEnv with realm src, which has a bit of every
// resource, and src's export as seeds.
type importFuzzEnv struct {
	*fuzzEnv
	seeds []string
}

func newImportFuzzEnv(f *testing.F) *importFuzzEnv {
	f.Helper()
	e := &importFuzzEnv{fuzzEnv: newFuzzEnv(f)}
	mustStatus(f, e.admin(http.MethodPost, "/admin/realms", allRealmFields("src")), http.StatusCreated)
	ok := func(method, path string, body any) map[string]any {
		f.Helper()
		r := e.admin(method, "/admin/realms/src"+path, body)
		if r.Status/100 != 2 {
			f.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		var out map[string]any
		_ = json.Unmarshal(r.Body, &out) // an object, or a list not needed here
		return out
	}
	ok(http.MethodPost, "/clients", map[string]any{"clientId": "web", "redirectUris": []string{"https://web.example.test/cb"},
		"grantTypes": []string{"authorization_code", "client_credentials"}})
	ok(http.MethodPost, "/clients/web/roles", map[string]any{"name": "viewer"})
	ok(http.MethodPost, "/roles", map[string]any{"name": "reader"})
	ok(http.MethodPost, "/roles", map[string]any{"name": "writer"})
	ok(http.MethodPost, "/roles/writer/composites", map[string]any{"roleNames": []string{"reader"}})
	staff := ok(http.MethodPost, "/groups", map[string]any{"name": "staff"})
	ok(http.MethodPost, "/groups/"+staff["id"].(string)+"/children", map[string]any{"name": "ops"})
	ok(http.MethodPost, "/client-scopes", map[string]any{"name": "tier", "protocolMappers": []any{map[string]any{
		"name": "tier", "mapperType": scopes.MapperHardcoded, "config": map[string]any{"claim.name": "tier", "claim.value": "gold"}}}})
	alice := ok(http.MethodPost, "/users", map[string]any{"username": "alice", "email": "alice@example.test",
		"password": "Correct-Horse-42-Battery"})
	ok(http.MethodPost, "/users/"+alice["id"].(string)+"/role-mappings/realm", map[string]any{"roleNames": []string{"writer"}})
	ok(http.MethodPut, "/users/"+alice["id"].(string)+"/groups/"+staff["id"].(string), nil)
	ok(http.MethodPost, "/users", map[string]any{"username": "bob", "firstName": "Bob"})
	for _, q := range []string{"includeUsers=true&includeSecrets=true", "includeUsers=true", ""} {
		r := e.admin(http.MethodGet, "/admin/realms/src/export?"+q, nil)
		mustStatus(f, r, http.StatusOK)
		e.seeds = append(e.seeds, string(r.Body))
	}
	var full map[string]any
	if err := json.Unmarshal([]byte(e.seeds[0]), &full); err != nil {
		f.Fatal(err)
	}
	with := func(k string, v any) string {
		changed := maps.Clone(full)
		changed[k] = v
		b, err := json.Marshal(changed)
		if err != nil {
			f.Fatal(err)
		}
		return string(b)
	}
	e.seeds = append(e.seeds,
		with("formatVersion", 2),
		with("name", "copy"), // src's IDs under another name
		`{"formatVersion":1,"name":"min"}`,
		`{"formatVersion":1,"name":"acme"}`,
		`{"formatVersion":1,"name":"scopeless","clientScopes":[]}`,
		`{"formatVersion":1,"name":"u","users":[{"username":"x1","password":"plain"}]}`,
		`{"formatVersion":1,"name":"u","users":[{"username":"x1","credentials":[{"type":"password","hash":"$argon2id$v=19$m=1,t=1,p=1$$"}]}]}`,
		`{"formatVersion":1,"name":"r","roles":{"realm":[{"name":"a","composites":{"realmRoles":["b"]}},{"name":"b","composites":{"realmRoles":["a"]}}]}}`,
		`{"formatVersion":1,"name":"g","groups":[{"id":"11111111-1111-1111-1111-111111111111","name":"a","parentId":"11111111-1111-1111-1111-111111111111"}]}`,
		`{"formatVersion":1,"name":"c","clients":[{"clientId":"ca","serviceAccount":{"username":"service-account-ca"}},{"clientId":"cb","defaultClientScopes":["nope"]}]}`,
		`{"formatVersion":1,"name":"d","id":"not-a-uuid","createdTimestamp":-1}`,
		`{"formatVersion":1}`, `{}`, `[]`, ``,
	)
	return e
}

// keep says whether a realm imported stays: acme and src are the
// targets' own, the rest is removed after its checks.
func (e *importFuzzEnv) keep(name string) bool { return name == "acme" || name == "src" }

// FuzzImportRealm fuzzes ImportRealm, the function `idenplane import` runs.
func FuzzImportRealm(f *testing.F) {
	e := newImportFuzzEnv(f)
	for i, seed := range e.seeds {
		f.Add([]byte(seed), i == 1 || i == 4)
	}
	f.Fuzz(func(t *testing.T, data []byte, overwrite bool) {
		s := e.on(t)
		ctx := t.Context()
		before := e.dataVersion(t)
		realm, err := ImportRealm(ctx, e.store, data, ImportOptions{Overwrite: overwrite}, time.Now())
		if err != nil {
			if ae := httpx.Classify(err); ae.Status >= 500 {
				t.Fatalf("import failed as a server error: %v", err)
			} else if ae.Message == "" {
				t.Fatalf("import refused without saying why: %v", err)
			}
			if e.dataVersion(t) != before {
				t.Fatalf("a refused import wrote to the database: %v", err)
			}
			return
		}
		importFuzzRoundTrip(t, e, s, realm.Name)
	})
}

// importFuzzRoundTrip exports a realm just imported, imports the export
// over it, and checks the second export is the first; then removes it.
func importFuzzRoundTrip(t *testing.T, e *importFuzzEnv, s *testServer, name string) {
	t.Helper()
	ctx := t.Context()
	first, err := ExportRealm(ctx, e.store, name, true, true)
	if err != nil {
		t.Fatalf("realm %s imported, but its export fails: %v", name, err)
	}
	if _, err := ImportRealm(ctx, e.store, first, ImportOptions{Overwrite: true}, time.Now()); err != nil {
		t.Fatalf("realm %s imported, but its export does not import back: %v\nexport: %s", name, err, first)
	}
	second, err := ExportRealm(ctx, e.store, name, true, true)
	if err != nil {
		t.Fatalf("realm %s re-imported, but its export fails: %v", name, err)
	}
	var a, b any
	if json.Unmarshal(first, &a) != nil || json.Unmarshal(second, &b) != nil {
		t.Fatalf("exports are not JSON")
	}
	if !jsonEqual(a, b) {
		t.Fatalf("realm %s changed when its export was imported back:\nfirst:  %s\nsecond: %s", name, first, second)
	}
	if e.keep(name) {
		return
	}
	if d := s.send(http.MethodDelete, "/admin/realms/"+url.PathEscape(name), nil, adminFuzzHeaders); d.Status/100 != 2 {
		t.Fatalf("DELETE realm %s answered %d: %s", name, d.Status, d.Body)
	}
}

// FuzzAdminImportRealm fuzzes POST /admin/realms/import.
func FuzzAdminImportRealm(f *testing.F) {
	e := newImportFuzzEnv(f)
	for i, seed := range e.seeds {
		f.Add(seed, i == 1 || i == 4)
	}
	f.Fuzz(func(t *testing.T, body string, overwrite bool) {
		s := e.on(t)
		before := e.dataVersion(t)
		path := "/admin/realms/import"
		if overwrite {
			path += "?overwrite=true"
		}
		r := s.send(http.MethodPost, path, strings.NewReader(body), adminFuzzHeaders)
		e.fuzzNoServerError(t, "import", r)
		if r.Status >= 300 {
			fuzzMustAPIError(t, "import", r)
			if e.dataVersion(t) != before {
				t.Fatalf("import answered %d but wrote to the database: %s", r.Status, r.Body)
			}
			return
		}
		var realm map[string]any
		if err := json.Unmarshal(r.Body, &realm); err != nil {
			t.Fatalf("import answered %d with %s", r.Status, r.Body)
		}
		name, _ := realm["name"].(string)
		adminFuzzGet(t, e.fuzzEnv, s, "/admin/realms/"+url.PathEscape(name)+"/export?includeUsers=true")
		if !e.keep(name) {
			if d := s.send(http.MethodDelete, "/admin/realms/"+url.PathEscape(name), nil, adminFuzzHeaders); d.Status/100 != 2 {
				t.Fatalf("DELETE realm %s answered %d: %s", name, d.Status, d.Body)
			}
		}
	})
}
