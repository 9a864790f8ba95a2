package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authflows"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/ldapfed"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/app/policies"
	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/app/scim"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/app/signingkeys"
	"github.com/idenplane/idenplane/store"
)

// importPlan is an import checked and resolved into store rows, before any
// of it is written: every ID assigned, every reference by name turned into
// an ID, every field validated as the admin API would.
type importPlan struct {
	core        *identity.Core // creates the users
	now         int64
	realm       *store.Realm
	seedScopes  bool
	scopes      []*store.ClientScope
	clientList  []*store.Client
	clients     map[string]*store.Client     // by public clientId
	links       []scopeLink                  // resolved by scope name once scopes exist
	roles       []*store.Role                // realm roles, then client roles
	realmRoles  map[string]string            // name -> ID
	clientRoles map[string]map[string]string // clientId -> name -> ID
	composites  []composite
	groups      []*store.Group    // parents first
	groupIDs    map[string]string // group ID in the file -> ID it gets
	// copy: the file has no realm id, or the import was asked to be a
	// copy, so every resource gets a fresh ID and the realm can sit beside
	// the one it was exported from.
	copy bool
	// webAuthn: flows bound to clients may have passkey and security-key
	// steps (ImportOptions.NoWebAuthn).
	webAuthn      bool
	users         []*store.User // people and service accounts
	userFields    []string      // each user's place in the file, for errors
	grants        []grant
	memberships   [][2]string // group ID, user ID
	samlSPs       []*store.SAMLServiceProvider
	samlSettings  *store.SAMLSettings
	providers     []*store.IdentityProvider
	idpLinks      []*store.FederatedIdentity // users' links to upstream accounts
	idpLinkFields []string                   // each link's place in the file, for errors
	federation    []*store.FederationProvider
	fedIDs        map[string]string // provider ID in the file -> ID it gets
	fedLinks      []*store.FederationLink
	scimMappings  []*store.SCIMMapping
	orgs          *orgs.ImportPlan
	authFlows     *authflows.ImportPlan
	policies      *policies.ImportPlan
	keys          signingkeys.RealmKeys
	progress      func(done, total int) // ImportOptions.Progress
}

type scopeLink struct{ clientID, scope, kind, field string }

type composite struct {
	parentID, field string
	childIDs        []string
}

type grant struct {
	holder  store.RoleHolder
	roleIDs []string
}

// withPrefix moves a validation error's field under an import path such as
// "clients[2]".
func withPrefix(err error, prefix string) error {
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Field == "" {
		return err
	}
	out := *ae
	out.Field = prefix + "." + ae.Field
	out.Message = prefix + "." + ae.Message
	return &out
}

// id returns the ID a resource gets: the one given, if it is a UUID and
// the import is not a copy, or a new one.
func (p *importPlan) id(given *string, field string) (string, error) {
	if given == nil {
		return uuid.NewString(), nil
	}
	if err := uuid.Validate(*given); err != nil {
		return "", apperr.Field(field, "must be a UUID")
	}
	if p.copy {
		return uuid.NewString(), nil
	}
	return strings.ToLower(*given), nil
}

func (p *importPlan) timestamp(t *int64) int64 {
	if t != nil {
		return *t
	}
	return p.now
}

