package migration

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// A Keycloak realm export (RealmRepresentation, as `kc.sh export` and the
// admin console's partial export write it) is translated into the realm
// JSON format (docs/realm-format.md) and written by the realm import; the
// TOTP credentials and attribute values that format has no place for are
// written in the same transaction (Then). keycloak_map.go has the tables
// of what maps to what.

// KeycloakOptions say how a Keycloak realm is imported.
type KeycloakOptions struct {
	DryRun bool
	// Realm, when set, names the realm in place of the export's name.
	Realm string
	// NewIDs gives every resource a new ID; by default Keycloak's IDs are
	// kept (a user's ID is the sub of their tokens), and an ID another
	// realm of this server holds is a conflict.
	NewIDs bool
}

// ImportKeycloakFile imports a Keycloak realm export: the command line's
// `idenplane import --from keycloak FILE`.
func (s *Service) ImportKeycloakFile(ctx context.Context, data []byte, opts KeycloakOptions) (*Report, error) {
	v, err := parseJSON(data, "file")
	if err != nil {
		return nil, err
	}
	rd := &reader{}
	return s.keycloak(ctx, rd.root(v, ""), opts)
}

// ImportAuth0Files imports Auth0's users and password hashes (NDJSON, or
// JSON lists) into the realm named: the command line's `idenplane import
// --from auth0`.
func (s *Service) ImportAuth0Files(ctx context.Context, realmName string, users, passwords []byte, dryRun bool) (*Report, error) {
	realm, err := s.deps.RealmNamed(ctx, realmName)
	if err != nil {
		if apperr.IsNotFound(err) {
			return nil, apperr.Field("realm", "no realm is named %s", realmName)
		}
		return nil, err
	}
	rd := &reader{}
	return s.auth0(ctx, realm, listOrNDJSON(rd, users, "users"), listOrNDJSON(rd, passwords, "passwords"), dryRun)
}

// listOrNDJSON reads a file holding a JSON list, or NDJSON.
func listOrNDJSON(rd *reader, data []byte, path string) val {
	if len(data) == 0 {
		return rd.root(nil, path)
	}
	if t := strings.TrimSpace(string(data)); strings.HasPrefix(t, "[") {
		v, err := parseJSON(data, path)
		if err != nil {
			rd.err = err
			return rd.root(nil, path)
		}
		return rd.root(v, path)
	}
	return rd.root(string(data), path)
}

// ReadKeycloak translates a Keycloak export without writing anything: the
// parser alone, for its fuzz target. It answers the realm JSON document.
func ReadKeycloak(data []byte) ([]byte, error) {
	v, err := parseJSON(data, "data")
	if err != nil {
		return nil, err
	}
	rd := &reader{}
	s := New(Deps{})
	t := s.newTranslation(KeycloakOptions{}, newReport())
	if err := t.translate(context.Background(), rd.root(v, "data")); err != nil {
		return nil, err
	}
	return json.Marshal(t.out)
}

// keycloak imports the Keycloak export at v.
func (s *Service) keycloak(ctx context.Context, v val, opts KeycloakOptions) (*Report, error) {
	rep := newReport()
	rep.DryRun = opts.DryRun
	t := s.newTranslation(opts, rep)
	if err := t.translate(ctx, v); err != nil {
		return nil, err
	}
	doc, err := json.Marshal(t.out)
	if err != nil {
		return nil, err
	}
	rep.Realm = t.out.Name
	var progress func(done, total int)
	if len(t.out.Users) > 0 {
		progress = func(done, total int) { s.progress(ctx, "users", done, total) }
	}
	_, err = s.deps.ImportRealm(ctx, doc, RealmImport{DryRun: opts.DryRun, Progress: progress,
		Then: func(ctx context.Context, tx *store.Store, realm *store.Realm) error {
			return s.writeExtras(ctx, tx, realm, t.users, rep)
		}})
	if err != nil {
		return nil, t.kcPath(err)
	}
	return rep, nil
}

// translation is one export on its way into the realm JSON format.
type translation struct {
	s    *Service
	opts KeycloakOptions
	rep  *Report
	out  outRealm
	// paths maps a path of the realm document to the export's, so that
	// what the realm import refuses is named where the export has it.
	paths map[string]string
	// What the document defines, for the references to it.
	realmRoles  map[string]bool
	clientRoles map[string]map[string]bool // by clientId
	clients     map[string]*outClient      // by clientId
	skipped     map[string]string          // clientId -> why it was left out
	groupIDs    map[string]string          // by path
	scopes      map[string]bool
	providers   map[string]bool
	users       []*newUser // the people, for Then
	ids         map[string]bool
}

func (s *Service) newTranslation(opts KeycloakOptions, rep *Report) *translation {
	return &translation{s: s, opts: opts, rep: rep, paths: map[string]string{}, realmRoles: map[string]bool{},
		clientRoles: map[string]map[string]bool{}, clients: map[string]*outClient{}, skipped: map[string]string{},
		groupIDs: map[string]string{}, scopes: map[string]bool{}, providers: map[string]bool{}, ids: map[string]bool{}}
}

