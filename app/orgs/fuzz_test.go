package orgs_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/orgs"
)

// fuzzAPIError fails unless r is a 4xx in the API's error shape.
func fuzzAPIError(t *testing.T, what string, r *apptest.Response) {
	t.Helper()
	var body httpx.ErrorBody
	if r.Status < 400 || r.Status >= 500 || json.Unmarshal(r.Body, &body) != nil || body.Error == "" || body.Description == "" {
		t.Fatalf("%s answered %d: %s", what, r.Status, r.Body)
	}
}

var fuzzSlug = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// FuzzCreateOrganization drives POST .../organizations with any body: a
// 201 whose organization reads back at its slug (a lowercase DNS label)
// with lowercase domains, or a 4xx in the API's shape.
func FuzzCreateOrganization(f *testing.F) {
	for _, seed := range []string{
		`{"slug":"acme","name":"Acme","domains":[{"name":"acme.test"}]}`,
		`{"name":"Big Bank & Co."}`,
		`{"name":"Ünïcödé GmbH","description":"x","enabled":false,"attributes":{"a":["b"]}}`,
		`{"slug":"a","name":"a","domains":[{"name":"A.Example."},{"name":"a.example"}]}`,
		`{"slug":"x","name":"x","domains":[{"name":"x.test","verified":true}]}`,
		`{"slug":"Acme","name":"x"}`, `{"name":"%%%"}`, `{"name":null}`, `[]`, `{"slug":`,
	} {
		f.Add(seed)
	}
	s := realapp.New(f)
	s.CreateRealm("acme")
	f.Fuzz(func(t *testing.T, body string) {
		s.T = t
		r := s.Admin(http.MethodPost, orgsPath, body)
		if r.Status != http.StatusCreated {
			fuzzAPIError(t, "POST "+orgsPath, r)
			return
		}
		var o orgs.OrganizationRep
		r.Decode(t, &o)
		if !fuzzSlug.MatchString(o.Slug) {
			t.Fatalf("slug %q", o.Slug)
		}
		for _, d := range o.Domains {
			if _, err := orgs.NormalizeDomain("d", d.Name); err != nil || d.Verified {
				t.Fatalf("domain %+v stored", d)
			}
		}
		apptest.MustStatus(t, s.Admin(http.MethodGet, orgsPath+"/"+o.Slug, nil), http.StatusOK)
		apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/"+o.Slug, nil), http.StatusNoContent)
	})
}

// FuzzSSOConnection drives POST and PUT .../sso-connections with any body:
// a 201 or 200 whose connection reads back as answered, naming a provider
// of the realm and the organization's domain or ANY, or a 4xx in the API's
// shape that leaves the connections as they were.
func FuzzSSOConnection(f *testing.F) {
	for _, seed := range []string{
		`{"identityProvider":"corp"}`,
		`{"identityProvider":"corp","domain":"ACME.test.","autoJoin":true,"hideOnLogin":true,"enabled":false}`,
		`{"identityProvider":"corp","domain":"ANY","redirectWhenEmailMatches":false}`,
		`{"identityProvider":"okta","domain":"other.test"}`, `{"identityProvider":"nope"}`, `{"domain":"any"}`,
		`{"identityProvider":"corp","id":"x"}`, `{"identityProvider":null}`, `[]`, `{"identityProvider":`,
	} {
		f.Add(seed)
	}
	s := realapp.New(f)
	s.CreateRealm("acme")
	createProvider(s, "corp")
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "domains": []any{map[string]any{"name": "acme.test"}}})
	existing := createConnection(s, "acme", map[string]any{"identityProvider": "corp"})
	path := ssoPath("acme")
	f.Fuzz(func(t *testing.T, body string) {
		s.T = t
		check := func(what string, r *apptest.Response, ok int) {
			t.Helper()
			if r.Status != ok {
				fuzzAPIError(t, what, r)
				return
			}
			var c orgs.SSOConnectionRep
			r.Decode(t, &c)
			if c.IdentityProvider != "corp" || c.Domain != "ANY" && c.Domain != "acme.test" {
				t.Fatalf("%s stored %+v", what, c)
			}
			got := s.Admin(http.MethodGet, path+"/"+c.ID, nil)
			apptest.MustStatus(t, got, http.StatusOK)
			var again orgs.SSOConnectionRep
			got.Decode(t, &again)
			if again != c {
				t.Fatalf("%s answered %+v, reads back %+v", what, c, again)
			}
		}
		// corp serves acme already: a create is refused, whatever it says.
		r := s.Admin(http.MethodPost, path, body)
		check("POST "+path, r, http.StatusCreated)
		if r.Status == http.StatusCreated {
			t.Fatalf("a second connection of corp: %s", r.Body)
		}
		check("PUT", s.Admin(http.MethodPut, path+"/"+existing.ID, body), http.StatusOK)
		apptest.MustStatus(t, s.Admin(http.MethodPut, path+"/"+existing.ID, existing), http.StatusOK)
	})
}