func (p *importPlan) build(in *realmImport) error {
	realm := defaultRealm()
	// A file keeps the events it says: one that says nothing (as a
	// Keycloak export without the fields) keeps none, as Keycloak reads it.
	realm.EventsEnabled, realm.AdminEventsEnabled = false, false
	in.apply(&realm)
	var err error
	if realm.ID, err = p.id(in.ID, "id"); err != nil {
		return err
	}
	realm.CreatedAt = p.timestamp(in.CreatedTimestamp)
	p.realm = &realm
	if p.federation, p.fedIDs, err = ldapfed.PlanImport(in.UserFederationProviders, p.realm.ID, p.copy, p.now); err != nil {
		return err
	}
	for _, step := range []func(*realmImport) error{p.buildScopes, p.buildClients, p.buildRoles, p.buildGroups, p.buildUsers,
		p.buildSAMLServiceProviders} {
		if err := step(in); err != nil {
			return err
		}
	}
	if p.providers, err = broker.PlanImport(realm.ID, in.IdentityProviders, broker.ImportIDs{ID: p.id, Timestamp: p.timestamp}); err != nil {
		return err
	}
	if p.scimMappings, err = scim.PlanImportMappings(in.SCIMAttributeMappings, realm.ID, p.copy, p.now); err != nil {
		return err
	}
	if err := p.buildLinks(in); err != nil {
		return err
	}
	people := map[string]string{}
	for _, u := range p.users[len(p.users)-len(in.Users):] {
		people[u.Username] = u.ID
	}
	p.orgs, err = orgs.PlanImport(realm.ID, in.Organizations, people, p.providers, orgs.ImportIDs{ID: p.id, Timestamp: p.timestamp})
	if err != nil {
		return err
	}
	clients := authflows.ImportClients{OIDC: map[string]string{}, SAML: map[string]string{}, WebAuthn: p.webAuthn}
	for _, c := range p.clientList {
		clients.OIDC[c.ClientID] = c.ID
	}
	for _, sp := range p.samlSPs {
		clients.SAML[sp.EntityID] = sp.ID
	}
	p.authFlows, err = authflows.PlanImport(realm.ID, in.AuthFlows, clients, p.providers, authflows.ImportIDs{ID: p.id, Timestamp: p.timestamp})
	if err != nil {
		return err
	}
	p.policies, err = policies.PlanImport(realm.ID, in.AuthorizationPolicies, in.AuthorizationSettings,
		policies.ImportIDs{ID: p.id, Timestamp: p.timestamp})
	return err
}

// buildLinks resolves the users' links to the file's identity providers.
// The people of p.users follow its service accounts, in the file's order.
func (p *importPlan) buildLinks(in *realmImport) error {
	people := p.users[len(p.users)-len(in.Users):]
	for i, ui := range in.Users {
		field := fmt.Sprintf("users[%d]", i)
		links, err := broker.PlanLinks(p.providers, people[i], field, ui.FederatedIdentities, p.now)
		if err != nil {
			return err
		}
		for j := range links {
			p.idpLinkFields = append(p.idpLinkFields, fmt.Sprintf("%s.federatedIdentities[%d]", field, j))
		}
		p.idpLinks = append(p.idpLinks, links...)
	}
	return nil
}

func (p *importPlan) buildScopes(in *realmImport) error {
	if in.ClientScopes == nil {
		p.seedScopes = true
		return nil
	}
	names := map[string]bool{}
	for i, si := range *in.ClientScopes {
		prefix := fmt.Sprintf("clientScopes[%d]", i)
		id, err := p.id(si.ID, prefix+".id")
		if err != nil {
			return err
		}
		sc := &store.ClientScope{ID: id, RealmID: p.realm.ID, Name: si.Name, Description: si.Description,
			Protocol: si.Protocol, CreatedAt: p.timestamp(si.CreatedTimestamp)}
		for j, mi := range si.ProtocolMappers {
			mprefix := fmt.Sprintf("%s.protocolMappers[%d]", prefix, j)
			mid, err := p.id(mi.ID, mprefix+".id")
			if err != nil {
				return err
			}
			sc.Mappers = append(sc.Mappers, &store.ProtocolMapper{ID: mid, ScopeID: id, Name: mi.Name,
				MapperType: mi.MapperType, Protocol: mi.Protocol, Config: mi.Config, CreatedAt: p.timestamp(mi.CreatedTimestamp)})
		}
		if err := validateImportedScope(sc); err != nil {
			return withPrefix(err, prefix)
		}
		if names[sc.Name] {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: prefix + ".name",
				Message: fmt.Sprintf("%s.name: scope %s appears twice", prefix, sc.Name)}
		}
		names[sc.Name] = true
		p.scopes = append(p.scopes, sc)
	}
	return nil
}