// id is the ID a resource of the export gets: Keycloak's when it is a
// UUID not yet used in the document (and NewIDs is not asked), else a
// new one.
func (t *translation) id(v val) string {
	given := strings.ToLower(v.str())
	if t.opts.NewIDs || uuid.Validate(given) != nil || t.ids[given] {
		given = uuid.NewString()
	}
	t.ids[given] = true
	return given
}

func (t *translation) translate(ctx context.Context, v val) error {
	r := v.r
	v.object()
	if r.err != nil {
		return r.err
	}
	t.realm(v)
	if r.err != nil {
		return r.err
	}
	t.translateScopes(v)
	if r.err != nil {
		return r.err
	}
	serviceAccounts := t.translateClients(v)
	if r.err != nil {
		return r.err
	}
	t.translateRoles(v)
	if r.err != nil {
		return r.err
	}
	t.serviceAccounts(serviceAccounts)
	t.translateGroups(v.get("groups"), "")
	if r.err != nil {
		return r.err
	}
	t.translateProviders(v)
	if r.err != nil {
		return r.err
	}
	if err := t.people(ctx, v); err != nil {
		return err
	}
	t.unmapped(v)
	return r.err
}

// kcPath names an error of the realm import where the export has it.
func (t *translation) kcPath(err error) error {
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Field == "" {
		return err
	}
	best := ""
	for k := range t.paths {
		if (ae.Field == k || strings.HasPrefix(ae.Field, k+".") || strings.HasPrefix(ae.Field, k+"[")) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return err
	}
	field := t.paths[best] + strings.TrimPrefix(ae.Field, best)
	out := *ae
	out.Field = field
	out.Message = field + strings.TrimPrefix(ae.Message, ae.Field)
	return &out
}

// secretHash is what the realm format keeps of a client secret.
func secretHash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return base64.StdEncoding.EncodeToString(h[:])
}

// keycloakBuiltInClients are the clients every Keycloak realm has for
// Keycloak itself; this server has its own account and admin consoles.
var keycloakBuiltInClients = []string{"account", "account-console", "admin-cli", "broker", "realm-management",
	"security-admin-console"}

func (t *translation) translateClients(v val) map[string]val {
	serviceAccounts := map[string]val{}
	for _, u := range v.get("users").items() {
		if c := u.get("serviceAccountClientId").str(); c != "" {
			serviceAccounts[c] = u
		}
	}
	for _, c := range v.get("clients").items() {
		clientID := c.get("clientId").str()
		if c.r.err != nil {
			return nil
		}
		if clientID == "" {
			c.r.fail(c.path+".clientId", "is required")
			return nil
		}
		switch {
		case slices.Contains(keycloakBuiltInClients, clientID) || strings.HasSuffix(clientID, "-realm"):
			t.skipped[clientID] = "Keycloak's own client: this server has its own account and admin consoles"
		case c.get("protocol").str() == "saml":
			t.skipped[clientID] = "a SAML client: create it as a SAML service provider (its metadata holds what it needs)"
		}
		if why := t.skipped[clientID]; why != "" {
			t.rep.skip(c.path, KindClient, clientID, "%s", why)
			continue
		}
		oc := t.client(c, clientID, serviceAccounts[clientID].set)
		if c.r.err != nil {
			return nil
		}
		t.paths[fmt.Sprintf("clients[%d]", len(t.out.Clients))] = c.path
		t.out.Clients = append(t.out.Clients, oc)
		t.clients[clientID] = oc
		t.clientRoles[clientID] = map[string]bool{}
		t.rep.imported(c.path, KindClient, clientID)
	}
	return serviceAccounts
}

