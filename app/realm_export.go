package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authflows"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/ldapfed"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/app/policies"
	"github.com/idenplane/idenplane/app/saml"
	"github.com/idenplane/idenplane/app/scim"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
)

// realmFormatVersion is the version of the export format this binary
// writes; it reads every version up to it. See docs/realm-format.md.
const realmFormatVersion = 1

// maxImportBytes caps an import body; exports with users outgrow the usual 1 MiB.
const maxImportBytes = 256 << 20

type credentialRep struct {
	Type             string `json:"type"`
	Hash             string `json:"hash"`
	CreatedTimestamp int64  `json:"createdTimestamp,omitempty"`
}

// roleRefs names roles: realm roles by name, client roles by client and name.
type roleRefs struct {
	RealmRoles  []string            `json:"realmRoles,omitempty"`
	ClientRoles map[string][]string `json:"clientRoles,omitempty"`
}

type userExport struct {
	userRep
	FederationLink *ldapfed.Link `json:"federationLink,omitempty"` // a user of a directory
	roleRefs
	Groups      []string        `json:"groups,omitempty"` // group IDs
	Credentials []credentialRep `json:"credentials,omitempty"`
	// FederatedIdentities are the user's links to upstream accounts.
	FederatedIdentities []broker.FederatedIdentityRep `json:"federatedIdentities,omitempty"`
}

type roleExport struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	Description      string    `json:"description"`
	CreatedTimestamp int64     `json:"createdTimestamp"`
	Composites       *roleRefs `json:"composites,omitempty"`
}

type rolesExport struct {
	Realm  []roleExport            `json:"realm"`
	Client map[string][]roleExport `json:"client"` // by public clientId
}