func (p *importPlan) buildClients(in *realmImport) error {
	for i, ci := range in.Clients {
		prefix := fmt.Sprintf("clients[%d]", i)
		id, err := p.id(ci.ID, prefix+".id")
		if err != nil {
			return err
		}
		c := &store.Client{ID: id, RealmID: p.realm.ID, ClientID: ci.ClientID, Name: ci.Name, Description: ci.Description,
			ClientType: ci.ClientType, Enabled: ci.Enabled == nil || *ci.Enabled, RedirectURIs: ci.RedirectURIs,
			WebOrigins: ci.WebOrigins, GrantTypes: ci.GrantTypes, RequireConsent: ci.RequireConsent,
			BackchannelLogoutURI: ci.BackchannelLogoutURI, CreatedAt: p.timestamp(ci.CreatedTimestamp),
			BackchannelLogoutSessionRequired: ci.BackchannelLogoutSessionRequired == nil || *ci.BackchannelLogoutSessionRequired,
			OmitIDTokenOnRefresh:             ci.IDTokenOnRefresh != nil && !*ci.IDTokenOnRefresh}
		if err := validateImportedClient(c); err != nil {
			return withPrefix(err, prefix)
		}
		if p.clients[c.ClientID] != nil {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: prefix + ".clientId",
				Message: fmt.Sprintf("%s.clientId: client %s appears twice", prefix, c.ClientID)}
		}
		if ci.SecretHash != "" {
			h, err := base64.StdEncoding.DecodeString(ci.SecretHash)
			if err != nil || len(h) != 32 || c.ClientType == identity.ClientPublic {
				return apperr.Field(prefix+".secretHash", "must be the base64 SHA-256 of a confidential client's secret")
			}
			c.SecretHash = h
		}
		p.clients[c.ClientID] = c
		p.clientList = append(p.clientList, c)
		for _, l := range []struct {
			kind, field string
			names       []string
		}{{store.ScopeDefault, "defaultClientScopes", ci.DefaultClientScopes}, {store.ScopeOptional, "optionalClientScopes", ci.OptionalClientScopes}} {
			for _, name := range l.names {
				p.links = append(p.links, scopeLink{clientID: c.ID, scope: name, kind: l.kind, field: prefix + "." + l.field})
			}
		}
	}
	return nil
}

// buildServiceAccounts runs after roles: service accounts carry role mappings.
func (p *importPlan) buildServiceAccounts(in *realmImport) error {
	for i, ci := range in.Clients {
		prefix := fmt.Sprintf("clients[%d].serviceAccount", i)
		c := p.clients[ci.ClientID]
		hasGrant := slices.Contains(c.GrantTypes, identity.GrantClientCredentials)
		switch {
		case ci.ServiceAccount == nil && !hasGrant:
			continue
		case ci.ServiceAccount != nil && !hasGrant:
			return apperr.Field(prefix, "is only for clients with the client_credentials grant")
		}
		sa := ci.ServiceAccount
		if sa == nil {
			sa = &serviceAccountImport{}
		}
		id, err := p.id(sa.ID, prefix+".id")
		if err != nil {
			return err
		}
		u := &store.User{ID: id, RealmID: p.realm.ID, Username: sa.Username, Enabled: sa.Enabled == nil || *sa.Enabled,
			CreatedAt: p.timestamp(sa.CreatedTimestamp), ServiceAccountClientID: c.ID}
		if u.Username == "" {
			u.Username = identity.ServiceAccountUsername(c)
		}
		if err := identity.ValidateUser(u); err != nil {
			return withPrefix(err, prefix)
		}
		roleIDs, err := p.resolve(sa.roleRefs, prefix)
		if err != nil {
			return err
		}
		p.users = append(p.users, u)
		p.userFields = append(p.userFields, prefix)
		p.grants = append(p.grants, grant{store.UserRoles(u.ID), roleIDs})
	}
	return nil
}