func (t *translation) client(c val, clientID string, hasServiceUser bool) *outClient {
	attrs := c.get("attributes").strMap()
	attr := func(k string) string { return attrs[k] }
	oc := &outClient{ID: t.id(c.get("id")), ClientID: clientID, Name: c.get("name").str(),
		Description: c.get("description").str(), Enabled: c.get("enabled").boolean(true),
		RequireConsent: c.get("consentRequired").boolean(false), RedirectURIs: []string{}, WebOrigins: []string{},
		GrantTypes: []string{}}
	if strings.Contains(oc.Name, "${") {
		oc.Name = "" // a message key of Keycloak's themes
	}
	public := c.get("publicClient").boolean(false)
	bearerOnly := c.get("bearerOnly").boolean(false)
	oc.ClientType = identity.ClientConfidential
	if public {
		oc.ClientType = identity.ClientPublic
	}
	grants := []string{}
	if bearerOnly {
		t.rep.skip(c.path+".bearerOnly", KindSetting, clientID, "a bearer-only client: imported without grants, so it only "+
			"checks tokens (introspection with its secret)")
	} else {
		if c.get("standardFlowEnabled").boolean(true) {
			grants = append(grants, identity.GrantAuthorizationCode)
		}
		if c.get("directAccessGrantsEnabled").boolean(false) {
			grants = append(grants, identity.GrantPassword)
		}
		if attr("oauth2.device.authorization.grant.enabled") == "true" {
			grants = append(grants, identity.GrantDeviceCode)
		}
		if len(grants) > 0 && attr("use.refresh.tokens") != "false" {
			grants = append(grants, identity.GrantRefreshToken)
		}
		sa := c.get("serviceAccountsEnabled").boolean(false) || c.get("authorizationServicesEnabled").boolean(false) || hasServiceUser
		switch {
		case sa && public:
			t.rep.skip(c.path+".serviceAccountsEnabled", KindSetting, clientID, "a public client has no secret to use the client_credentials grant with")
		case sa:
			grants = append(grants, identity.GrantClientCredentials)
		}
		if c.get("implicitFlowEnabled").boolean(false) {
			t.rep.skip(c.path+".implicitFlowEnabled", KindSetting, clientID, "the implicit flow is not offered (OAuth 2.0 "+
				"Security BCP): the client uses the authorization code flow with PKCE")
		}
	}
	oc.GrantTypes = grants
	switch m := attr("pkce.code.challenge.method"); {
	case m == "":
	case m != "S256":
		t.rep.skip(c.path+".attributes.pkce.code.challenge.method", KindSetting, clientID, "only S256 is accepted here")
	case !public:
		t.rep.skip(c.path+".attributes.pkce.code.challenge.method", KindSetting, clientID, "PKCE (S256) is required of "+
			"public clients here, and accepted from a confidential client, which it does not require")
	}
	if secret := c.get("secret").str(); secret != "" && !public {
		if strings.Trim(secret, "*") == "" {
			t.rep.skip(c.path+".secret", KindCredential, clientID, "the export masks the secret: regenerate it (regenerate-secret) and give it to the client")
		} else {
			oc.SecretHash = secretHash(secret)
		}
	}
	root := strings.TrimSuffix(c.get("rootUrl").str(), "/")
	for i, u := range c.get("redirectUris").strs() {
		path := fmt.Sprintf("%s.redirectUris[%d]", c.path, i)
		if strings.HasPrefix(u, "/") && root != "" {
			u = root + u
		}
		if _, err := identity.CheckRedirectURI("redirectUri", u); err != nil {
			t.rep.skip(path, KindSetting, u, "%s", reasonOf(err))
			continue
		}
		oc.RedirectURIs = append(oc.RedirectURIs, u)
	}
	for i, o := range c.get("webOrigins").strs() {
		norm, err := identity.NormalizeWebOrigin("webOrigin", o)
		if err != nil {
			t.rep.skip(fmt.Sprintf("%s.webOrigins[%d]", c.path, i), KindSetting, o, "%s", reasonOf(err))
			continue
		}
		oc.WebOrigins = append(oc.WebOrigins, norm)
	}
	if u := attr("backchannel.logout.url"); u != "" {
		oc.BackchannelLogoutURI = u
		b := attr("backchannel.logout.session.required") != "false"
		oc.BackchannelLogoutSessionRequired = &b
	}
	for _, k := range sortedKeys(attrs) {
		if !keycloakClientAttrs[k] && attrs[k] != "" && attrs[k] != "false" {
			t.rep.skip(c.path+".attributes."+k, KindSetting, clientID, "no client setting of this server matches it")
		}
	}
	for i := range c.get("protocolMappers").items() {
		t.rep.skip(fmt.Sprintf("%s.protocolMappers[%d]", c.path, i), KindMapper, clientID, "mappers belong to client scopes here: "+
			"put it in a client scope linked to the client")
	}
	if c.get("authorizationServicesEnabled").boolean(false) || c.has("authorizationSettings") {
		t.rep.skip(c.path+".authorizationSettings", KindSetting, clientID, "Keycloak's authorization services (resources, "+
			"policies, permissions) have no counterpart: the client's roles and scopes remain")
	}
	if c.get("frontchannelLogout").boolean(false) && attr("frontchannel.logout.url") != "" {
		t.rep.skip(c.path+".frontchannelLogout", KindSetting, clientID, "front-channel logout is not offered: use backchannel logout")
	}
	// Scope links resolve against the scopes the realm will have.
	oc.DefaultClientScopes = t.linkScopes(c, "defaultClientScopes", t.s.deps.ClientDefaultScopes)
	oc.OptionalClientScopes = t.linkScopes(c, "optionalClientScopes", t.s.deps.ClientOptionalScopes)
	if t.scopes["openid"] && !slices.Contains(oc.DefaultClientScopes, "openid") {
		oc.DefaultClientScopes = append([]string{"openid"}, oc.DefaultClientScopes...)
	}
	return oc
}

// keycloakClientAttrs are the client attributes read, or without meaning
// here (display switches, defaults Keycloak writes out).
var keycloakClientAttrs = map[string]bool{
	"oauth2.device.authorization.grant.enabled": true, "use.refresh.tokens": true, "pkce.code.challenge.method": true,
	"backchannel.logout.url": true, "backchannel.logout.session.required": true, "frontchannel.logout.url": true,
	"display.on.consent.screen": true, "client.secret.creation.time": true, "post.logout.redirect.uris": true,
	"backchannel.logout.revoke.offline.tokens": true, "oauth2.device.code.lifespan": true, "oauth2.device.polling.interval": true,
	"consent.screen.text": true, "login_theme": true, "realm_client": true,
}

