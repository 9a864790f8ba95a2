package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// The page of an organization: its members (added by username, removed
// after a confirmation), its invitations (the link shown once; revoked
// after a confirmation) and its domains (added, the DNS record to publish
// shown, verified).

const orgKind = "organizations"

// orgRoles are the roles of a member, least first.
var orgRoles = []string{"member", "admin", "owner"}

// Organization shows one organization.
func (s *Service) Organization(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.orgPage(w, r, c, http.StatusOK, state{})
}

// orgExtra is what an organization's page shows once: an invitation's
// link, or the DNS record of a domain to verify.
type orgExtra struct {
	link   *pages.Fact
	record []pages.Fact
}

func (s *Service) orgPage(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state) error {
	return s.orgPageWith(w, r, c, status, st, orgExtra{})
}

func (s *Service) orgPageWith(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state, ex orgExtra) error {
	realm, slug := pathVar(r, "realm"), pathVar(r, "id")
	var rep struct {
		Slug, Name, Description string
		Enabled                 bool
		Domains                 []struct {
			Name     string `json:"name"`
			Verified bool   `json:"verified"`
		} `json:"domains"`
	}
	if err := c.call(r, http.MethodGet, apiOne(realm, orgKind, slug, ""), nil, &rep); err != nil {
		return err
	}
	var members []map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, orgKind, slug, "/members"), nil, &members); err != nil {
		return err
	}
	var invitations []map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, orgKind, slug, "/invitations"), nil, &invitations); err != nil {
		return err
	}
	self := one(realm, orgKind, slug, "")
	write := c.can(authz.OrgsWrite)
	d := pages.Detail{Back: realmPath(realm, "/"+orgKind), Facts: []pages.Fact{{Label: "console.field.slug", Value: rep.Slug},
		{Label: "console.field.name", Value: rep.Name}, {Label: "console.field.description", Value: rep.Description},
		{Label: "console.field.enabled", Value: cell(rep.Enabled)}}}

	ms := pages.Section{ID: "members", Title: "console.org.members",
		Columns: []string{"console.field.username", "console.field.email", "console.field.role"}}
	for _, m := range members {
		row := pages.Row{Name: cell(m["username"]), Cells: []string{cell(m["username"]), cell(m["email"]), cell(m["role"])}}
		if write {
			row.Buttons = []pages.Button{dangerLink(self+"/members/"+url.PathEscape(cell(m["id"]))+"/remove", "console.org.remove")}
		}
		ms.Rows = append(ms.Rows, row)
	}
	inv := pages.Section{ID: "invitations", Title: "console.org.invitations", Once: ex.link,
		Columns: []string{"console.field.email", "console.field.role", "console.org.expires"}}
	for _, i := range invitations {
		row := pages.Row{Name: cell(i["email"]), Cells: []string{cell(i["email"]), cell(i["role"]), when(i["expiresTimestamp"])}}
		if write {
			row.Buttons = []pages.Button{dangerLink(self+"/invitations/"+url.PathEscape(cell(i["id"]))+"/revoke", "console.org.revoke")}
		}
		inv.Rows = append(inv.Rows, row)
	}
	ds := pages.Section{ID: "domains", Title: "console.org.domains", Facts: ex.record,
		Columns: []string{"console.field.domain", "console.org.verified"}}
	var pending []string
	for _, dom := range rep.Domains {
		ds.Rows = append(ds.Rows, pages.Row{Name: dom.Name, Cells: []string{dom.Name, cell(dom.Verified)}})
		if !dom.Verified {
			pending = append(pending, dom.Name)
		}
	}
	if len(ex.record) > 0 {
		ds.Note = "console.org.recordNote"
	}
	if write {
		role := pages.FieldSpec{Name: "role", Kind: "select", Options: orgRoles}
		ms.Forms = []pages.ActionForm{st.fill(pages.ActionForm{ID: "member", Action: self + "/members",
			Fields: []pages.FieldSpec{text("username", true), role}, Button: "console.org.addMember"})}
		inv.Forms = []pages.ActionForm{st.fill(pages.ActionForm{ID: "invite", Action: self + "/invitations",
			Fields: []pages.FieldSpec{{Name: "email", Kind: "email", Required: true}, role}, Button: "console.org.invite"})}
		ds.Forms = []pages.ActionForm{st.fill(pages.ActionForm{ID: "domain", Action: self + "/domains",
			Fields: []pages.FieldSpec{text("domain", true)}, Button: "console.org.addDomain"})}
		if len(pending) > 0 {
			choose := []pages.FieldSpec{{Name: "domain", Kind: "select", Options: pending}}
			ds.Forms = append(ds.Forms,
				st.fill(pages.ActionForm{ID: "record", Action: self + "/domains/record", Fields: choose,
					Button: "console.org.showRecord", Secondary: true}),
				st.fill(pages.ActionForm{ID: "verify", Action: self + "/domains/verify", Fields: choose,
					Button: "console.org.verify"}))
		}
	}
	d.Sections = []pages.Section{ms, inv, ds}
	return c.render(w, r, status, pages.DetailPage(c.nav(r, orgKind, "console.org.title", rep.Name), d))
}

// userID is the ID of the realm's user of a username, "" for none.
func (c *Ctx) userID(r *http.Request, realm, username string) (string, error) {
	var found struct {
		Users []struct {
			ID string `json:"id"`
		} `json:"users"`
	}
	q := url.Values{"username": {username}, "exact": {"true"}, "skip": {"0"}, "limit": {"2"}}
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/users?"+q.Encode()), nil, &found); err != nil {
		return "", err
	}
	if len(found.Users) != 1 {
		return "", nil
	}
	return found.Users[0].ID, nil
}

