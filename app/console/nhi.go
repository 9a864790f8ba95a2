package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// The page of a non-human identity: what it is, its state changed
// (suspended, reactivated, decommissioned after a confirmation), and its
// credentials (a secret or API key issued and shown once; revoked after a
// confirmation).

const nhiKind = "nhi"

// nhiCredentialTypes are the credentials the console issues: those made
// by the server, whose secret it shows once.
var nhiCredentialTypes = []string{"client_secret", "api_key"}

// nhiMoves are the state changes of an identity, by the state it is in.
var nhiMoves = map[string][]string{"active": {"suspend", "decommission"}, "suspended": {"reactivate", "decommission"}}

// NHIIdentity shows one identity.
func (s *Service) NHIIdentity(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.nhiPage(w, r, c, http.StatusOK, state{})
}

func (s *Service) nhiPage(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, nhiKind, id, ""), nil, &rep); err != nil {
		return err
	}
	var creds []map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, nhiKind, id, "/credentials"), nil, &creds); err != nil {
		return err
	}
	self := one(realm, nhiKind, id, "")
	write := c.can(authz.NHIWrite)
	d := pages.Detail{Back: realmPath(realm, "/"+nhiKind), Facts: factsOf(rep, "name", "kind", "state", "description", "clientId")}
	if v := when(rep["lastUsedTimestamp"]); v != "" {
		d.Facts = append(d.Facts, pages.Fact{Label: "console.nhi.lastUsed", Value: v})
	}
	cs := pages.Section{ID: "credentials", Title: "console.nhi.credentials", Once: st.once,
		Columns: []string{"console.field.name", "console.field.type", "console.field.state", "console.nhi.expires"}}
	for _, cr := range creds {
		row := pages.Row{Name: cell(cr["name"]), Cells: []string{cell(cr["name"]), cell(cr["type"]), cell(cr["state"]),
			when(cr["expiresTimestamp"])}}
		if write && cell(cr["state"]) == "active" {
			row.Buttons = []pages.Button{dangerLink(self+"/credentials/"+url.PathEscape(cell(cr["id"]))+"/revoke", "console.nhi.revoke")}
		}
		cs.Rows = append(cs.Rows, row)
	}
	if write {
		cs.Forms = []pages.ActionForm{st.fill(pages.ActionForm{ID: "credential", Action: self + "/credentials",
			Fields: []pages.FieldSpec{text("name", true), {Name: "type", Kind: "select", Options: nhiCredentialTypes},
				{Name: "expiresInDays", Kind: "number"}}, Button: "console.nhi.issue"})}
	}
	d.Sections = []pages.Section{cs}
	if write {
		moves := pages.Section{ID: "state", Title: "console.nhi.state", Note: "console.nhi.stateNote",
			NoteArgs: []any{cell(rep["state"])}}
		for _, m := range nhiMoves[cell(rep["state"])] {
			if m == "decommission" {
				moves.Columns = []string{"console.field.name"}
				moves.Rows = []pages.Row{{Name: cell(rep["name"]), Cells: []string{cell(rep["name"])},
					Buttons: []pages.Button{dangerLink(self+"/decommission", "console.nhi.decommission")}}}
				continue
			}
			moves.Forms = append(moves.Forms, pages.ActionForm{ID: m, Action: self + "/" + m, Button: "console.nhi." + m,
				Secondary: true, Values: map[string]string{}})
		}
		d.Sections = append(d.Sections, moves)
	}
	return c.render(w, r, status, pages.DetailPage(c.nav(r, nhiKind, "console.nhi.identity", cell(rep["name"])), d))
}

// IssueNHICredential issues a credential; its secret is shown once.
func (s *Service) IssueNHICredential(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	body := map[string]any{"name": strings.TrimSpace(r.PostForm.Get("name")), "type": r.PostForm.Get("type")}
	if v := strings.TrimSpace(r.PostForm.Get("expiresInDays")); v != "" {
		days, err := strconv.Atoi(v)
		if err != nil || days <= 0 {
			return s.nhiPage(w, r, c, http.StatusUnprocessableEntity, state{form: "credential", values: formValues(r),
				f: pages.Form{Errors: map[string]string{"expiresInDays": "console.error.number"}}})
		}
		body["expiresIn"] = days * 24 * 3600
	}
	var created map[string]any
	if err := c.call(r, http.MethodPost, apiOne(realm, nhiKind, id, "/credentials"), body, &created); err != nil {
		f, ok := formFailure(err, "name", "type", "expiresIn")
		if !ok {
			return err
		}
		if msg, ok := f.Errors["expiresIn"]; ok {
			delete(f.Errors, "expiresIn")
			f.Errors["expiresInDays"] = msg
		}
		return s.nhiPage(w, r, c, http.StatusUnprocessableEntity, state{form: "credential", f: f, values: formValues(r)})
	}
	secret := cell(created["apiKey"])
	if secret == "" {
		secret = cell(created["secret"])
	}
	r.URL.RawQuery = url.Values{"done": {"console.done.credentialIssued"}}.Encode()
	return s.nhiPage(w, r, c, http.StatusCreated, state{once: &pages.Fact{Label: "console.nhi.secret", Value: secret}})
}

// ConfirmRevokeNHICredential asks before a credential is revoked.
func (s *Service) ConfirmRevokeNHICredential(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return nhiCredentialRevocation.confirm(w, r, c)
}

// RevokeNHICredential revokes a credential at once.
func (s *Service) RevokeNHICredential(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return nhiCredentialRevocation.make(w, r, c)
}

// MoveNHI changes an identity's state (suspend, reactivate, decommission).
func (s *Service) MoveNHI(move string) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		realm, id := pathVar(r, "realm"), pathVar(r, "id")
		if err := c.call(r, http.MethodPost, apiOne(realm, nhiKind, id, "/"+move), nil, nil); err != nil {
			return err
		}
		redirect(w, r, one(realm, nhiKind, id, ""), "console.done.nhi."+move)
		return nil
	}
}

// ConfirmDecommissionNHI asks before an identity is decommissioned, which
// cannot be undone.
func (s *Service) ConfirmDecommissionNHI(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	return c.confirm(w, r, nhiKind, "console.nhi.decommissionConfirm", id, one(realm, nhiKind, id, "/decommission"),
		one(realm, nhiKind, id, ""), "console.nhi.decommission")
}
