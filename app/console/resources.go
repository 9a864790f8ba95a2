package console

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// Resource is a kind of a realm's resources the console lists, creates
// and deletes with the same few pages: the API's collection, the field
// that names one in its path, the columns shown and the fields of its
// create form. Their own pages (composites, members, mappers, sync) are
// the API's until the console has them.
type Resource struct {
	Path    string // under /console/realms/{realm}/ and, unless API says otherwise, /admin/realms/{realm}/
	API     string // the collection under /admin/realms/{realm}; "" for Path
	Key     string // the field of a representation that names it in its path
	Columns []string
	Fields  []pages.FieldSpec
	Secret  string // the field of the create answer shown once; "" for none
	// Detail says the kind has a page of each one, its row's link. A
	// kind without Fields has a create page of its own. Tree names the
	// field of a representation holding its children, shown nested under
	// it ("" for a flat list).
	Detail bool
	Tree   string
	Read   authz.Permission
	Write  authz.Permission
}

func (res Resource) api() string {
	if res.API != "" {
		return res.API
	}
	return "/" + res.Path
}

func text(name string, required bool) pages.FieldSpec {
	return pages.FieldSpec{Name: name, Kind: "text", Required: required}
}

// Resources are the kinds the generic pages serve.
var Resources = []Resource{
	{Path: "roles", Key: "name", Columns: []string{"name", "description", "composite"},
		Fields: []pages.FieldSpec{text("name", true), text("description", false)}, Detail: true,
		Read: authz.RolesRead, Write: authz.RolesWrite},
	{Path: "groups", Key: "id", Columns: []string{"name", "path"},
		Fields: []pages.FieldSpec{text("name", true), text("description", false)}, Detail: true, Tree: "subGroups",
		Read: authz.GroupsRead, Write: authz.GroupsWrite},
	{Path: "client-scopes", Key: "id", Columns: []string{"name", "description", "protocol"},
		Fields: []pages.FieldSpec{text("name", true), text("description", false),
			{Name: "protocol", Kind: "select", Options: []string{"openid-connect", "saml"}}},
		Detail: true, Read: authz.ScopesRead, Write: authz.ScopesWrite},
	{Path: "identity-providers", Key: "alias", Columns: []string{"alias", "displayName", "providerType", "enabled"},
		Detail: true, Read: authz.IdentityProvidersRead, Write: authz.IdentityProvidersWrite},
	{Path: "saml-service-providers", Key: "id", Columns: []string{"entityId", "name", "acsUrl", "enabled"},
		Detail: true, Read: authz.ClientsRead, Write: authz.ClientsWrite},
	{Path: "user-federation", Key: "id", Columns: []string{"name", "connectionUrl", "enabled"},
		Fields: []pages.FieldSpec{text("name", true), {Name: "providerType", Kind: "select", Options: []string{"ldap"}},
			{Name: "connectionUrl", Kind: "url", Required: true}, text("usersDn", true),
			text("bindDn", false), {Name: "bindCredential", Kind: "password"}, {Name: "enabled", Kind: "check"}},
		Detail: true, Read: authz.RealmRead, Write: authz.RealmWrite},
	{Path: "scim-tokens", API: "/scim/tokens", Key: "id", Columns: []string{"name", "status"},
		Fields: []pages.FieldSpec{text("name", true)}, Secret: "token", Read: authz.SCIMRead, Write: authz.SCIMWrite},
	{Path: "organizations", Key: "slug", Columns: []string{"slug", "name", "enabled"},
		Fields: []pages.FieldSpec{text("slug", true), text("name", true), text("description", false)},
		Detail: true, Read: authz.OrgsRead, Write: authz.OrgsWrite},
	{Path: "nhi", Key: "id", Columns: []string{"name", "kind", "state", "clientId"},
		Fields: []pages.FieldSpec{text("name", true), {Name: "kind", Kind: "select",
			Options: []string{"service", "workload", "device", "bot", "ai_agent"}}, text("description", false)},
		Detail: true, Read: authz.NHIRead, Write: authz.NHIWrite},
}

func (res Resource) title() string { return "console." + res.Path + ".title" }

func (res Resource) page(realm string) string { return realmPath(realm, "/"+res.Path) }

// cell shows a representation's field in a list.
func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprint(v)
	case bool:
		if v {
			return "✓"
		}
		return "–"
	}
	return fmt.Sprint(v)
}