type groupExport struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Description      string `json:"description"`
	ParentID         string `json:"parentId,omitempty"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
	roleRefs
}

// realmExport is the realm JSON format: the realm's fields at the top level,
// as in the admin API, plus the format version and the realm's resources.
// Realms, users, client scopes and clients are written in the admin API's
// representations, with what only the export has (see scopes.ScopeRep and
// clients.ClientRep). Roles and groups have shapes of their own: the export names
// a role's composites and a group's roles, where the API shows a role in
// its container and a group in its tree.
type realmExport struct {
	FormatVersion int `json:"formatVersion"`
	realmRep
	ClientScopes []scopes.ScopeRep   `json:"clientScopes"`
	Clients      []clients.ClientRep `json:"clients"`
	Roles        rolesExport         `json:"roles"`
	Groups       []groupExport       `json:"groups"` // parents before their children
	// IdentityProviders are in the admin API's representation, by alias.
	IdentityProviders []broker.ProviderRep `json:"identityProviders"`
	Users             []userExport         `json:"users,omitempty"`
	// The SAML service providers, as the admin API shows them.
	SAMLServiceProviders []saml.SP     `json:"samlServiceProviders"`
	SAMLSettings         saml.Settings `json:"samlSettings"`
	// UserFederationProviders are the realm's directories (app/ldapfed).
	UserFederationProviders []ldapfed.Provider `json:"userFederationProviders,omitempty"`
	// SCIMAttributeMappings are the realm's SCIM attribute mappings, as the
	// admin API shows them (app/scim).
	SCIMAttributeMappings []scim.MappingRep `json:"scimAttributeMappings"`
	// Organizations are in the admin API's representation, with their
	// members (with the users) and SSO connections (app/orgs).
	Organizations []orgs.OrganizationExport `json:"organizations"`
	// AuthFlows are the realm's authentication flows, each with the
	// clients bound to it (app/authflows).
	AuthFlows []authflows.FlowDetail `json:"authFlows"`
	// AuthorizationPolicies are the realm's authorization policies, as the
	// admin API shows them, and AuthorizationSettings its policy settings
	// (app/policies).
	AuthorizationPolicies []policies.Policy `json:"authorizationPolicies"`
	AuthorizationSettings policies.Settings `json:"authorizationSettings"`
}

// ExportRealm writes a realm as JSON. Secrets (SMTP password, provider API
// keys, client secret hashes, password hashes) are included only when
// includeSecrets is set.
func ExportRealm(ctx context.Context, st *store.Store, name string, includeUsers, includeSecrets bool) ([]byte, error) {
	var out *realmExport
	// One snapshot, so every resource is one consistent picture.
	err := st.ReadTx(ctx, func(tx *store.Store) error {
		realm, err := tx.GetRealm(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("realm " + name)
		} else if err != nil {
			return err
		}
		out, err = exportRealm(ctx, tx, realm, includeUsers, includeSecrets)
		return err
	})
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(out, "", "  ")
}

// realmSnapshot is every row of a realm that the export reads, with lookups
// from IDs to what the format names things by.
type realmSnapshot struct {
	roles       map[string]*store.Role // by ID
	clientIDs   map[string]string      // internal ID -> public clientId
	scopeNames  map[string]string      // scope ID -> name
	userRoles   map[string][]string
	groupRoles  map[string][]string
	composites  map[string][]string
	scopeLinks  map[string][]string
	memberships map[string][]string
}

func (snap *realmSnapshot) refs(roleIDs []string) roleRefs {
	var refs roleRefs
	for _, id := range roleIDs {
		role := snap.roles[id]
		if role.ClientID == "" {
			refs.RealmRoles = append(refs.RealmRoles, role.Name)
			continue
		}
		if refs.ClientRoles == nil {
			refs.ClientRoles = map[string][]string{}
		}
		c := snap.clientIDs[role.ClientID]
		refs.ClientRoles[c] = append(refs.ClientRoles[c], role.Name)
	}
	slices.Sort(refs.RealmRoles)
	for _, names := range refs.ClientRoles {
		slices.Sort(names)
	}
	return refs
}

func (snap *realmSnapshot) scopeList(ids []string) []string {
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		names = append(names, snap.scopeNames[id])
	}
	slices.Sort(names)
	return names
}

// exportScope is a client scope as the export writes it: as the API shows
// it, with the creation times of the scope and its mappers.
func exportScope(sc *store.ClientScope) scopes.ScopeRep {
	rep := scopes.ToScopeRep(sc)
	rep.CreatedTimestamp = &sc.CreatedAt
	for i, m := range sc.Mappers {
		rep.ProtocolMappers[i].CreatedTimestamp = &m.CreatedAt
	}
	return rep
}

// exportClient is a client as the export writes it: the fields the API
// shows but its derived ones, with the secret's hash (includeSecrets), the
// linked scopes by name, and the service-account user sa (nil for none).
func (snap *realmSnapshot) exportClient(c *store.Client, sa *store.User, includeSecrets bool) clients.ClientRep {
	rep := clients.Fields(c)
	if includeSecrets && c.SecretHash != nil {
		rep.SecretHash = base64.StdEncoding.EncodeToString(c.SecretHash)
	}
	rep.DefaultClientScopes = snap.scopeList(snap.scopeLinks[c.ID+" "+store.ScopeDefault])
	rep.OptionalClientScopes = snap.scopeList(snap.scopeLinks[c.ID+" "+store.ScopeOptional])
	if sa != nil {
		refs := snap.refs(snap.userRoles[sa.ID])
		rep.ServiceAccount = &clients.ServiceAccountExport{ID: sa.ID, Username: sa.Username, Enabled: sa.Enabled,
			CreatedTimestamp: sa.CreatedAt, RealmRoles: refs.RealmRoles, ClientRoles: refs.ClientRoles}
	}
	return rep
}

func exportRealm(ctx context.Context, tx *store.Store, realm *store.Realm, includeUsers, includeSecrets bool) (*realmExport, error) {
	snap := realmSnapshot{roles: map[string]*store.Role{}, clientIDs: map[string]string{}, scopeNames: map[string]string{}}
	clientScopes, err := tx.ListClientScopes(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	clientList, err := tx.ListClients(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	roles, err := tx.ListAllRoles(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	groups, err := tx.ListGroups(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	users, err := tx.AllUsers(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	for _, q := range []struct {
		dst  *map[string][]string
		load func(context.Context, string) (map[string][]string, error)
	}{
		{&snap.userRoles, tx.AllUserRoleMappings}, {&snap.groupRoles, tx.AllGroupRoleMappings},
		{&snap.composites, tx.AllComposites}, {&snap.scopeLinks, tx.AllScopeLinks},
		{&snap.memberships, tx.GroupMemberships},
	} {
		if *q.dst, err = q.load(ctx, realm.ID); err != nil {
			return nil, err
		}
	}
	for _, c := range clientList {
		snap.clientIDs[c.ID] = c.ClientID
	}
	for _, r := range roles {
		snap.roles[r.ID] = r
	}
	out := &realmExport{FormatVersion: realmFormatVersion, realmRep: toRealmRep(realm, includeSecrets),
		ClientScopes: []scopes.ScopeRep{}, Clients: []clients.ClientRep{}, Groups: []groupExport{},
		Roles: rolesExport{Realm: []roleExport{}, Client: map[string][]roleExport{}}}

	for _, sc := range clientScopes {
		snap.scopeNames[sc.ID] = sc.Name
		out.ClientScopes = append(out.ClientScopes, exportScope(sc))
	}
	serviceAccounts := map[string]*store.User{}
	for _, u := range users {
		if u.ServiceAccountClientID != "" {
			serviceAccounts[u.ServiceAccountClientID] = u
		}
	}
	for _, c := range clientList {
		out.Clients = append(out.Clients, snap.exportClient(c, serviceAccounts[c.ID], includeSecrets))
	}
	for _, r := range roles {
		e := roleExport{ID: r.ID, Name: r.Name, Description: r.Description, CreatedTimestamp: r.CreatedAt}
		if children := snap.composites[r.ID]; len(children) > 0 {
			refs := snap.refs(children)
			e.Composites = &refs
		}
		if r.ClientID == "" {
			out.Roles.Realm = append(out.Roles.Realm, e)
		} else {
			c := snap.clientIDs[r.ClientID]
			out.Roles.Client[c] = append(out.Roles.Client[c], e)
		}
	}
	if err := exportSAML(ctx, tx, realm, out); err != nil {
		return nil, err
	}
	for _, g := range parentsFirst(groups) {
		out.Groups = append(out.Groups, groupExport{ID: g.ID, Name: g.Name, Description: g.Description,
			ParentID: g.ParentID, CreatedTimestamp: g.CreatedAt, roleRefs: snap.refs(snap.groupRoles[g.ID])})
	}
	if out.IdentityProviders, err = broker.ExportProviders(ctx, tx, realm.ID, includeSecrets); err != nil {
		return nil, err
	}
	if out.UserFederationProviders, err = ldapfed.Export(ctx, tx, realm.ID, includeSecrets); err != nil {
		return nil, err
	}
	if out.SCIMAttributeMappings, err = scim.ExportMappings(ctx, tx, realm.ID); err != nil {
		return nil, err
	}
	if out.Organizations, err = orgs.Export(ctx, tx, realm.ID, includeUsers); err != nil {
		return nil, err
	}
	if out.AuthFlows, err = authflows.Export(ctx, tx, realm.ID); err != nil {
		return nil, err
	}
	if out.AuthorizationPolicies, out.AuthorizationSettings, err = policies.Export(ctx, tx, realm.ID); err != nil {
		return nil, err
	}
	if !includeUsers {
		return out, nil
	}
	links, err := ldapfed.ExportLinks(ctx, tx, realm.ID)
	if err != nil {
		return nil, err
	}
	idpLinks, err := broker.ExportLinks(ctx, tx, realm.ID)
	if err != nil {
		return nil, err
	}
	out.Users = []userExport{}
	for _, u := range users {
		if u.ServiceAccountClientID != "" {
			continue
		}
		e := userExport{userRep: toUserRep(u), roleRefs: snap.refs(snap.userRoles[u.ID]), Groups: snap.memberships[u.ID],
			FederationLink: links[u.ID]}
		e.FederatedIdentities = idpLinks[u.ID]
		if includeSecrets && u.PasswordHash != "" {
			e.Credentials = []credentialRep{{Type: "password", Hash: u.PasswordHash, CreatedTimestamp: u.PasswordChangedAt}}
		}
		out.Users = append(out.Users, e)
	}
	return out, nil
}

// parentsFirst orders groups so each comes after its parent, keeping the
// name order among siblings, so an import can insert them in turn.
func parentsFirst(groups []*store.Group) []*store.Group {
	children := map[string][]*store.Group{}
	for _, g := range groups {
		children[g.ParentID] = append(children[g.ParentID], g)
	}
	out := make([]*store.Group, 0, len(groups))
	var walk func(parent string)
	walk = func(parent string) {
		for _, g := range children[parent] {
			out = append(out, g)
			walk(g.ID)
		}
	}
	walk("")
	return out
}

// exportPermissions are what an export needs beside the route's
// realm:read: the read permission of every area it holds, the users' with
// includeUsers, and with includeSecrets the write permissions of the
// secrets it carries, which the admin API never shows (the realm's SMTP
// password and directories' bind credentials, client secret hashes,
// providers' client secrets, users' password hashes).
func exportPermissions(includeUsers, includeSecrets bool) []authz.Permission {
	perms := []authz.Permission{authz.ClientsRead, authz.RolesRead, authz.GroupsRead, authz.ScopesRead,
		authz.IdentityProvidersRead, authz.SCIMRead, authz.OrgsRead, authz.PoliciesRead}
	if includeUsers {
		perms = append(perms, authz.UsersRead)
	}
	if includeSecrets {
		perms = append(perms, authz.RealmWrite, authz.ClientsWrite, authz.IdentityProvidersWrite)
		if includeUsers {
			perms = append(perms, authz.UsersWrite)
		}
	}
	return perms
}

func (a *App) exportRealm(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	includeUsers, err := httpx.BoolParam(q.Get("includeUsers"), "includeUsers")
	if err != nil {
		return err
	}
	includeSecrets, err := httpx.BoolParam(q.Get("includeSecrets"), "includeSecrets")
	if err != nil {
		return err
	}
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	held := callerPermissions(r)
	for _, p := range exportPermissions(includeUsers, includeSecrets) {
		if !held.Has(p) {
			return apperr.Forbidden("this export carries what the permission %s covers, which this credential lacks", p)
		}
	}
	data, err := ExportRealm(r.Context(), a.store, realm.Name, includeUsers, includeSecrets)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="realm-%s.json"`, realm.Name))
	_, _ = w.Write(append(data, '\n'))
	return nil
}