// linkScopes are the client's scopes of a kind that the realm has; the
// others are reported. A client without the list gets a new client's.
func (t *translation) linkScopes(c val, key string, defaults []string) []string {
	out := []string{}
	if !c.has(key) {
		for _, name := range defaults {
			if t.scopes[name] {
				out = append(out, name)
			}
		}
		return out
	}
	for i, name := range c.get(key).strs() {
		if !t.scopes[name] {
			t.rep.skip(fmt.Sprintf("%s.%s[%d]", c.path, key, i), KindClientScope, name, "the realm has no client scope of that name")
			continue
		}
		out = append(out, name)
	}
	return out
}

// reasonOf is an error's message without its field.
func reasonOf(err error) string {
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Field != "" {
		return strings.TrimPrefix(ae.Message, ae.Field+": ")
	}
	return err.Error()
}

func (t *translation) translateScopes(v val) {
	if !v.has("clientScopes") {
		// The realm starts with the default scopes, as a new one does.
		for _, sc := range t.defaultScopes() {
			t.scopes[sc.Name] = true
		}
		return
	}
	list := []outScope{}
	for _, sc := range v.get("clientScopes").items() {
		name := sc.get("name").str()
		protocol := sc.get("protocol").str()
		if protocol == "" {
			protocol = "openid-connect"
		}
		if sc.r.err != nil {
			return
		}
		if protocol != "openid-connect" {
			t.rep.skip(sc.path, KindClientScope, name, "a %s scope: the client scopes here are OpenID Connect ones", protocol)
			continue
		}
		if t.scopes[name] {
			sc.r.fail(sc.path+".name", "another client scope is named %s", name)
			return
		}
		os := outScope{ID: t.id(sc.get("id")), Name: name, Description: sc.get("description").str(), Protocol: protocol,
			ProtocolMappers: []outMapper{}}
		for _, m := range sc.get("protocolMappers").items() {
			om, ok := t.mapper(m, protocol)
			if ok {
				os.ProtocolMappers = append(os.ProtocolMappers, om)
				t.rep.imported(m.path, KindMapper, om.Name)
			}
		}
		if sc.r.err != nil {
			return
		}
		t.paths[fmt.Sprintf("clientScopes[%d]", len(list))] = sc.path
		list = append(list, os)
		t.scopes[name] = true
		t.rep.imported(sc.path, KindClientScope, name)
	}
	// The scopes a new realm has and the export lacks ("openid", which
	// Keycloak handles outside its scope table, and this server's own).
	for _, d := range t.defaultScopes() {
		if t.scopes[d.Name] {
			continue
		}
		os := outScope{Name: d.Name, Description: d.Description, Protocol: d.Protocol, ProtocolMappers: []outMapper{}}
		for _, m := range d.ProtocolMappers {
			os.ProtocolMappers = append(os.ProtocolMappers, outMapper{Name: m.Name, MapperType: m.MapperType, Protocol: m.Protocol,
				Config: m.Config})
		}
		list = append(list, os)
		t.scopes[d.Name] = true
	}
	t.out.ClientScopes = &list
}

func (t *translation) defaultScopes() []Scope {
	if t.s.deps.DefaultScopes == nil {
		return nil
	}
	return t.s.deps.DefaultScopes()
}

// mapper translates a protocol mapper whose type this server has; the
// config keys its type does not read are dropped and reported.
func (t *translation) mapper(m val, protocol string) (outMapper, bool) {
	om := outMapper{ID: t.id(m.get("id")), Name: m.get("name").str(), MapperType: m.get("protocolMapper").str(),
		Protocol: m.get("protocol").str(), Config: m.get("config").strMap()}
	if om.Protocol == "" {
		om.Protocol = protocol
	}
	if m.r.err != nil || t.s.deps.CheckMapper == nil {
		return om, m.r.err == nil
	}
	for range len(om.Config) + 1 {
		err := t.s.deps.CheckMapper(protocol, Mapper{Name: om.Name, MapperType: om.MapperType, Protocol: om.Protocol, Config: om.Config})
		if err == nil {
			return om, true
		}
		var ae *apperr.Error
		if errors.As(err, &ae) && ae.Code == apperr.CodeUnknownField && strings.HasPrefix(ae.Field, "config.") {
			key := strings.TrimPrefix(ae.Field, "config.")
			if _, ok := om.Config[key]; ok {
				delete(om.Config, key)
				t.rep.skip(m.path+".config."+key, KindSetting, om.Name, "not a setting of %s here", om.MapperType)
				continue
			}
		}
		if errors.As(err, &ae) && ae.Field == "mapperType" {
			t.rep.skip(m.path, KindMapper, om.Name, "mapper type %s has no counterpart here", om.MapperType)
		} else {
			t.rep.skip(m.path, KindMapper, om.Name, "%s", reasonOf(err))
		}
		return om, false
	}
	return om, false
}

