package orgs_test

import (
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/orgs"
)

const orgsPath = "/admin/realms/acme/organizations"

// newServer starts the server with the realm acme.
func newServer(t *testing.T) *apptest.Server {
	t.Helper()
	s := realapp.New(t)
	s.CreateRealm("acme")
	return s
}

// createOrg creates an organization from body and returns it as the API
// shows it.
func createOrg(s *apptest.Server, body map[string]any) orgs.OrganizationRep {
	s.T.Helper()
	r := s.Admin(http.MethodPost, orgsPath, body)
	apptest.MustStatus(s.T, r, http.StatusCreated)
	var rep orgs.OrganizationRep
	r.Decode(s.T, &rep)
	return rep
}

// getOrg reads an organization by slug.
func getOrg(s *apptest.Server, slug string) orgs.OrganizationRep {
	s.T.Helper()
	r := s.Admin(http.MethodGet, orgsPath+"/"+slug, nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var rep orgs.OrganizationRep
	r.Decode(s.T, &rep)
	return rep
}

// slugs lists the slugs of a listing's answer.
func slugs(s *apptest.Server, query string) []string {
	s.T.Helper()
	r := s.Admin(http.MethodGet, orgsPath+query, nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var list []orgs.OrganizationRep
	r.Decode(s.T, &list)
	out := []string{}
	for _, o := range list {
		out = append(out, o.Slug)
	}
	return out
}
