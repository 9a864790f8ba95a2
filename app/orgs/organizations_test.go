package orgs_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/orgs"
)

func TestCreateOrganization(t *testing.T) {
	s := newServer(t)
	r := s.Admin(http.MethodPost, orgsPath, map[string]any{"slug": "acme-corp", "name": " Acme Corp ", "description": "Widgets",
		"attributes": map[string][]string{"tier": {"gold"}}, "domains": []map[string]any{{"name": "Acme.Example."}, {"name": "acme.test"}}})
	apptest.MustStatus(t, r, http.StatusCreated)
	if loc := r.Header.Get("Location"); loc != apptest.BaseURL+orgsPath+"/acme-corp" {
		t.Errorf("Location %q", loc)
	}
	got := getOrg(s, "acme-corp")
	want := orgs.OrganizationRep{ID: got.ID, Slug: "acme-corp", Name: "Acme Corp", Description: "Widgets", Enabled: true,
		Attributes: map[string][]string{"tier": {"gold"}}, CreatedTimestamp: got.CreatedTimestamp,
		Domains: []orgs.DomainRep{{Name: "acme.example"}, {Name: "acme.test"}}}
	if got.ID == "" || got.CreatedTimestamp == 0 || !equalRep(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}

	// Without a slug, the name gives one.
	if o := createOrg(s, map[string]any{"name": "Big  Bank & Co."}); o.Slug != "big-bank-co" || !o.Enabled {
		t.Errorf("derived slug %q enabled %v", o.Slug, o.Enabled)
	}
}

func equalRep(a, b orgs.OrganizationRep) bool {
	if a.ID != b.ID || a.Slug != b.Slug || a.Name != b.Name || a.Description != b.Description || a.Enabled != b.Enabled ||
		a.CreatedTimestamp != b.CreatedTimestamp || !slices.Equal(a.Domains, b.Domains) || len(a.Attributes) != len(b.Attributes) {
		return false
	}
	for k, v := range a.Attributes {
		if !slices.Equal(v, b.Attributes[k]) {
			return false
		}
	}
	return true
}

func TestCreateOrganizationBadInput(t *testing.T) {
	s := newServer(t)
	createOrg(s, map[string]any{"slug": "taken", "name": "Taken"})
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"duplicate slug", map[string]any{"slug": "taken", "name": "Other"}, 409, "conflict", "slug"},
		{"no name", map[string]any{"slug": "x"}, 400, "invalid_field", "name"},
		{"blank name", map[string]any{"slug": "x", "name": "  "}, 400, "invalid_field", "name"},
		{"control character in name", map[string]any{"slug": "x", "name": "a\u0007b"}, 400, "invalid_field", "name"},
		{"uppercase slug", map[string]any{"slug": "Acme", "name": "Acme"}, 400, "invalid_field", "slug"},
		{"slug with a slash", map[string]any{"slug": "a/b", "name": "Acme"}, 400, "invalid_field", "slug"},
		{"slug ending in a dash", map[string]any{"slug": "acme-", "name": "Acme"}, 400, "invalid_field", "slug"},
		{"empty slug", map[string]any{"slug": "", "name": "Acme"}, 400, "invalid_field", "slug"},
		{"long slug", map[string]any{"slug": strings.Repeat("a", 64), "name": "Acme"}, 400, "invalid_field", "slug"},
		{"name without letters and no slug", map[string]any{"name": "%%%"}, 400, "invalid_field", "slug"},
		{"domain that is an address", map[string]any{"slug": "x", "name": "X", "domains": []any{map[string]any{"name": "10.0.0.1"}}}, 400, "invalid_field", "domains[0].name"},
		{"domain of one label", map[string]any{"slug": "x", "name": "X", "domains": []any{map[string]any{"name": "localhost"}}}, 400, "invalid_field", "domains[0].name"},
		{"domain with a space", map[string]any{"slug": "x", "name": "X", "domains": []any{map[string]any{"name": "a b.test"}}}, 400, "invalid_field", "domains[0].name"},
		{"domain twice", map[string]any{"slug": "x", "name": "X", "domains": []any{map[string]any{"name": "a.test"}, map[string]any{"name": "A.test"}}}, 400, "invalid_field", "domains[1].name"},
		{"domain claimed verified", map[string]any{"slug": "x", "name": "X", "domains": []any{map[string]any{"name": "a.test", "verified": true}}}, 400, "invalid_field", "domains[0].verified"},
		{"domains not a list", map[string]any{"slug": "x", "name": "X", "domains": "a.test"}, 400, "invalid_field", "domains"},
		{"attribute values not a list", map[string]any{"slug": "x", "name": "X", "attributes": map[string]any{"a": "b"}}, 400, "invalid_field", "attributes"},
		{"unknown field", map[string]any{"slug": "x", "name": "X", "alias": "x"}, 400, "unknown_field", "alias"},
		{"not JSON", `{"slug":`, 400, "invalid_json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, orgsPath, tc.body), tc.status, tc.code, tc.field)
		})
	}
	if got := slugs(s, ""); !slices.Equal(got, []string{"taken"}) {
		t.Errorf("organizations after refused creations: %v", got)
	}
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/nope/organizations", map[string]any{"name": "X"}), 404, "not_found", "")
}

