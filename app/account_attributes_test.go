package app

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/account"
)

// accountAttributesEnv is the account environment with a schema: department
// (a required enum), age (a number in tokens), tags (multivalued) and
// nickname (in tokens), which alice edits, and internal, which only an
// administrator sets; alice holds values of each. The profile scope has the
// custom attributes mapper. It returns the attribute IDs by name.
func accountAttributesEnv(t *testing.T) (*accountEnv, map[string]string) {
	t.Helper()
	e := newAccountEnv(t)
	r := e.admin(http.MethodPut, "/admin/realms/acme/custom-attributes", map[string]any{"attributes": []map[string]any{
		{"name": "department", "displayName": "Department", "type": "enum", "options": []string{"sales", "engineering"},
			"required": true, "editableBy": "user"},
		{"name": "age", "displayName": "Age", "type": "number", "editableBy": "user", "inTokens": true},
		{"name": "tags", "displayName": "Tags", "type": "string", "multivalued": true, "editableBy": "user"},
		{"name": "nickname", "displayName": "Nickname", "type": "string", "editableBy": "user", "inTokens": true},
		{"name": "internal", "displayName": "Cost centre", "type": "string"},
	}})
	mustStatus(t, r, http.StatusOK)
	var schema []struct{ ID, Name string }
	r.decode(t, &schema)
	ids := map[string]string{}
	for _, a := range schema {
		ids[a.Name] = a.ID
	}
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/attributes", map[string]any{
		"department": "sales", "age": 30, "tags": []string{"red", "blue"}, "nickname": "Al", "internal": "CC-1"}), http.StatusOK)
	var scopes []struct{ ID, Name string }
	e.admin(http.MethodGet, "/admin/realms/acme/client-scopes", nil).decode(t, &scopes)
	for _, sc := range scopes {
		if sc.Name == "profile" {
			mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/client-scopes/"+sc.ID+"/protocol-mappers",
				map[string]any{"name": "custom attributes", "mapperType": "idenplane-custom-attributes-mapper"}), http.StatusCreated)
		}
	}
	return e, ids
}

// The profile form shows the attributes alice edits as typed fields and
// the administrator's read-only, refuses bad values all at once, and saves
// good ones, leaving what only an administrator sets alone.
func TestAccountPagesCustomAttributes(t *testing.T) {
	e, _ := accountAttributesEnv(t)
	b := e.browser()
	p := e.signIn(b)
	mustPage(t, p, http.StatusOK,
		`<select id="attr-department" name="attributes.department" required>`, `<option value="sales" selected>sales</option>`,
		`id="attr-age" name="attributes.age" type="text" value="30"`,
		`id="attr-tags" name="attributes.tags" type="text" value="red"`,
		`id="attr-tags-2" name="attributes.tags" type="text" value="blue"`,
		`<label for="attr-tags-3">Tags (3)</label>`,
		"<dt>Cost centre</dt><dd>CC-1</dd>", "Set by the administrator")
	if strings.Contains(string(p.body), `name="attributes.internal"`) {
		t.Fatal("an attribute only an administrator sets is a field of the form")
	}
	stored := e.userAttributes(e.aliceID)

	for _, tc := range []struct {
		name string
		set  url.Values
		want map[string]string // field: message
	}{
		{"every fault at once", url.Values{"attributes.department": {"hr"}, "attributes.age": {"old"}},
			map[string]string{"attr-department": "Choose one of the options.", "attr-age": "Enter a number."}},
		{"required emptied", url.Values{"attributes.department": {""}},
			map[string]string{"attr-department": "This field is required."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := url.Values{}
			for k, v := range accountForm(t, p, "/profile").fields {
				values[k] = v
			}
			for k, v := range tc.set {
				values[k] = v
			}
			got := b.post(e.url+"/realms/acme/account/profile", values)
			if got.status != http.StatusBadRequest {
				t.Fatalf("status %d; body %s", got.status, got.body)
			}
			for id, msg := range tc.want {
				if !strings.Contains(string(got.body), `<span id="`+id+`-error" class="field-error">`+msg+`</span>`) {
					t.Errorf("no %q beside %s: %s", msg, id, got.body)
				}
			}
			if !reflect.DeepEqual(e.userAttributes(e.aliceID), stored) {
				t.Errorf("a refused form changed the attributes: %v", e.userAttributes(e.aliceID))
			}
		})
	}

	// Saved: the values alice edits, a tag added and one emptied; a forged
	// field for the administrator's attribute changes nothing.
	values := url.Values{}
	for k, v := range accountForm(t, p, "/profile").fields {
		values[k] = v
	}
	values["attributes.department"] = []string{"engineering"}
	values["attributes.age"] = []string{"31.50"}
	values["attributes.tags"] = []string{"red", "", "green"}
	values["attributes.internal"] = []string{"forged"}
	got := b.post(e.url+"/realms/acme/account/profile", values)
	mustRedirectTo(t, got, http.StatusSeeOther, accountTestHome+"?done=profile")
	want := map[string][]string{"department": {"engineering"}, "age": {"31.5"}, "tags": {"red", "green"},
		"nickname": {"Al"}, "internal": {"CC-1"}}
	if got := e.userAttributes(e.aliceID); !reflect.DeepEqual(got, want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
}

// An attribute removed from the schema keeps its values, shown nowhere:
// neither by the admin API, the account (JSON or page), nor in tokens;
// added again, it shows again.
func TestCustomAttributeRemovedFromSchema(t *testing.T) {
	e, ids := accountAttributesEnv(t)
	type look struct {
		admin   []string
		account []string
		token   any
		page    bool
	}
	looks := func() look {
		t.Helper()
		tok := e.token("alice", codeflowPassword)
		var acct account.AccountRep
		r := e.api(http.MethodGet, "", tok.AccessToken, nil)
		mustStatus(t, r, http.StatusOK)
		r.decode(t, &acct)
		_, claims := jwtParts(t, tok.AccessToken)
		page := e.signIn(e.browser())
		return look{admin: e.userAttributes(e.aliceID)["nickname"], account: acct.CustomAttributes["nickname"],
			token: claims["nickname"], page: strings.Contains(string(page.body), `value="Al"`)}
	}
	if got, want := looks(), (look{[]string{"Al"}, []string{"Al"}, "Al", true}); !reflect.DeepEqual(got, want) {
		t.Fatalf("before: %+v, want %+v", got, want)
	}
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/custom-attributes/"+ids["nickname"], nil), http.StatusNoContent)
	if got := looks(); !reflect.DeepEqual(got, look{}) {
		t.Fatalf("after removing nickname from the schema: %+v, want it nowhere", got)
	}
	// The account page's form, saved meanwhile, leaves the hidden value
	// (the test's form reader skips selects: the department is set).
	b := e.browser()
	p := e.signIn(b)
	mustRedirectTo(t, accountSubmit(b, p, "/profile", map[string]string{"attributes.department": "sales"}),
		http.StatusSeeOther, accountTestHome+"?done=profile")
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/custom-attributes",
		map[string]any{"name": "nickname", "type": "string", "editableBy": "user", "inTokens": true}), http.StatusCreated)
	if got, want := looks(), (look{[]string{"Al"}, []string{"Al"}, "Al", true}); !reflect.DeepEqual(got, want) {
		t.Fatalf("added again: %+v, want %+v", got, want)
	}
}