func (t *translation) translateRoles(v val) {
	roles := v.get("roles")
	t.out.Roles.Realm = []outRole{}
	t.out.Roles.Client = map[string][]outRole{}
	realm := roles.get("realm").items()
	for _, r := range realm {
		name := r.get("name").str()
		if r.r.err != nil {
			return
		}
		if name == "" {
			r.r.fail(r.path+".name", "is required")
			return
		}
		t.realmRoles[name] = true
	}
	client := roles.get("client")
	for _, clientID := range client.keys() {
		items := client.get(clientID).items()
		if t.clients[clientID] == nil {
			if len(items) > 0 {
				why := t.skipped[clientID]
				if why == "" {
					why = "the export has no client of that clientId"
				}
				t.rep.skip(client.get(clientID).path, KindRole, clientID, "the roles of a client left out: %s", why)
			}
			continue
		}
		for _, r := range items {
			name := r.get("name").str()
			if r.r.err != nil {
				return
			}
			if name == "" {
				r.r.fail(r.path+".name", "is required")
				return
			}
			t.clientRoles[clientID][name] = true
		}
	}
	for _, r := range realm {
		t.paths[fmt.Sprintf("roles.realm[%d]", len(t.out.Roles.Realm))] = r.path
		t.out.Roles.Realm = append(t.out.Roles.Realm, t.role(r))
	}
	for _, clientID := range client.keys() {
		if t.clients[clientID] == nil {
			continue
		}
		list := []outRole{}
		for _, r := range client.get(clientID).items() {
			t.paths[fmt.Sprintf("roles.client.%s[%d]", clientID, len(list))] = r.path
			list = append(list, t.role(r))
		}
		t.out.Roles.Client[clientID] = list
	}
}

func (t *translation) role(r val) outRole {
	name := r.get("name").str()
	or := outRole{ID: t.id(r.get("id")), Name: name, Description: r.get("description").str()}
	if strings.Contains(or.Description, "${") {
		or.Description = ""
	}
	if c := r.get("composites"); c.set {
		refs := t.roleRefs(c.get("realm"), c.get("client"), KindRole)
		or.Composites = &refs
	}
	if len(r.get("attributes").keys()) > 0 {
		t.rep.skip(r.path+".attributes", KindAttribute, name, "roles have no attributes here")
	}
	t.rep.imported(r.path, KindRole, name)
	return or
}

// roleRefs keeps the references to roles of the document; the others are
// reported, under kind.
func (t *translation) roleRefs(realm, client val, kind string) outRoleRefs {
	refs := outRoleRefs{RealmRoles: []string{}, ClientRoles: map[string][]string{}}
	for i, name := range realm.strs() {
		if t.realmRoles[name] {
			refs.RealmRoles = append(refs.RealmRoles, name)
		} else {
			t.rep.skip(fmt.Sprintf("%s[%d]", realm.path, i), kind, name, "the export defines no realm role %s", name)
		}
	}
	for _, clientID := range client.keys() {
		for i, name := range client.get(clientID).strs() {
			path := fmt.Sprintf("%s.%s[%d]", client.path, clientID, i)
			switch {
			case t.clientRoles[clientID][name]:
				refs.ClientRoles[clientID] = append(refs.ClientRoles[clientID], name)
			case t.skipped[clientID] != "":
				t.rep.skip(path, kind, clientID+"/"+name, "a role of a client left out: %s", t.skipped[clientID])
			default:
				t.rep.skip(path, kind, clientID+"/"+name, "the export defines no role %s of a client %s", name, clientID)
			}
		}
	}
	return refs
}

// serviceAccounts gives each client with the client_credentials grant
// the service-account user the export has for it, with its roles.
func (t *translation) serviceAccounts(users map[string]val) {
	for _, clientID := range sortedKeys(users) {
		u := users[clientID]
		oc := t.clients[clientID]
		if oc == nil || !slices.Contains(oc.GrantTypes, identity.GrantClientCredentials) {
			if t.skipped[clientID] == "" {
				t.rep.skip(u.path, KindUser, u.get("username").str(), "the service account of a client left out")
			}
			continue
		}
		refs := t.roleRefs(u.get("realmRoles"), u.get("clientRoles"), KindRoleMapping)
		enabled := u.get("enabled").boolean(true)
		oc.ServiceAccount = &outServiceAccount{ID: t.id(u.get("id")), Username: strings.ToLower(u.get("username").str()),
			Enabled: &enabled, outRoleRefs: refs}
		t.rep.imported(u.path, KindUser, oc.ServiceAccount.Username)
	}
}

// groups flattens the group tree, parents first.
func (t *translation) translateGroups(list val, parent string) {
	parentPath := ""
	for path, id := range t.groupIDs {
		if id == parent {
			parentPath = path
		}
	}
	for _, g := range list.items() {
		name := g.get("name").str()
		if g.r.err != nil {
			return
		}
		if name == "" {
			g.r.fail(g.path+".name", "is required")
			return
		}
		og := outGroup{ID: t.id(g.get("id")), Name: name, Description: g.get("description").str(), ParentID: parent}
		og.outRoleRefs = t.roleRefs(g.get("realmRoles"), g.get("clientRoles"), KindRoleMapping)
		if len(g.get("attributes").keys()) > 0 {
			t.rep.skip(g.path+".attributes", KindAttribute, name, "groups have no attributes here")
		}
		t.paths[fmt.Sprintf("groups[%d]", len(t.out.Groups))] = g.path
		t.out.Groups = append(t.out.Groups, og)
		t.groupIDs[parentPath+"/"+name] = og.ID
		t.rep.imported(g.path, KindGroup, parentPath+"/"+name)
		t.translateGroups(g.get("subGroups"), og.ID)
	}
}

