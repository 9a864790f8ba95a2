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
