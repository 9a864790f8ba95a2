package orgs

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// A realm's organizations in the realm export: each in the admin API's
// representation, with its members by username (when the export has its
// users) and its SSO connections by provider alias. Invitations are not
// exported: their tokens exist only in the mails that carried them.

// OrganizationExport is an organization as the export writes it.
type OrganizationExport struct {
	OrganizationRep
	Members        []MemberRef        `json:"members,omitempty"`
	SSOConnections []SSOConnectionRep `json:"ssoConnections"`
}

// MemberRef is a membership in the export: the user by username.
type MemberRef struct {
	Username        string `json:"username"`
	Role            string `json:"role"`
	JoinedTimestamp int64  `json:"joinedTimestamp"`
}

// exportPage is how many organizations or members the export reads at once.
const exportPage = 1000

// Export is the realm's organizations, by name, as the export writes them;
// withMembers when the export carries the realm's users.
func Export(ctx context.Context, tx *store.Store, realmID string, withMembers bool) ([]OrganizationExport, error) {
	out := []OrganizationExport{}
	for first := 0; ; first += exportPage {
		page, err := tx.ListOrganizations(ctx, realmID, store.OrganizationQuery{First: first, Max: exportPage})
		if err != nil {
			return nil, err
		}
		for _, o := range page {
			e := OrganizationExport{OrganizationRep: toRep(o)}
			conns, err := tx.ListOrgSSOConnections(ctx, o.ID)
			if err != nil {
				return nil, err
			}
			e.SSOConnections = make([]SSOConnectionRep, len(conns))
			for i, c := range conns {
				e.SSOConnections[i] = ToSSORep(c)
			}
			if withMembers {
				if e.Members, err = exportMembers(ctx, tx, o.ID); err != nil {
					return nil, err
				}
			}
			out = append(out, e)
		}
		if len(page) < exportPage {
			return out, nil
		}
	}
}

func exportMembers(ctx context.Context, tx *store.Store, orgID string) ([]MemberRef, error) {
	var out []MemberRef
	for first := 0; ; first += exportPage {
		page, err := tx.ListOrgMembers(ctx, orgID, first, exportPage)
		if err != nil {
			return nil, err
		}
		for _, m := range page {
			out = append(out, MemberRef{Username: m.User.Username, Role: m.Role, JoinedTimestamp: m.JoinedAt})
		}
		if len(page) < exportPage {
			return out, nil
		}
	}
}

// OrganizationImport is an organization as an import reads it: what the
// export writes, every key but the name optional.
type OrganizationImport struct {
	ID               *string               `json:"id"`
	Slug             *string               `json:"slug"`
	Name             string                `json:"name"`
	Description      string                `json:"description"`
	Enabled          *bool                 `json:"enabled"`
	Attributes       map[string][]string   `json:"attributes"`
	Domains          []DomainRep           `json:"domains"`
	CreatedTimestamp *int64                `json:"createdTimestamp"`
	Members          []MemberRef           `json:"members"`
	SSOConnections   []SSOConnectionImport `json:"ssoConnections"`
}

// SSOConnectionImport is a connection as an import reads it, with the
// admin API's defaults for what it leaves out.
type SSOConnectionImport struct {
	ID                       *string `json:"id"`
	IdentityProvider         string  `json:"identityProvider"`
	Enabled                  *bool   `json:"enabled"`
	Domain                   *string `json:"domain"`
	AutoJoin                 bool    `json:"autoJoin"`
	RedirectWhenEmailMatches *bool   `json:"redirectWhenEmailMatches"`
	HideOnLogin              bool    `json:"hideOnLogin"`
	CreatedTimestamp         *int64  `json:"createdTimestamp"`
}

// ImportIDs are how an import gives resources their IDs and times: the
// realm import's rules (a kept UUID, or a new one for a copy).
type ImportIDs struct {
	ID        func(given *string, field string) (string, error)
	Timestamp func(*int64) int64
}

// ImportPlan is the file's organizations checked and resolved, ready to be
// written in the import's transaction.
type ImportPlan struct {
	orgs        []*store.Organization
	verified    [][]string // each organization's verified domains
	members     []plannedMember
	connections []*store.OrgSSOConnection
}

type plannedMember struct {
	orgID, userID, role string
	joined              int64
}