// keycloakProviderTypes map Keycloak's identity provider types to this
// server's.
var keycloakProviderTypes = map[string]string{
	"oidc": "oidc", "keycloak-oidc": "oidc", "oauth2": "oauth2", "google": "google", "microsoft": "microsoft",
	"github": "github", "gitlab": "gitlab", "facebook": "facebook", "linkedin-openid-connect": "linkedin",
	"linkedin": "linkedin", "apple": "apple", "discord": "discord",
}

func (t *translation) translateProviders(v val) {
	for _, p := range v.get("identityProviders").items() {
		alias := p.get("alias").str()
		kind := p.get("providerId").str()
		cfg := p.get("config").strMap()
		if p.r.err != nil {
			return
		}
		ours, ok := keycloakProviderTypes[kind]
		if !ok {
			t.rep.skip(p.path, KindProvider, alias, "provider type %s has no counterpart here (OpenID Connect, OAuth 2.0 and "+
				"the social presets do)", kind)
			continue
		}
		secret := cfg["clientSecret"]
		if strings.Trim(secret, "*") == "" && secret != "" {
			secret = ""
			t.rep.skip(p.path+".config.clientSecret", KindCredential, alias, "the export masks the secret: set it on the provider")
		}
		out := map[string]any{"alias": alias, "displayName": p.get("displayName").str(), "providerType": ours,
			"enabled": p.get("enabled").boolean(true), "clientId": cfg["clientId"], "clientSecret": secret,
			"authorizationUrl": cfg["authorizationUrl"], "tokenUrl": cfg["tokenUrl"], "userinfoUrl": cfg["userInfoUrl"],
			"jwksUrl": cfg["jwksUrl"], "issuer": cfg["issuer"], "defaultScopes": cfg["defaultScope"],
			"trustEmail": p.get("trustEmail").boolean(false), "storeToken": p.get("storeToken").boolean(false),
			"syncUserProfile": cfg["syncMode"] == "FORCE", "logoutUrl": cfg["logoutUrl"]}
		if ours == "microsoft" && cfg["tenant"] != "" {
			out["tenant"] = cfg["tenant"]
		}
		raw, _ := json.Marshal(out)
		if t.s.deps.CheckProvider != nil {
			if err := t.s.deps.CheckProvider(raw); err != nil {
				t.rep.skip(p.path, KindProvider, alias, "%s", reasonOf(err))
				continue
			}
		}
		t.paths[fmt.Sprintf("identityProviders[%d]", len(t.out.IdentityProviders))] = p.path
		t.out.IdentityProviders = append(t.out.IdentityProviders, raw)
		t.providers[alias] = true
		t.rep.imported(p.path, KindProvider, alias)
	}
	for i := range v.get("identityProviderMappers").items() {
		t.rep.skip(fmt.Sprintf("%s.identityProviderMappers[%d]", v.path, i), KindMapper, "", "identity provider mappers have no "+
			"counterpart: set the provider's claimMapping")
	}
}

// people translates the users who are people (service accounts are their
// clients').
func (t *translation) people(ctx context.Context, v val) error {
	seen := map[string]string{}
	for _, u := range v.get("users").items() {
		if u.get("serviceAccountClientId").str() != "" {
			continue
		}
		nu, ou, err := t.person(ctx, u)
		if err != nil {
			return err
		}
		if u.r.err != nil {
			return u.r.err
		}
		if err := checkUser(nu, seen); err != nil {
			return err
		}
		ou.ID = nu.user.ID
		t.paths[fmt.Sprintf("users[%d]", len(t.out.Users))] = u.path
		t.out.Users = append(t.out.Users, ou)
		t.users = append(t.users, nu)
		t.rep.imported(u.path, KindUser, nu.user.Username)
	}
	return nil
}