func TestListOrganizations(t *testing.T) {
	s := newServer(t)
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "domains": []any{map[string]any{"name": "acme.test"}}})
	createOrg(s, map[string]any{"slug": "bank", "name": "Big Bank", "domains": []any{map[string]any{"name": "bigbank.example"}}})
	createOrg(s, map[string]any{"slug": "cafe", "name": "Café 100%", "domains": []any{map[string]any{"name": "cafe.test"}}})
	s.CreateRealm("other")
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/other/organizations", map[string]any{"slug": "acme2", "name": "Acme Two"}), http.StatusCreated)

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"acme", "bank", "cafe"}},
		{"?search=BIG", []string{"bank"}},
		{"?search=.test", []string{"acme", "cafe"}},
		{"?search=acme", []string{"acme"}},
		{"?search=100%25", []string{"cafe"}},
		{"?search=_", []string{}},
		{"?search=acme.test&exact=true", []string{"acme"}},
		{"?search=acme.tes&exact=true", []string{}},
		{"?search=big%20bank&exact=true", []string{"bank"}},
		{"?first=1&max=1", []string{"bank"}},
		{"?first=5", []string{}},
	} {
		if got := slugs(s, tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	for _, tc := range []struct{ query, field string }{
		{"?first=-1", "first"}, {"?max=0", "max"}, {"?max=x", "max"}, {"?exact=yes", "exact"},
		{"?search=" + strings.Repeat("a", 256), "search"},
	} {
		apptest.MustError(t, s.Admin(http.MethodGet, orgsPath+tc.query, nil), 400, "invalid_parameter", tc.field)
	}
}

func TestUpdateOrganization(t *testing.T) {
	s := newServer(t)
	o := createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "description": "old",
		"domains": []any{map[string]any{"name": "acme.test"}}})

	// A GET's answer sent back, changed, is an update.
	body := map[string]any{"id": o.ID, "slug": "acme", "createdTimestamp": o.CreatedTimestamp, "name": "Acme Inc",
		"description": "new", "enabled": false, "attributes": map[string][]string{"a": {"1", "2"}},
		"domains": []any{map[string]any{"name": "acme.example", "verified": false}}}
	r := s.Admin(http.MethodPut, orgsPath+"/acme", body)
	apptest.MustStatus(t, r, http.StatusOK)
	got := getOrg(s, "acme")
	want := orgs.OrganizationRep{ID: o.ID, Slug: "acme", Name: "Acme Inc", Description: "new", Enabled: false,
		Attributes: map[string][]string{"a": {"1", "2"}}, Domains: []orgs.DomainRep{{Name: "acme.example"}}, CreatedTimestamp: o.CreatedTimestamp}
	if !equalRep(got, want) {
		t.Errorf("after PUT %+v, want %+v", got, want)
	}
	// A PUT that names only some fields keeps the others.
	apptest.MustStatus(t, s.Admin(http.MethodPut, orgsPath+"/acme", map[string]any{"description": "newer"}), http.StatusOK)
	if got := getOrg(s, "acme"); got.Name != "Acme Inc" || got.Description != "newer" || len(got.Domains) != 1 {
		t.Errorf("after a partial PUT: %+v", got)
	}

	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"slug changed", map[string]any{"slug": "other"}, 400, "invalid_field", "slug"},
		{"id changed", map[string]any{"id": "x"}, 400, "invalid_field", "id"},
		{"created changed", map[string]any{"createdTimestamp": 1}, 400, "invalid_field", "createdTimestamp"},
		{"empty name", map[string]any{"name": ""}, 400, "invalid_field", "name"},
		{"enabled not a boolean", map[string]any{"enabled": "no"}, 400, "invalid_field", "enabled"},
		{"bad domain", map[string]any{"domains": []any{map[string]any{"name": "-x.test"}}}, 400, "invalid_field", "domains[0].name"},
		{"domain claimed verified", map[string]any{"domains": []any{map[string]any{"name": "acme.example", "verified": true}}}, 400, "invalid_field", "domains[0].verified"},
		{"unknown field", map[string]any{"members": []any{}}, 400, "unknown_field", "members"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPut, orgsPath+"/acme", tc.body), tc.status, tc.code, tc.field)
		})
	}
	if got := getOrg(s, "acme"); got.Name != "Acme Inc" || got.Description != "newer" {
		t.Errorf("refused updates changed it: %+v", got)
	}
	apptest.MustError(t, s.Admin(http.MethodPut, orgsPath+"/nope", map[string]any{"name": "x"}), 404, "not_found", "")
}

func TestDeleteOrganization(t *testing.T) {
	s := newServer(t)
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "domains": []any{map[string]any{"name": "acme.test"}}})
	apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/acme", nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodGet, orgsPath+"/acme", nil), 404, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodDelete, orgsPath+"/acme", nil), 404, "not_found", "")
	// The slug and the domain are free again.
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "domains": []any{map[string]any{"name": "acme.test"}}})
}
