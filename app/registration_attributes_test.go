package app

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// attributesEnv is the code flow's realm open to registration, with a
// schema of custom attributes: department (a required enum), age (a number
// from 18 to 130), newsletter (a boolean), birthday (a date) and badge (a
// pattern), all on registration and badge editable by the user, and
// internal (required, admin only, not on registration).
func attributesEnv(t *testing.T) (*codeflowEnv, *oauth2.Config) {
	t.Helper()
	e := newCodeflowEnv(t)
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"registrationAllowed": true}), http.StatusOK)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/custom-attributes", map[string]any{"attributes": []map[string]any{
		{"name": "department", "displayName": "Department", "type": "enum", "options": []string{"sales", "engineering"},
			"required": true, "onRegistration": true, "editableBy": "user"},
		{"name": "age", "displayName": "Age", "type": "number", "validation": map[string]any{"min": 18, "max": 130},
			"onRegistration": true, "editableBy": "user", "inTokens": true},
		{"name": "newsletter", "displayName": "Send me the newsletter", "type": "boolean", "onRegistration": true, "editableBy": "user"},
		{"name": "birthday", "displayName": "Birthday", "type": "date", "onRegistration": true},
		{"name": "badge", "displayName": "Badge", "type": "string", "validation": map[string]any{"pattern": "[A-Z]{3}-[0-9]{3}"},
			"onRegistration": true, "editableBy": "user"},
		{"name": "internal", "displayName": "Cost centre", "type": "string", "required": true},
	}}), http.StatusOK)
	return e, e.oauth2Config("web", e.client("web", nil), "openid")
}

func attributesValid(username string) map[string]string {
	return map[string]string{"username": username, "email": username + "@example.test", "password": registrationPassword,
		"confirm": registrationPassword, "attributes.department": "engineering", "attributes.age": "42.0",
		"attributes.newsletter": "true", "attributes.birthday": "1990-05-17", "attributes.badge": "ABC-123"}
}

// userAttributes is a user's custom attributes by the admin API.
func (e *codeflowEnv) userAttributes(id string) map[string][]string {
	e.t.Helper()
	var out map[string][]string
	r := e.admin(http.MethodGet, "/admin/realms/acme/users/"+id+"/attributes", nil)
	mustStatus(e.t, r, http.StatusOK)
	r.decode(e.t, &out)
	return out
}

// The register page shows the attributes marked for registration as typed
// fields, refuses a form with every fault marked at once, and registers a
// good one with its values normalized.
func TestRegisterPageCustomAttributes(t *testing.T) {
	e, c := attributesEnv(t)
	b := e.browser()
	page := registerPageOpen(t, e, b, c.AuthCodeURL("reg"))
	body := string(page.body)
	for _, want := range []string{
		`<label for="attr-department">Department</label>`, `<select id="attr-department" name="attributes.department" required>`,
		`<option value="engineering">engineering</option>`,
		`<label for="attr-age">Age</label>`, `inputmode="decimal"`,
		`id="attr-newsletter" name="attributes.newsletter" type="checkbox" value="true"`,
		`id="attr-birthday" name="attributes.birthday" type="date"`,
		`<label for="attr-badge">Badge</label>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("register page lacks %s", want)
		}
	}
	if strings.Contains(body, "internal") || strings.Contains(body, "Cost centre") {
		t.Error("an attribute not on registration is on the page")
	}

	for _, tc := range []struct {
		name string
		set  map[string]string
		want map[string]string // field: message shown beside it
	}{
		{"every fault at once", map[string]string{"attributes.department": "hr", "attributes.age": "12",
			"attributes.birthday": "17/05/1990", "attributes.badge": "abc", "attributes.newsletter": "maybe"}, map[string]string{
			"attr-department": "Choose one of the options.", "attr-age": "This number is outside the allowed range.",
			"attr-birthday": "Enter a date as YYYY-MM-DD.", "attr-badge": "This value does not have the expected format.",
			"attr-newsletter": "Answer yes or no."}},
		{"required missing", map[string]string{"attributes.department": ""}, map[string]string{
			"attr-department": "This field is required."}},
		{"not a number", map[string]string{"attributes.age": "old"}, map[string]string{"attr-age": "Enter a number."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := attributesValid("nina")
			for k, v := range tc.set {
				set[k] = v
			}
			got := b.submit(page, set)
			if got.status != http.StatusBadRequest {
				t.Fatalf("status %d; body %s", got.status, got.body)
			}
			for id, msg := range tc.want {
				if !strings.Contains(string(got.body), `<span id="`+id+`-error" class="field-error">`+msg+`</span>`) {
					t.Errorf("no %q beside %s", msg, id)
				}
			}
			if n := strings.Count(string(got.body), `class="field-error"`); n != len(tc.want) {
				t.Errorf("%d field errors shown, want %d: %s", n, len(tc.want), got.body)
			}
			if strings.Contains(string(got.body), registrationPassword) {
				t.Error("the password came back")
			}
			if _, err := e.store.GetUserByUsername(t.Context(), e.realmID(), "nina"); err == nil {
				t.Fatal("a refused form registered the user")
			}
		})
	}

	// A good form: signed in, the code issued, the values kept normalized;
	// the required admin-only attribute does not stand in the way.
	back := e.redirectedBack(b.submit(page, attributesValid("nina")))
	if back.Get("code") == "" {
		t.Fatalf("redirect back %v", back)
	}
	u := registerPageUser(t, e, "nina")
	want := map[string][]string{"department": {"engineering"}, "age": {"42"}, "newsletter": {"true"},
		"birthday": {"1990-05-17"}, "badge": {"ABC-123"}}
	if got := e.userAttributes(u.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
}
