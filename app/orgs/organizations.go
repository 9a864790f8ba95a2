package orgs

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

const defaultPageSize = 100

// OrganizationRep is an organization as the API shows it: Keycloak's
// OrganizationRepresentation with the slug in place of its alias.
type OrganizationRep struct {
	ID               string              `json:"id"`
	Slug             string              `json:"slug"`
	Name             string              `json:"name"`
	Description      string              `json:"description"`
	Enabled          bool                `json:"enabled"`
	Attributes       map[string][]string `json:"attributes"`
	Domains          []DomainRep         `json:"domains"`
	CreatedTimestamp int64               `json:"createdTimestamp"`
}

// DomainRep is an organization's domain. verified is the server's to set,
// through verify-domain: a body may repeat it for a domain already
// verified, never claim it for another.
type DomainRep struct {
	Name     string `json:"name"`
	Verified bool   `json:"verified"`
}

func toRep(o *store.Organization) OrganizationRep {
	attrs := o.Attributes
	if attrs == nil {
		attrs = map[string][]string{}
	}
	domains := make([]DomainRep, len(o.Domains))
	for i, d := range o.Domains {
		domains[i] = DomainRep{Name: d.Name, Verified: d.Verified}
	}
	return OrganizationRep{ID: o.ID, Slug: o.Slug, Name: o.Name, Description: o.Description, Enabled: o.Enabled,
		Attributes: attrs, Domains: domains, CreatedTimestamp: o.CreatedAt}
}

// OrganizationCreate is the body of POST .../organizations.
type OrganizationCreate struct {
	Slug        *string             `json:"slug"`
	Name        string              `json:"name"`
	Description string              `json:"description"`
	Enabled     *bool               `json:"enabled"`
	Attributes  map[string][]string `json:"attributes"`
	Domains     []DomainRep         `json:"domains"`
}

// applyDomains sets the domains a body names on o, refusing a verified
// flag on a domain o has not verified, and checks o.
func applyDomains(o *store.Organization, body []DomainRep) error {
	if len(body) > maxDomains {
		return apperr.Field("domains", "at most %d domains", maxDomains)
	}
	verified := map[string]bool{}
	for _, d := range o.Domains {
		verified[d.Name] = d.Verified
	}
	o.Domains = make([]store.OrgDomain, len(body))
	for i, d := range body {
		field := fmt.Sprintf("domains[%d]", i)
		name, err := NormalizeDomain(field+".name", d.Name)
		if err != nil {
			return err
		}
		if d.Verified && !verified[name] {
			return apperr.Field(field+".verified", "a domain is verified through verify-domain, not set")
		}
		o.Domains[i] = store.OrgDomain{Name: name}
	}
	return checkOrganization(o)
}

func orgConflict(err error, slug string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		switch ce.Column {
		case "slug":
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "slug",
				Message: "an organization with slug " + slug + " already exists", Cause: err}
		case "domain":
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "domains",
				Message: "a domain is verified by another organization of the realm", Cause: err}
		}
	}
	return err
}

// CreateOrganization answers POST .../organizations.
func (s *Service) CreateOrganization(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body OrganizationCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	o := &store.Organization{ID: uuid.NewString(), RealmID: realm.ID, Name: body.Name, Description: body.Description,
		Enabled: body.Enabled == nil || *body.Enabled, Attributes: body.Attributes, CreatedAt: s.deps.Now().UnixMilli()}
	if err := applyDomains(o, body.Domains); err != nil {
		return err
	}
	if body.Slug != nil {
		o.Slug = *body.Slug
	} else if o.Slug = slugFromName(o.Name); o.Slug == "" {
		return apperr.Field("slug", "is required when the name has no letters or digits")
	}
	if err := checkSlug(o.Slug); err != nil {
		return err
	}
	if err := s.deps.Store.CreateOrganization(r.Context(), o); err != nil {
		return orgConflict(err, o.Slug)
	}
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+o.Slug, toRep(o))
}

// ListOrganizations answers a page of the realm's organizations by name:
// search matches a part of the name or of a domain (exact=true: the whole
// of either), ignoring case.
func (s *Service) ListOrganizations(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	exact, err := httpx.BoolParam(q.Get("exact"), "exact")
	if err != nil {
		return err
	}
	search := q.Get("search")
	if len(search) > maxNameLength {
		return apperr.Parameter("search", "at most %d characters", maxNameLength)
	}
	return httpx.ListPage(w, r, defaultPageSize, func(first, max int) ([]*store.Organization, error) {
		return s.deps.Store.ListOrganizations(r.Context(), realm.ID,
			store.OrganizationQuery{Search: search, Exact: exact, First: first, Max: max})
	}, toRep)
}

// GetOrganization answers GET .../organizations/{slug}.
func (s *Service) GetOrganization(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toRep(o))
}

// UpdateOrganization answers PUT .../organizations/{slug}. The body may
// repeat id, slug and createdTimestamp (a GET's answer sent back) but not
// change them.
func (s *Service) UpdateOrganization(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	current := toRep(o)
	upd, err := httpx.ReadUpdate[OrganizationRep](r, current, map[string]any{
		"id": o.ID, "slug": o.Slug, "createdTimestamp": o.CreatedAt, "name": o.Name,
		"description": nil, "enabled": true, "attributes": nil, "domains": nil,
	})
	if err != nil {
		return err
	}
	switch {
	case upd.ID != o.ID:
		return apperr.Field("id", "cannot be changed")
	case upd.Slug != o.Slug:
		return apperr.Field("slug", "cannot be changed")
	case upd.CreatedTimestamp != o.CreatedAt:
		return apperr.Field("createdTimestamp", "cannot be changed")
	}
	o.Name, o.Description, o.Enabled, o.Attributes = upd.Name, upd.Description, upd.Enabled, upd.Attributes
	if err := applyDomains(o, upd.Domains); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateOrganization(r.Context(), o); err != nil {
		return orgConflict(err, o.Slug)
	}
	return httpx.OK(w, toRep(o))
}

// DeleteOrganization answers DELETE .../organizations/{slug}: its
// memberships, invitations, domains and SSO connections go with it, its
// members stay.
func (s *Service) DeleteOrganization(w http.ResponseWriter, r *http.Request) error {
	realm, o, err := s.organization(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteOrganization(r.Context(), realm.ID, o.Slug); err != nil {
		return err
	}
	return httpx.NoContent(w)
}
