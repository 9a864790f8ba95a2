package console

import (
	"encoding/json"
	"net/http"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// The page of an LDAP directory: its settings, its connection tested,
// its last sync, and a sync now whose progress a script shows while it
// runs (assets/static/console-sync.js polls LDAPSyncStatus).

const ldapKind = "user-federation"

// ldapSync is the part of a directory's representation about its syncs.
type ldapSync struct {
	SyncStatus *struct {
		LastSync map[string]any `json:"lastSync"`
		Running  *struct {
			Action    string `json:"action"`
			Processed int64  `json:"processed"`
		} `json:"running"`
	} `json:"syncStatus"`
}

// syncFields are a sync result's figures, in the order shown.
var syncFields = []string{"action", "read", "created", "updated", "disabled", "deleted", "failed", "durationMs", "error"}

// LDAPProvider shows one directory.
func (s *Service) LDAPProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.ldapPage(w, r, c, http.StatusOK, state{})
}

func (s *Service) ldapPage(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, ldapKind, id, ""), nil, &rep); err != nil {
		return err
	}
	var sync ldapSync
	if b, err := json.Marshal(rep); err == nil {
		_ = json.Unmarshal(b, &sync) // the same answer, read for its sync's state
	}
	d := pages.Detail{Back: realmPath(realm, "/"+ldapKind),
		Facts: factsOf(rep, "name", "vendor", "connectionUrl", "bindDn", "usersDn", "enabled", "syncMode")}
	conn := pages.Section{ID: "connection", Title: "console.ldap.connection", Facts: st.result}
	last := pages.Section{ID: "sync", Title: "console.ldap.sync", Note: "console.ldap.neverSynced"}
	if sync.SyncStatus != nil && sync.SyncStatus.LastSync != nil {
		ls := sync.SyncStatus.LastSync
		last.Note, last.NoteArgs = "console.ldap.lastSync", []any{when(ls["startedAt"])}
		last.Facts = factsOf(ls, syncFields...)
	}
	if sync.SyncStatus != nil && sync.SyncStatus.Running != nil {
		last.Note, last.NoteArgs = "console.ldap.running", []any{sync.SyncStatus.Running.Processed}
	}
	if c.can(authz.RealmWrite) {
		self := one(realm, ldapKind, id, "")
		conn.Forms = []pages.ActionForm{st.fill(pages.ActionForm{ID: "test-connection", Action: self + "/test-connection",
			Button: "console.action.test-connection", Secondary: true})}
		last.Forms = []pages.ActionForm{st.fill(pages.ActionForm{ID: "sync-now", Action: self + "/sync",
			Fields: []pages.FieldSpec{{Name: "action", Kind: "select", Options: []string{"full", "changed"}}},
			Button: "console.action.sync"})}
		last.Live, d.Script = self+"/sync-status", s.deps.Asset("console-sync.js")
	}
	d.Sections = []pages.Section{conn, last}
	return c.render(w, r, status, pages.DetailPage(c.nav(r, ldapKind, "console.ldap.title", cell(rep["name"])), d))
}

// LDAPTestConnection tests the directory's connection and shows what the
// directory answered on its page.
func (s *Service) LDAPTestConnection(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	var answer map[string]any
	if err := c.call(r, http.MethodPost, apiOne(realm, ldapKind, id, "/test-connection"), nil, &answer); err != nil {
		return err
	}
	st := state{result: factsOf(answer, "success", "error", "detail", "vendor", "vendorVersion", "userCount")}
	return s.ldapPage(w, r, c, http.StatusOK, st)
}

// LDAPSync runs a sync now and leads to the directory's page, which shows
// its result. The sync runs to its end in this request; the page's script
// shows its count meanwhile.
func (s *Service) LDAPSync(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	action := r.PostForm.Get("action")
	if action == "" {
		action = "full"
	}
	path := apiOne(realm, ldapKind, id, "/sync") + "?action=" + action
	return c.submit(w, r, http.MethodPost, path, nil, "sync-now", []string{"action"},
		one(realm, ldapKind, id, ""), "console.done.synced", s.ldapPage)
}

// syncState is what the sync's script polls: the count of a running
// sync, and whether it runs.
type syncState struct {
	Running   bool  `json:"running"`
	Processed int64 `json:"processed"`
}

// LDAPSyncStatus answers, as JSON, the directory's sync running now: the
// API's representation of it, read with the administrator's token.
func (s *Service) LDAPSyncStatus(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	var sync ldapSync
	if err := c.call(r, http.MethodGet, apiOne(realm, ldapKind, id, ""), nil, &sync); err != nil {
		return err
	}
	var out syncState
	if sync.SyncStatus != nil && sync.SyncStatus.Running != nil {
		out.Running, out.Processed = true, sync.SyncStatus.Running.Processed
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(out)
}