// AddOrgMember adds a user of the realm, named by username, as a member.
func (s *Service) AddOrgMember(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, slug := pathVar(r, "realm"), pathVar(r, "id")
	username := strings.TrimSpace(r.PostForm.Get("username"))
	id := ""
	if username != "" {
		var err error
		if id, err = c.userID(r, realm, username); err != nil {
			return err
		}
	}
	if id == "" {
		return s.orgPage(w, r, c, http.StatusUnprocessableEntity, state{form: "member", values: formValues(r),
			f: pages.Form{Errors: map[string]string{"username": "console.org.noSuchUser"}}})
	}
	body := map[string]any{"userId": id, "role": r.PostForm.Get("role")}
	return c.submit(w, r, http.MethodPost, apiOne(realm, orgKind, slug, "/members"), body, "member", []string{"role"},
		one(realm, orgKind, slug, ""), "console.done.orgMemberAdded", s.orgPage)
}

// ConfirmRemoveOrgMember asks before a member is removed.
func (s *Service) ConfirmRemoveOrgMember(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return orgMemberRemoval.confirm(w, r, c)
}

// RemoveOrgMember removes a member.
func (s *Service) RemoveOrgMember(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return orgMemberRemoval.make(w, r, c)
}

// InviteToOrg invites an address, and shows the invitation's link once.
func (s *Service) InviteToOrg(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, slug := pathVar(r, "realm"), pathVar(r, "id")
	body := map[string]any{"email": strings.TrimSpace(r.PostForm.Get("email")), "role": r.PostForm.Get("role")}
	var created map[string]any
	err := c.call(r, http.MethodPost, apiOne(realm, orgKind, slug, "/invitations"), body, &created)
	if err != nil {
		f, ok := formFailure(err, "email", "role")
		if !ok {
			return err
		}
		return s.orgPage(w, r, c, http.StatusUnprocessableEntity, state{form: "invite", f: f, values: formValues(r)})
	}
	r.URL.RawQuery = url.Values{"done": {"console.done.invited"}}.Encode()
	return s.orgPageWith(w, r, c, http.StatusCreated, state{},
		orgExtra{link: &pages.Fact{Label: "console.org.link", Value: cell(created["link"])}})
}

// ConfirmRevokeOrgInvitation asks before an invitation is revoked.
func (s *Service) ConfirmRevokeOrgInvitation(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return orgInvitationRevocation.confirm(w, r, c)
}

// RevokeOrgInvitation revokes an invitation: its link stops working.
func (s *Service) RevokeOrgInvitation(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return orgInvitationRevocation.make(w, r, c)
}

// AddOrgDomain adds a domain, not verified, to the organization's.
func (s *Service) AddOrgDomain(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, slug := pathVar(r, "realm"), pathVar(r, "id")
	var rep struct {
		Domains []map[string]any `json:"domains"`
	}
	if err := c.call(r, http.MethodGet, apiOne(realm, orgKind, slug, ""), nil, &rep); err != nil {
		return err
	}
	domains := append(rep.Domains, map[string]any{"name": strings.TrimSpace(r.PostForm.Get("domain"))})
	err := c.call(r, http.MethodPut, apiOne(realm, orgKind, slug, ""), map[string]any{"domains": domains}, nil)
	if err == nil {
		redirect(w, r, one(realm, orgKind, slug, ""), "console.done.domainAdded")
		return nil
	}
	f, ok := formFailure(err, "domains", "domain")
	if !ok {
		return err
	}
	if msg, ok := f.Errors["domains"]; ok {
		// The new domain is the list's last: its message is the input's.
		delete(f.Errors, "domains")
		f.Errors["domain"] = msg
	}
	return s.orgPage(w, r, c, http.StatusUnprocessableEntity, state{form: "domain", f: f, values: formValues(r)})
}

// ShowOrgDomainRecord starts a domain's verification and shows the DNS
// record to publish.
func (s *Service) ShowOrgDomainRecord(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, slug := pathVar(r, "realm"), pathVar(r, "id")
	var rec map[string]any
	err := c.call(r, http.MethodPost, apiOne(realm, orgKind, slug, "/verify-domain/initiate"),
		map[string]any{"domain": r.PostForm.Get("domain")}, &rec)
	if err != nil {
		f, ok := formFailure(err, "domain")
		if !ok {
			return err
		}
		return s.orgPage(w, r, c, http.StatusUnprocessableEntity, state{form: "record", f: f, values: formValues(r)})
	}
	return s.orgPageWith(w, r, c, http.StatusOK, state{}, orgExtra{record: []pages.Fact{
		{Label: "console.field.domain", Value: cell(rec["domain"])}, {Label: "console.org.recordName", Value: cell(rec["recordName"])},
		{Label: "console.org.recordType", Value: cell(rec["recordType"])}, {Label: "console.org.recordValue", Value: cell(rec["recordValue"])}}})
}

// VerifyOrgDomain looks the domain's record up; a record not found yet
// is a message at the domain's input.
func (s *Service) VerifyOrgDomain(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, slug := pathVar(r, "realm"), pathVar(r, "id")
	return c.submit(w, r, http.MethodPost, apiOne(realm, orgKind, slug, "/verify-domain"),
		map[string]any{"domain": r.PostForm.Get("domain")}, "verify", []string{"domain"},
		one(realm, orgKind, slug, ""), "console.done.domainVerified", s.orgPage)
}