func (t *translation) person(ctx context.Context, u val) (*newUser, *outUser, error) {
	nu := &newUser{path: u.path, attrPaths: map[string]string{}}
	su := &nu.user
	su.ID = t.id(u.get("id"))
	su.Username = u.get("username").str()
	su.Email = u.get("email").str()
	su.FirstName = u.get("firstName").str()
	su.LastName = u.get("lastName").str()
	su.Enabled = u.get("enabled").boolean(false)
	su.EmailVerified = u.get("emailVerified").boolean(false)
	su.CreatedAt = u.get("createdTimestamp").integer(0)
	if u.r.err != nil {
		return nil, nil, u.r.err
	}
	if strings.TrimSpace(su.Username) == "" {
		return nil, nil, apperr.Field(u.path+".username", "is required")
	}
	readAttributes(nu, u.get("attributes"), t.rep)
	for i, a := range u.get("requiredActions").strs() {
		requiredAction(nu, a, fmt.Sprintf("%s.requiredActions[%d]", u.path, i), t.rep)
	}
	if err := t.credentials(ctx, nu, u.get("credentials")); err != nil {
		return nil, nil, err
	}
	ou := &outUser{Username: su.Username, Email: su.Email, FirstName: su.FirstName, LastName: su.LastName,
		Enabled: su.Enabled, EmailVerified: su.EmailVerified, RequirePasswordReset: su.RequirePasswordReset,
		Groups: []string{}, Credentials: []outCredential{}, FederatedIdentities: []outFederated{}}
	if su.CreatedAt != 0 {
		ou.CreatedTimestamp = &su.CreatedAt
	}
	if su.PasswordHash != "" {
		ou.Credentials = append(ou.Credentials, outCredential{Type: "password", Hash: su.PasswordHash,
			CreatedTimestamp: su.PasswordChangedAt})
	}
	ou.outRoleRefs = t.roleRefs(u.get("realmRoles"), u.get("clientRoles"), KindRoleMapping)
	for i, g := range u.get("groups").strs() {
		path := fmt.Sprintf("%s.groups[%d]", u.path, i)
		if id := t.groupIDs[groupPath(g)]; id != "" {
			ou.Groups = append(ou.Groups, id)
			t.rep.imported(path, KindMembership, g)
		} else {
			t.rep.skip(path, KindMembership, g, "the export defines no group %s", g)
		}
	}
	for i, f := range u.get("federatedIdentities").items() {
		alias := f.get("identityProvider").str()
		path := fmt.Sprintf("%s.federatedIdentities[%d]", u.path, i)
		if !t.providers[alias] {
			t.rep.skip(path, KindFederatedLink, alias, "a link to an identity provider left out")
			continue
		}
		ou.FederatedIdentities = append(ou.FederatedIdentities, outFederated{IdentityProvider: alias,
			UserID: f.get("userId").str(), UserName: f.get("userName").str()})
		t.rep.imported(path, KindFederatedLink, alias)
	}
	if u.has("federationLink") {
		t.rep.skip(u.path+".federationLink", KindFederatedLink, su.Username, "a link to a user federation provider "+
			"(LDAP) of Keycloak: add the directory (userFederationProviders) and sync it")
	}
	return nu, ou, nil
}

// credentials reads a user's credentials: the first password (a hash
// kept, or a plain value hashed here) and the first OTP credential.
func (t *translation) credentials(ctx context.Context, nu *newUser, list val) error {
	su := &nu.user
	password := false
	for _, c := range list.items() {
		kind := c.get("type").str()
		if c.r.err != nil {
			return c.r.err
		}
		switch {
		case kind == "password" && password:
			t.rep.skip(c.path, KindCredential, su.Username, "a second password credential: the first is kept")
		case kind == "password":
			password = true
			if err := t.password(ctx, nu, c); err != nil {
				return err
			}
		case (kind == "otp" || kind == "totp") && nu.totp != nil:
			t.rep.skip(c.path, KindCredential, su.Username, "a second OTP credential: one authenticator app a user here")
		case kind == "otp" || kind == "totp":
			if err := t.otp(nu, c); err != nil {
				return err
			}
		default:
			why := "a credential type this server does not import"
			switch kind {
			case "webauthn", "webauthn-passwordless":
				why = "passkeys and security keys are bound to Keycloak's origin and relying party ID: the user registers theirs again"
			case "recovery-authn-codes":
				why = "recovery codes are hashed by Keycloak in a way not checked here: the user makes new ones with their authenticator app"
			}
			t.rep.skip(c.path, KindCredential, kind, "%s", why)
		}
	}
	return nil
}

// password keeps a Keycloak password credential: a hash of a supported
// algorithm as it is, a plain value (an export written by hand, as the
// quickstarts') hashed with argon2id; an unsupported one leaves the user
// owing a reset.
func (t *translation) password(ctx context.Context, nu *newUser, c val) error {
	su := &nu.user
	temporary := c.get("temporary").boolean(false)
	if temporary {
		su.RequirePasswordReset = true
	}
	su.PasswordChangedAt = c.get("createdDate").integer(0)
	if value := c.get("value"); value.set {
		plain := value.str()
		if c.r.err != nil {
			return c.r.err
		}
		if t.s.deps.Identity == nil {
			su.PasswordHash = "$plain$"
			return nil
		}
		h, err := t.s.deps.Identity.HashPassword(ctx, plain)
		if err != nil {
			return err
		}
		su.PasswordHash = h
		return nil
	}
	h, why := keycloakHash(c)
	if c.r.err != nil {
		return c.r.err
	}
	if why != "" {
		su.RequirePasswordReset = true
		t.rep.skip(c.path, KindCredential, su.Username, "%s: the user has no password and sets one through a password reset", why)
		return nil
	}
	su.PasswordHash = h
	return nil
}