// children are the representations of a tree's field of children.
func children(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// ResourceList lists a realm's resources of res's kind, sorted by the
// column ?sort names (the first one by default; ?desc=1 reverses it) and a
// page at a time (?first). A tree's children stay under their parent,
// sorted among themselves.
func (s *Service) ResourceList(res Resource) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		realm := pathVar(r, "realm")
		var list []map[string]any
		if err := c.call(r, http.MethodGet, adminRealm(realm, res.api()), nil, &list); err != nil {
			return err
		}
		q := r.URL.Query()
		l := pages.ResourceList{Columns: res.Columns, Sort: res.Columns[0], Desc: q.Get("desc") == "1", Base: r.URL.Path}
		if slices.Contains(res.Columns, q.Get("sort")) {
			l.Sort = q.Get("sort")
		}
		if c.can(res.Write) {
			l.New = res.page(realm) + "/new"
		}
		order := func(items []map[string]any) {
			slices.SortStableFunc(items, func(a, b map[string]any) int {
				n := compareCells(cell(a[l.Sort]), cell(b[l.Sort]))
				if l.Desc {
					return -n
				}
				return n
			})
		}
		var add func(items []map[string]any, depth int)
		add = func(items []map[string]any, depth int) {
			order(items)
			for _, item := range items {
				row := pages.ResourceRow{Name: cell(item[res.Columns[0]]), Depth: depth}
				for _, col := range res.Columns {
					row.Cells = append(row.Cells, cell(item[col]))
				}
				one := res.page(realm) + "/" + url.PathEscape(cell(item[res.Key]))
				if res.Detail {
					row.Href = one
				}
				if c.can(res.Write) {
					row.Delete = one + "/delete"
				}
				l.Rows = append(l.Rows, row)
				if res.Tree != "" {
					add(children(item[res.Tree]), depth+1)
				}
			}
		}
		order(list)
		first, _ := pageOf(r, 0)
		first = min(first, len(list))
		shown := list[first:min(first+listPageSize, len(list))]
		add(shown, 0)
		_, l.Pager = pageOf(r, len(shown))
		l.Pager.Total = len(list)
		if first+len(shown) >= len(list) {
			l.Pager.Next = ""
		}
		return c.render(w, r, http.StatusOK, pages.Resources(c.nav(r, res.Path, res.title()), l))
	}
}

// compareCells orders two cells as numbers when both are, else as text
// without regard to case.
func compareCells(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return cmp.Or(cmp.Compare(strings.ToLower(a), strings.ToLower(b)), cmp.Compare(a, b))
}

// NewResource shows the create form of res's kind.
func (s *Service) NewResource(res Resource) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		realm := pathVar(r, "realm")
		values := map[string]string{"enabled": "true"}
		return c.render(w, r, http.StatusOK, pages.NewResource(c.nav(r, res.Path, res.title()),
			pages.ResourceForm{Values: values, Fields: res.Fields, Action: res.page(realm) + "/new"}))
	}
}

// CreateResource creates one of res's kind with a POST to its collection;
// a secret in the answer is shown once.
func (s *Service) CreateResource(res Resource) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		realm := pathVar(r, "realm")
		body := map[string]any{}
		names := make([]string, 0, len(res.Fields))
		for _, f := range res.Fields {
			names = append(names, f.Name)
			switch v := strings.TrimSpace(r.PostForm.Get(f.Name)); {
			case f.Kind == "check":
				body[f.Name] = v == "true"
			case v != "":
				body[f.Name] = v
			}
		}
		var created map[string]any
		if err := c.call(r, http.MethodPost, adminRealm(realm, res.api()), body, &created); err != nil {
			f, ok := formFailure(err, names...)
			if !ok {
				return err
			}
			return c.render(w, r, http.StatusUnprocessableEntity, pages.NewResource(c.nav(r, res.Path, res.title()),
				pages.ResourceForm{Form: f, Values: formValues(r), Fields: res.Fields, Action: res.page(realm) + "/new"}))
		}
		if secret := cell(created[res.Secret]); res.Secret != "" && secret != "" {
			return c.render(w, r, http.StatusCreated, pages.SecretPage(c.nav(r, res.Path, "console.token.title"), pages.ClientSecret{
				ClientID: cell(created[res.Columns[0]]), Secret: secret, Done: "console.done.created", Label: "console.token.label"},
				res.page(realm)))
		}
		redirect(w, r, res.page(realm), "console.done.created")
		return nil
	}
}

// ConfirmDeleteResource asks before one of res's kind is deleted.
func (s *Service) ConfirmDeleteResource(res Resource) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		realm, id := pathVar(r, "realm"), pathVar(r, "id")
		return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, res.Path, "console.confirm.title"), pages.Confirm{
			Message: "console.resources.deleteConfirm", Args: []any{id}, Action: res.page(realm) + "/" + url.PathEscape(id) + "/delete",
			Cancel: res.page(realm), Button: "console.delete"}))
	}
}

// DeleteResource deletes one of res's kind.
func (s *Service) DeleteResource(res Resource) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		realm, id := pathVar(r, "realm"), pathVar(r, "id")
		if err := c.call(r, http.MethodDelete, adminRealm(realm, res.api()+"/"+url.PathEscape(id)), nil, nil); err != nil {
			return err
		}
		redirect(w, r, res.page(realm), "console.done.deleted")
		return nil
	}
}