func (p *importPlan) buildRoles(in *realmImport) error {
	add := func(ri roleImport, clientID, prefix string, byName map[string]string) error {
		id, err := p.id(ri.ID, prefix+".id")
		if err != nil {
			return err
		}
		role := &store.Role{ID: id, RealmID: p.realm.ID, ClientID: clientID, Name: ri.Name, Description: ri.Description,
			CreatedAt: p.timestamp(ri.CreatedTimestamp)}
		if err := roles.Validate(role); err != nil {
			return withPrefix(err, prefix)
		}
		if byName[role.Name] != "" {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: prefix + ".name",
				Message: fmt.Sprintf("%s.name: role %s appears twice", prefix, role.Name)}
		}
		byName[role.Name] = role.ID
		p.roles = append(p.roles, role)
		return nil
	}
	for i, ri := range in.Roles.Realm {
		if err := add(ri, "", fmt.Sprintf("roles.realm[%d]", i), p.realmRoles); err != nil {
			return err
		}
	}
	for _, clientID := range sortedKeys(in.Roles.Client) {
		c := p.clients[clientID]
		if c == nil {
			return apperr.Field("roles.client."+clientID, "names no client in this file")
		}
		p.clientRoles[clientID] = map[string]string{}
		for i, ri := range in.Roles.Client[clientID] {
			if err := add(ri, c.ID, fmt.Sprintf("roles.client.%s[%d]", clientID, i), p.clientRoles[clientID]); err != nil {
				return err
			}
		}
	}
	// Composites may name any role of the file, so they resolve after all roles.
	resolveComposites := func(list []roleImport, prefix string, byName map[string]string) error {
		for i, ri := range list {
			if ri.Composites == nil {
				continue
			}
			field := fmt.Sprintf("%s[%d].composites", prefix, i)
			children, err := p.resolve(*ri.Composites, field)
			if err != nil {
				return err
			}
			p.composites = append(p.composites, composite{parentID: byName[ri.Name], field: field, childIDs: children})
		}
		return nil
	}
	if err := resolveComposites(in.Roles.Realm, "roles.realm", p.realmRoles); err != nil {
		return err
	}
	for _, clientID := range sortedKeys(in.Roles.Client) {
		if err := resolveComposites(in.Roles.Client[clientID], "roles.client."+clientID, p.clientRoles[clientID]); err != nil {
			return err
		}
	}
	return p.buildServiceAccounts(in)
}

// resolve turns role names into IDs, naming every unknown one.
func (p *importPlan) resolve(refs roleRefs, field string) ([]string, error) {
	var ids, unknown []string
	for _, name := range refs.RealmRoles {
		if id, ok := p.realmRoles[name]; ok {
			ids = append(ids, id)
		} else {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return nil, apperr.Field(field+".realmRoles", "no realm role named %s", strings.Join(unknown, ", "))
	}
	for _, clientID := range sortedKeys(refs.ClientRoles) {
		byName, ok := p.clientRoles[clientID]
		for _, name := range refs.ClientRoles[clientID] {
			if id, found := byName[name]; ok && found {
				ids = append(ids, id)
			} else {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			return nil, apperr.Field(field+".clientRoles."+clientID, "client %s has no role named %s", clientID, strings.Join(unknown, ", "))
		}
	}
	return ids, nil
}

func (p *importPlan) buildGroups(in *realmImport) error {
	for i, gi := range in.Groups {
		prefix := fmt.Sprintf("groups[%d]", i)
		id, err := p.id(gi.ID, prefix+".id")
		if err != nil {
			return err
		}
		g := &store.Group{ID: id, RealmID: p.realm.ID, Name: gi.Name, Description: gi.Description,
			CreatedAt: p.timestamp(gi.CreatedTimestamp)}
		if err := identity.ValidateGroup(g); err != nil {
			return withPrefix(err, prefix)
		}
		if gi.ParentID != "" {
			if g.ParentID = p.groupIDs[strings.ToLower(gi.ParentID)]; g.ParentID == "" {
				return apperr.Field(prefix+".parentId", "must name a group listed before this one")
			}
		}
		fileID := id
		if gi.ID != nil {
			fileID = strings.ToLower(*gi.ID)
		}
		if p.groupIDs[fileID] != "" {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: prefix + ".id",
				Message: fmt.Sprintf("%s.id: group %s appears twice", prefix, fileID)}
		}
		roleIDs, err := p.resolve(gi.roleRefs, prefix)
		if err != nil {
			return err
		}
		p.groupIDs[fileID] = g.ID
		p.groups = append(p.groups, g)
		p.grants = append(p.grants, grant{store.GroupRoles(g.ID), roleIDs})
	}
	return nil
}

func (p *importPlan) buildUsers(in *realmImport) error {
	seenName, seenEmail, seenID := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, u := range p.users { // service accounts
		seenName[u.Username], seenID[u.ID] = true, true
	}
	for i, ui := range in.Users {
		prefix := fmt.Sprintf("users[%d]", i)
		if ui.Username == nil {
			return apperr.Field(prefix+".username", "is required")
		}
		if ui.Password != nil {
			return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeUnknownField, Field: prefix + ".password",
				Message: prefix + ".password: plaintext passwords are not imported; use credentials with a hash"}
		}
		id, err := p.id(ui.ID, prefix+".id")
		if err != nil {
			return err
		}
		u := &store.User{ID: id, RealmID: p.realm.ID, Enabled: true, CreatedAt: p.timestamp(ui.CreatedTimestamp)}
		set(&u.Username, ui.Username)
		set(&u.Email, ui.Email)
		set(&u.FirstName, ui.FirstName)
		set(&u.LastName, ui.LastName)
		set(&u.Enabled, ui.Enabled)
		set(&u.EmailVerified, ui.EmailVerified)
		set(&u.RequirePasswordReset, ui.RequirePasswordReset)
		if err := identity.ValidateUser(u); err != nil {
			return withPrefix(err, prefix)
		}
		for _, c := range ui.Credentials {
			if c.Type != "password" {
				return apperr.Field(prefix+".credentials", "type %q is not supported", c.Type)
			}
			if err := identity.ValidatePasswordHash(c.Hash); err != nil {
				return apperr.Field(prefix+".credentials", "hash must be a password hash this server checks: "+
					"argon2id or argon2i (PHC string), bcrypt, or PBKDF2 ($pbkdf2-sha256$i=…,l=…$salt$key)")
			}
			u.PasswordHash, u.PasswordChangedAt = c.Hash, c.CreatedTimestamp
		}
		switch {
		case seenID[u.ID]:
			return apperr.New(http.StatusConflict, apperr.CodeConflict, "%s: id %s appears twice", prefix, u.ID)
		case seenName[u.Username]:
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: prefix + ".username",
				Message: fmt.Sprintf("%s: username %s appears twice", prefix, u.Username)}
		case u.Email != "" && seenEmail[u.Email]:
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: prefix + ".email",
				Message: fmt.Sprintf("%s: email %s appears twice", prefix, u.Email)}
		}
		seenID[u.ID], seenName[u.Username], seenEmail[u.Email] = true, true, true
		if ui.FederationLink != nil {
			link, err := ldapfed.PlanLink(ui.FederationLink, prefix+".federationLink", p.realm.ID, u.ID, p.fedIDs)
			if err != nil {
				return err
			}
			p.fedLinks = append(p.fedLinks, link)
		}
		roleIDs, err := p.resolve(ui.roleRefs, prefix)
		if err != nil {
			return err
		}
		for _, g := range ui.Groups {
			id := p.groupIDs[strings.ToLower(g)]
			if id == "" {
				return apperr.Field(prefix+".groups", "no group with id %s in this file", g)
			}
			p.memberships = append(p.memberships, [2]string{id, u.ID})
		}
		p.users = append(p.users, u)
		p.userFields = append(p.userFields, prefix)
		p.grants = append(p.grants, grant{store.UserRoles(u.ID), roleIDs})
	}
	return nil
}