// PlanImport checks the file's organizations as the admin API would:
// members name users of the file (userIDs, by username), connections its
// providers (by alias). Errors name the field under "organizations[i]".
func PlanImport(realmID string, in []OrganizationImport, userIDs map[string]string, providers []*store.IdentityProvider, ids ImportIDs) (*ImportPlan, error) {
	plan := &ImportPlan{}
	slugs, verifiedBy, served := map[string]bool{}, map[string]string{}, map[string]bool{}
	for i, oi := range in {
		field := fmt.Sprintf("organizations[%d]", i)
		id, err := ids.ID(oi.ID, field+".id")
		if err != nil {
			return nil, err
		}
		o := &store.Organization{ID: id, RealmID: realmID, Name: oi.Name, Description: oi.Description,
			Enabled: oi.Enabled == nil || *oi.Enabled, Attributes: oi.Attributes, CreatedAt: ids.Timestamp(oi.CreatedTimestamp)}
		if oi.Slug != nil {
			o.Slug = *oi.Slug
		} else {
			o.Slug = slugFromName(oi.Name)
		}
		if err := checkSlug(o.Slug); err != nil {
			return nil, apperr.Under(err, field)
		}
		if slugs[o.Slug] {
			return nil, apperr.Conflict(field+".slug", "%s.slug: another organization of the file has slug %s", field, o.Slug)
		}
		slugs[o.Slug] = true
		if len(oi.Domains) > maxDomains {
			return nil, apperr.Field(field+".domains", "at most %d domains", maxDomains)
		}
		for _, d := range oi.Domains {
			o.Domains = append(o.Domains, store.OrgDomain{Name: d.Name})
		}
		if err := checkOrganization(o); err != nil {
			return nil, apperr.Under(err, field)
		}
		var verified []string
		for j, d := range oi.Domains {
			if !d.Verified {
				continue
			}
			name, err := NormalizeDomain(fmt.Sprintf("%s.domains[%d].name", field, j), d.Name)
			if err != nil {
				return nil, err
			}
			if other, ok := verifiedBy[name]; ok {
				return nil, apperr.Conflict(fmt.Sprintf("%s.domains[%d]", field, j),
					"%s.domains[%d]: %s is verified by organization %s of the file too", field, j, name, other)
			}
			verifiedBy[name] = o.Slug
			verified = append(verified, name)
		}
		if err := plan.planMembers(o, field, oi.Members, userIDs, ids.Timestamp(nil)); err != nil {
			return nil, err
		}
		for j, ci := range oi.SSOConnections {
			cfield := fmt.Sprintf("%s.ssoConnections[%d]", field, j)
			c, err := planConnection(o, ci, providers, cfield, ids)
			if err != nil {
				return nil, err
			}
			if served[c.ProviderID] {
				return nil, errProviderServes(cfield+".identityProvider", c.ProviderAlias, "", nil)
			}
			served[c.ProviderID] = true
			plan.connections = append(plan.connections, c)
		}
		plan.orgs = append(plan.orgs, o)
		plan.verified = append(plan.verified, verified)
	}
	return plan, nil
}

func (plan *ImportPlan) planMembers(o *store.Organization, field string, in []MemberRef, userIDs map[string]string, now int64) error {
	seen := map[string]bool{}
	for j, m := range in {
		mfield := fmt.Sprintf("%s.members[%d]", field, j)
		userID, ok := userIDs[m.Username]
		if !ok {
			return apperr.Field(mfield+".username", "no user %q in this file", m.Username)
		}
		if seen[userID] {
			return apperr.Conflict(mfield+".username", "%s.username: %s is a member twice", mfield, m.Username)
		}
		seen[userID] = true
		var given *string
		if m.Role != "" {
			given = &m.Role
		}
		role, err := checkRole(given, RoleMember)
		if err != nil {
			return apperr.Under(err, mfield)
		}
		joined := m.JoinedTimestamp
		if joined == 0 {
			joined = now
		}
		plan.members = append(plan.members, plannedMember{orgID: o.ID, userID: userID, role: role, joined: joined})
	}
	return nil
}

func planConnection(o *store.Organization, ci SSOConnectionImport, providers []*store.IdentityProvider, field string, ids ImportIDs) (*store.OrgSSOConnection, error) {
	id, err := ids.ID(ci.ID, field+".id")
	if err != nil {
		return nil, err
	}
	rep := SSOConnectionRep{ID: id, IdentityProvider: ci.IdentityProvider, Enabled: ci.Enabled == nil || *ci.Enabled,
		Domain: store.AnyVerifiedDomain, AutoJoin: ci.AutoJoin,
		RedirectWhenEmailMatches: ci.RedirectWhenEmailMatches == nil || *ci.RedirectWhenEmailMatches,
		HideOnLogin:              ci.HideOnLogin, CreatedTimestamp: ids.Timestamp(ci.CreatedTimestamp)}
	if ci.Domain != nil {
		rep.Domain = *ci.Domain
	}
	var p *store.IdentityProvider
	for _, candidate := range providers {
		if candidate.Alias == ci.IdentityProvider {
			p = candidate
		}
	}
	c, err := newSSOConnection(o, rep, p)
	if err != nil {
		return nil, apperr.Under(err, field)
	}
	return c, nil
}

// WriteImport stores a planned import inside the import's transaction,
// after the users and providers it names.
func WriteImport(ctx context.Context, tx *store.Store, plan *ImportPlan) error {
	for i, o := range plan.orgs {
		field := fmt.Sprintf("organizations[%d]", i)
		if err := tx.CreateOrganization(ctx, o); err != nil {
			var ce *store.ConflictError
			if errors.As(err, &ce) && ce.Column == "id" {
				return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: field + ".id",
					Message: field + ".id: another realm has an organization with id " + o.ID, Cause: err}
			}
			return apperr.Under(orgConflict(err, o.Slug), field)
		}
		for _, d := range plan.verified[i] {
			if err := tx.VerifyDomain(ctx, o.ID, d); err != nil {
				return err
			}
		}
	}
	for _, m := range plan.members {
		if err := tx.AddOrgMember(ctx, m.orgID, m.userID, m.role, m.joined); err != nil {
			return err
		}
	}
	for _, c := range plan.connections {
		if err := tx.CreateOrgSSOConnection(ctx, c); err != nil {
			var ce *store.ConflictError
			if errors.As(err, &ce) && ce.Column == "id" {
				return apperr.Conflict("organizations", "another realm has an SSO connection with id %s", c.ID)
			}
			return err
		}
	}
	return nil
}