// keycloakHash is the stored form of a Keycloak password hash, or why it
// cannot be kept. Keycloak writes credentialData ({"hashIterations",
// "algorithm", "additionalParameters"}) and secretData ({"value", "salt"},
// base64) as JSON strings; before version 12 the fields were the
// credential's own (hashedSaltedValue, salt, hashIterations, algorithm).
func keycloakHash(c val) (string, string) {
	var alg, value, saltText string
	var iterations int64
	var params map[string][]string
	var valuePath, saltPath string
	if c.has("hashedSaltedValue") {
		alg, iterations = c.get("algorithm").str(), c.get("hashIterations").integer(0)
		value, saltText = c.get("hashedSaltedValue").str(), c.get("salt").str()
		valuePath, saltPath = c.path+".hashedSaltedValue", c.path+".salt"
	} else {
		cd, sd := c.get("credentialData").embedded(), c.get("secretData").embedded()
		alg, iterations = cd.get("algorithm").str(), cd.get("hashIterations").integer(0)
		params = cd.get("additionalParameters").multiMap()
		value, saltText = sd.get("value").str(), sd.get("salt").str()
		valuePath, saltPath = sd.path, sd.path
	}
	if c.r.err != nil {
		return "", ""
	}
	param := func(k string) string {
		if v := params[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if alg == "bcrypt" {
		h := value
		if !strings.HasPrefix(h, "$2") {
			if b, err := base64.StdEncoding.DecodeString(value); err == nil {
				h = string(b)
			}
		}
		if _, err := identity.HashFormat(h); err != nil {
			return "", "a bcrypt hash this server cannot check"
		}
		return h, ""
	}
	key, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		c.r.fail(valuePath, "the hash (value) must be base64")
		return "", ""
	}
	salt, err := base64.StdEncoding.DecodeString(saltText)
	if err != nil {
		c.r.fail(saltPath, "the salt must be base64")
		return "", ""
	}
	var h string
	switch alg {
	case "pbkdf2-sha256", "pbkdf2-sha512", "pbkdf2", "pbkdf2-sha1":
		if alg == "pbkdf2" {
			alg = identity.FormatPBKDF2
		}
		h = identity.PBKDF2Hash(alg, int(iterations), salt, key)
	case "argon2":
		variant := map[string]string{"id": identity.FormatArgon2id, "i": identity.FormatArgon2i, "": identity.FormatArgon2id}[param("type")]
		if variant == "" {
			return "", "an Argon2" + param("type") + " hash: only Argon2id and Argon2i are checked here"
		}
		if v := param("version"); v != "" && v != "1.3" {
			return "", "an Argon2 hash of version " + v + ": only 1.3 is checked here"
		}
		memory, _ := strconv.Atoi(param("memory"))
		threads, _ := strconv.Atoi(param("parallelism"))
		if threads == 0 {
			threads = 1
		}
		if memory <= 0 || memory > 1<<22 || threads > 255 || iterations <= 0 || iterations > 1<<20 {
			return "", "an Argon2 hash whose parameters are out of bounds"
		}
		h = identity.Argon2Hash(variant, uint32(memory), uint32(iterations), uint8(threads), salt, key)
	case "":
		return "", "a password credential without algorithm"
	default:
		return "", "algorithm " + alg + " is not checked here"
	}
	if _, err := identity.HashFormat(h); err != nil {
		return "", fmt.Sprintf("a %s hash whose parameters are out of the bounds checked here", alg)
	}
	return h, ""
}

// otp keeps a Keycloak OTP credential that this server's TOTP checks the
// same way: time-based, HMAC-SHA1, six digits, 30-second steps. Keycloak
// keeps the secret as text, whose bytes are the HMAC key (its QR code
// shows their base32), or as base32 (secretEncoding BASE32).
func (t *translation) otp(nu *newUser, c val) error {
	cd, sd := c.get("credentialData").embedded(), c.get("secretData").embedded()
	sub, digits, period := cd.get("subType").str(), cd.get("digits").integer(6), cd.get("period").integer(30)
	alg, encoding := cd.get("algorithm").str(), cd.get("secretEncoding").str()
	secret := sd.get("value").str()
	if c.r.err != nil {
		return c.r.err
	}
	var why string
	switch {
	case sub != "" && sub != "totp":
		why = "a counter-based (HOTP) credential: only time-based codes are checked here"
	case alg != "" && alg != "HmacSHA1":
		why = "an " + alg + " credential: only HMAC-SHA1 codes (authenticator apps' default) are checked here"
	case digits != 6 || period != 30:
		why = fmt.Sprintf("a credential of %d digits every %d seconds: codes here are of 6 digits every 30 seconds", digits, period)
	case secret == "":
		why = "a credential without its secret"
	}
	if why != "" {
		t.rep.skip(c.path, KindCredential, nu.user.Username, "%s; the user sets up their authenticator app again", why)
		return nil
	}
	key := []byte(secret)
	if strings.EqualFold(encoding, "BASE32") {
		b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
		if err != nil {
			return apperr.Field(sd.path, "the secret must be base32, as its secretEncoding says")
		}
		key = b
	}
	nu.totp = &totpSecret{path: c.path, label: c.get("userLabel").str(), secret: key}
	return nil
}