// keepSecrets gives users and clients that an export carried without their
// secrets the ones they have in the realm being overwritten, as
// restoreRedacted does for the realm's own secrets.
func (p *importPlan) keepSecrets(ctx context.Context, tx *store.Store, existing *store.Realm) error {
	for _, u := range p.users {
		if u.PasswordHash != "" || u.ServiceAccountClientID != "" {
			continue
		}
		old, err := tx.GetUser(ctx, existing.ID, u.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		u.PasswordHash, u.PasswordChangedAt = old.PasswordHash, old.PasswordChangedAt
	}
	for _, c := range p.clientList {
		if c.SecretHash != nil || c.ClientType == identity.ClientPublic {
			continue
		}
		old, err := tx.GetClient(ctx, existing.ID, c.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		c.SecretHash = old.SecretHash
	}
	return nil
}

// idConflict explains a clash of a kept ID with a row of another realm.
func idConflict(err error, field, what string) error {
	if errors.Is(err, store.ErrConflict) {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: field,
			Message: fmt.Sprintf("%s: %s; %s", field, what, copyHint), Cause: err}
	}
	return err
}

// write inserts the plan, in dependency order, inside tx.
func (p *importPlan) write(ctx context.Context, tx *store.Store) error {
	if err := tx.CreateRealm(ctx, p.realm); err != nil {
		return idConflict(err, "id", "another realm already has id "+p.realm.ID)
	}
	if err := p.keys.Write(ctx, tx); err != nil {
		return err
	}
	if p.seedScopes {
		if err := scopes.Seed(ctx, tx, p.realm); err != nil {
			return err
		}
	}
	for i, sc := range p.scopes {
		if err := tx.CreateClientScope(ctx, sc); err != nil {
			return idConflict(err, fmt.Sprintf("clientScopes[%d].id", i), "a scope or mapper id is used in another realm")
		}
	}
	scopes, err := tx.ListClientScopes(ctx, p.realm.ID)
	if err != nil {
		return err
	}
	scopeIDs := map[string]string{}
	for _, sc := range scopes {
		scopeIDs[sc.Name] = sc.ID
	}
	for i, c := range p.clientList {
		if err := tx.CreateClient(ctx, c); err != nil {
			return idConflict(err, fmt.Sprintf("clients[%d].id", i), "another realm has a client with id "+c.ID)
		}
	}
	for _, l := range p.links {
		id, ok := scopeIDs[l.scope]
		if !ok {
			return apperr.Field(l.field, "no client scope named %s", l.scope)
		}
		if err := tx.LinkClientScope(ctx, l.clientID, id, l.kind); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return apperr.Field(l.field, "scope %s is assigned twice", l.scope)
			}
			return err
		}
	}
	for _, r := range p.roles {
		if err := tx.CreateRole(ctx, r); err != nil {
			return idConflict(err, "roles", "another realm has a role with id "+r.ID)
		}
	}
	for _, c := range p.composites {
		if err := tx.AddComposites(ctx, c.parentID, c.childIDs); err != nil {
			if errors.Is(err, store.ErrCycle) {
				return apperr.Field(c.field, "would make a role include itself")
			}
			return err
		}
	}
	for i, g := range p.groups {
		if err := tx.CreateGroup(ctx, g); err != nil {
			var ce *store.ConflictError
			if errors.As(err, &ce) && ce.Column == "name" {
				return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: fmt.Sprintf("groups[%d].name", i),
					Message: fmt.Sprintf("groups[%d].name: a sibling group is also named %s", i, g.Name), Cause: err}
			}
			return idConflict(err, fmt.Sprintf("groups[%d].id", i), "another realm has a group with id "+g.ID)
		}
	}
	for i, u := range p.users {
		// As every user is created: the rules, checked already, and the
		// conflicts. The hash an import carries is taken as it is.
		if _, err := p.core.CreateUser(ctx, tx, p.realm, identity.NewUserFrom(u)); err != nil {
			var ae *apperr.Error
			if errors.As(err, &ae) {
				return withPrefix(ae, p.userFields[i])
			}
			return idConflict(err, p.userFields[i]+".id", "a user with id "+u.ID+" exists in another realm")
		}
		if p.progress != nil {
			p.progress(i+1, len(p.users))
		}
	}
	for _, g := range p.grants {
		if len(g.roleIDs) > 0 {
			if err := tx.AddRoleMappings(ctx, g.holder, g.roleIDs); err != nil {
				return err
			}
		}
	}
	for _, m := range p.memberships {
		if err := tx.AddGroupMember(ctx, m[0], m[1]); err != nil {
			return err
		}
	}
	if err := p.writeSAMLServiceProviders(ctx, tx); err != nil {
		return err
	}
	if err := broker.WriteImport(ctx, tx, p.providers); err != nil {
		return err
	}
	if err := broker.WriteLinks(ctx, tx, p.idpLinks, p.idpLinkFields); err != nil {
		return err
	}
	if err := orgs.WriteImport(ctx, tx, p.orgs); err != nil {
		return err
	}
	if err := authflows.WriteImport(ctx, tx, p.authFlows); err != nil {
		return err
	}
	return policies.WriteImport(ctx, tx, p.realm.ID, p.policies, p.now)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validateImportedScope checks a scope and its mappers as the API does.
func validateImportedScope(sc *store.ClientScope) error {
	if sc.Protocol == "" {
		sc.Protocol = scopes.ProtocolOIDC
	}
	if err := scopes.ValidateScope(sc); err != nil {
		return err
	}
	for j, m := range sc.Mappers {
		if m.Protocol == "" {
			m.Protocol = scopes.ProtocolOIDC
		}
		if err := scopes.ValidateMapper(fmt.Sprintf("protocolMappers[%d].", j), sc.Protocol, m); err != nil {
			return err
		}
	}
	return nil
}

// validateImportedClient fills the create defaults a hand-written file may
// leave out, then checks the client as the API does.
func validateImportedClient(c *store.Client) error {
	if c.ClientType == "" {
		c.ClientType = identity.ClientConfidential
	}
	if c.GrantTypes == nil {
		c.GrantTypes = identity.DefaultGrantTypes()
	}
	return identity.ValidateClient(c)
}
