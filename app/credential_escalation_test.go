package app

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/scim"
)

// permissionProbe is a request that needs one permission and changes
// nothing: with the permission it is answered neither 401 nor 403 (a read,
// or a write refused for its body or an unknown ID).
type permissionProbe struct {
	method, template string
	body             any
}

var permissionProbes = map[authz.Permission]permissionProbe{
	authz.SystemRead:             {http.MethodGet, "/admin/realms", nil},
	authz.SystemManage:           {http.MethodPost, "/admin/realms", map[string]any{}},
	authz.RealmRead:              {http.MethodGet, "/admin/realms/{realm}", nil},
	authz.RealmWrite:             {http.MethodPut, "/realms/{realm}/registration/admin/fields/{fieldId}", map[string]any{}},
	authz.UsersRead:              {http.MethodGet, "/admin/realms/{realm}/users", nil},
	authz.UsersWrite:             {http.MethodPost, "/admin/realms/{realm}/users", map[string]any{}},
	authz.ClientsRead:            {http.MethodGet, "/admin/realms/{realm}/clients", nil},
	authz.ClientsWrite:           {http.MethodPost, "/admin/realms/{realm}/clients", map[string]any{}},
	authz.RolesRead:              {http.MethodGet, "/admin/realms/{realm}/roles", nil},
	authz.RolesWrite:             {http.MethodPost, "/admin/realms/{realm}/roles", map[string]any{}},
	authz.GroupsRead:             {http.MethodGet, "/admin/realms/{realm}/groups", nil},
	authz.GroupsWrite:            {http.MethodPost, "/admin/realms/{realm}/groups", map[string]any{}},
	authz.ScopesRead:             {http.MethodGet, "/admin/realms/{realm}/client-scopes", nil},
	authz.ScopesWrite:            {http.MethodPost, "/admin/realms/{realm}/client-scopes", map[string]any{}},
	authz.SessionsRead:           {http.MethodGet, "/admin/realms/{realm}/sessions", nil},
	authz.SessionsEnd:            {http.MethodDelete, "/admin/realms/{realm}/sessions/{sessionId}", nil},
	authz.EventsRead:             {http.MethodGet, "/admin/realms/{realm}/events/config", nil},
	authz.EventsWrite:            {http.MethodPut, "/admin/realms/{realm}/events/config", map[string]any{"unknownField": true}},
	authz.IdentityProvidersRead:  {http.MethodGet, "/admin/realms/{realm}/identity-providers", nil},
	authz.IdentityProvidersWrite: {http.MethodPost, "/admin/realms/{realm}/identity-providers", map[string]any{}},
	authz.SCIMRead:               {http.MethodGet, "/admin/realms/{realm}/scim/tokens", nil},
	authz.SCIMWrite:              {http.MethodDelete, "/admin/realms/{realm}/scim/tokens/{tokenId}", nil},
	authz.NHIRead:                {http.MethodGet, "/admin/realms/{realm}/nhi", nil},
	authz.NHIWrite:               {http.MethodPost, "/admin/realms/{realm}/nhi/{id}/suspend", nil},
	authz.OrgsRead:               {http.MethodGet, "/admin/realms/{realm}/organizations", nil},
	authz.OrgsWrite:              {http.MethodPost, "/admin/realms/{realm}/organizations", map[string]any{}},
	authz.RiskRead:               {http.MethodGet, "/admin/realms/{realm}/risk-policies", nil},
	authz.RiskWrite:              {http.MethodPost, "/admin/realms/{realm}/risk-policies", map[string]any{}},
	authz.PoliciesRead:           {http.MethodGet, "/admin/realms/{realm}/policies", nil},
	authz.PoliciesWrite:          {http.MethodPost, "/admin/realms/{realm}/policies", map[string]any{}},
	authz.UsersImpersonate:       {http.MethodPost, "/admin/realms/{realm}/impersonation/end", map[string]any{}},
}

// realmPermissions are the permissions a service account may hold: all
// but the system's.
func realmPermissions() []authz.Permission {
	return slices.DeleteFunc(slices.Clone(authz.All), func(p authz.Permission) bool {
		return p == authz.SystemRead || p == authz.SystemManage
	})
}

// probePermissions sends every probe with the credential header cred and
// answers which permissions it was let through for.
func probePermissions(t *testing.T, s *testServer, cred string) []authz.Permission {
	t.Helper()
	var held []authz.Permission
	for _, p := range authz.All {
		pr := permissionProbes[p]
		path := authFillPath(t, pr.template, "acme", "00000000-0000-4000-8000-000000000000")
		r := s.request(pr.method, path, pr.body, cred)
		switch r.Status {
		case http.StatusUnauthorized, http.StatusForbidden:
		default:
			held = append(held, p)
		}
	}
	return held
}

// What the credential in an answer is, to use it.
const (
	mintsAdminKey     = "admin API key"
	mintsClientSecret = "client secret"
	mintsOther        = "other" // authenticates nothing at the admin API: a key pair, a certificate, a SCIM token
)

// mintRoute is a route that answers a credential, and what its holder may
// do.
type mintRoute struct {
	name, method, template string
	perm                   authz.Permission
	holder                 []authz.Permission // what the credential's holder may do
	kind                   string
	clientID               string // of a client secret, when the answer does not name it
	body                   func() any
	after                  func(t *testing.T, answer map[string]any) // keeps the target's credentials within their limit
}

// outside is what of want is not in held, in want's order.
func outside(want []authz.Permission, held authz.Set) []authz.Permission {
	return slices.DeleteFunc(slices.Clone(want), held.Has)
}

// A credential issues itself no further than its issuer: every route
// that mints a credential or token answers each caller either 403,
// naming a permission the caller lacks, or a credential whose holder has
// no permission the caller lacks, measured by using it at the admin API.
func TestCredentialsNeverExceedTheirIssuer(t *testing.T) {
	s := newTestServer(t, authWithAdminUser(nil))
	s.createRealm("acme")
	realmAll := realmPermissions()

	// The probes are the table's and each opens to the permission it is
	// for: to the admin API key, and to no token that lacks it.
	for p, pr := range permissionProbes {
		i := slices.IndexFunc(s.app.table, func(rt route) bool { return rt.method == pr.method && rt.path == pr.template })
		if i < 0 || s.app.table[i].access.perm != p {
			t.Fatalf("the probe of %s, %s %s, is not a route of that permission", p, pr.method, pr.template)
		}
	}
	if got := probePermissions(t, s, "X-Admin-API-Key: "+testAPIKey); len(got) != len(authz.All) {
		t.Fatalf("the admin API key passes the probes of %v only", got)
	}

	// The target: a service account holding every permission of the realm,
	// with an API key and a client secret to rotate; a device; a client.
	r := s.admin(http.MethodPost, "/admin/realms/acme/service-accounts", map[string]any{"name": "root-automation",
		"adminPermissions": permNames(realmAll)})
	mustStatus(t, r, http.StatusCreated)
	target := r.object(t)["id"].(string)
	targetClient := r.object(t)["clientId"].(string)
	r = s.admin(http.MethodPost, "/admin/realms/acme/service-accounts/"+target+"/api-keys", map[string]any{})
	mustStatus(t, r, http.StatusCreated)
	keyID := r.object(t)["id"].(string)
	r = s.admin(http.MethodPost, "/admin/realms/acme/nhi/"+target+"/credentials", map[string]any{"type": "client_secret"})
	mustStatus(t, r, http.StatusCreated)
	secretID := r.object(t)["id"].(string)
	r = s.admin(http.MethodPost, "/admin/realms/acme/nhi", map[string]any{"kind": "device", "name": "sensor-1"})
	mustStatus(t, r, http.StatusCreated)
	device := r.object(t)["id"].(string)
	r = s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "backend",
		"grantTypes": []string{"client_credentials"}})
	mustStatus(t, r, http.StatusCreated)
	// A named admin API key holding every permission of a realm, to rotate.
	r = s.admin(http.MethodPost, "/admin/api-keys", map[string]any{"name": "realm-automation", "permissions": permNames(realmAll)})
	mustStatus(t, r, http.StatusCreated)
	adminKeyID := r.object(t)["id"].(string)

	n := 0
	routes := []mintRoute{
		{name: "service account API key", method: http.MethodPost, template: "/admin/realms/{realm}/service-accounts/{id}/api-keys",
			perm: authz.NHIWrite, holder: realmAll, kind: mintsAdminKey, body: func() any { return map[string]any{} },
			after: func(t *testing.T, answer map[string]any) { revokeCredential(t, s, target, answer["id"].(string)) }},
		{name: "service account API key rotation", method: http.MethodPost,
			template: "/admin/realms/{realm}/service-accounts/{id}/api-keys/{keyId}/rotate",
			perm:     authz.NHIWrite, holder: realmAll, kind: mintsAdminKey,
			after: func(t *testing.T, answer map[string]any) { keyID = answer["id"].(string) }},
		{name: "identity API key", method: http.MethodPost, template: "/admin/realms/{realm}/nhi/{id}/credentials",
			perm: authz.NHIWrite, holder: realmAll, kind: mintsAdminKey, body: func() any { return map[string]any{"type": "api_key"} },
			after: func(t *testing.T, answer map[string]any) { revokeCredential(t, s, target, answer["id"].(string)) }},
		{name: "identity client secret", method: http.MethodPost, template: "/admin/realms/{realm}/nhi/{id}/credentials",
			perm: authz.NHIWrite, holder: realmAll, kind: mintsClientSecret, clientID: targetClient,
			body:  func() any { return map[string]any{"type": "client_secret"} },
			after: func(t *testing.T, answer map[string]any) { revokeCredential(t, s, target, answer["id"].(string)) }},
		{name: "identity client secret rotation", method: http.MethodPost,
			template: "/admin/realms/{realm}/nhi/{id}/credentials/{credentialId}/rotate",
			perm:     authz.NHIWrite, holder: realmAll, kind: mintsClientSecret, clientID: targetClient,
			after: func(t *testing.T, answer map[string]any) { secretID = answer["id"].(string) }},
		{name: "identity public key", method: http.MethodPost, template: "/admin/realms/{realm}/nhi/{id}/credentials",
			perm: authz.NHIWrite, holder: realmAll, kind: mintsOther,
			body:  func() any { return map[string]any{"type": "public_key", "publicKey": newPublicKeyPEM(t)} },
			after: func(t *testing.T, answer map[string]any) { revokeCredential(t, s, target, answer["id"].(string)) }},
		{name: "identity certificate", method: http.MethodPost, template: "/admin/realms/{realm}/nhi/{id}/certificate",
			perm: authz.NHIWrite, holder: realmAll, kind: mintsOther, body: func() any { return map[string]any{} },
			after: func(t *testing.T, answer map[string]any) { revokeCredential(t, s, target, answer["id"].(string)) }},
		{name: "device certificate", method: http.MethodPost, template: "/admin/realms/{realm}/nhi/device-certificates",
			perm: authz.NHIWrite, kind: mintsOther, body: func() any { return map[string]any{"identityId": device} },
			after: func(t *testing.T, answer map[string]any) { revokeCredential(t, s, device, answer["id"].(string)) }},
		{name: "SCIM token", method: http.MethodPost, template: "/admin/realms/{realm}/scim/tokens",
			perm: authz.SCIMWrite, holder: scim.TokenPermissions, kind: mintsOther,
			body: func() any { n++; return map[string]any{"name": fmt.Sprintf("provisioning-%d", n)} }},
		{name: "client secret regeneration", method: http.MethodPost, template: "/admin/realms/{realm}/clients/{clientId}/regenerate-secret",
			perm: authz.ClientsWrite, kind: mintsClientSecret, clientID: "backend"},
		{name: "client secret regeneration of a service account's client", method: http.MethodPost,
			template: "/admin/realms/{realm}/clients/root-automation/regenerate-secret", perm: authz.ClientsWrite,
			kind: mintsClientSecret, clientID: "root-automation"},
		{name: "named admin API key", method: http.MethodPost, template: "/admin/api-keys", perm: authz.SystemManage,
			holder: realmAll, kind: mintsAdminKey, body: func() any {
				n++
				return map[string]any{"name": fmt.Sprintf("automation-%d", n), "permissions": permNames(realmAll)}
			}},
		{name: "named admin API key rotation", method: http.MethodPost, template: "/admin/api-keys/{id}/rotate",
			perm: authz.SystemManage, holder: realmAll, kind: mintsAdminKey},
		{name: "client creation", method: http.MethodPost, template: "/admin/realms/{realm}/clients", perm: authz.ClientsWrite,
			kind: mintsClientSecret, body: func() any {
				n++
				return map[string]any{"clientId": fmt.Sprintf("job-%d", n), "grantTypes": []string{"client_credentials"}}
			}},
	}
	path := func(tpl string) string {
		if strings.HasPrefix(tpl, "/admin/api-keys/") {
			return strings.Replace(tpl, "{id}", adminKeyID, 1)
		}
		return strings.NewReplacer("{realm}", "acme", "{id}", target, "{clientId}", "backend", "{keyId}", keyID,
			"{credentialId}", secretID).Replace(tpl)
	}

	// Every route that may answer a credential is in the table above.
	mints := regexp.MustCompile(`/(api-keys|credentials|certificate|device-certificates|tokens|regenerate-secret|rotate|impersonation)$|^/admin/realms/\{realm\}/clients$`)
	for _, rt := range s.app.table {
		if rt.method != http.MethodPost || rt.access.kind != accessAdmin || !mints.MatchString(rt.path) ||
			rt.path == "/admin/realms/{realm}/keys/rotate" {
			continue
		}
		if !slices.ContainsFunc(routes, func(m mintRoute) bool { return m.template == rt.path }) {
			t.Errorf("%s %s may mint a credential and is not in this test's table", rt.method, rt.path)
		}
	}

	sets := [][]authz.Permission{
		{authz.SystemManage, authz.NHIWrite},
		{authz.NHIWrite},
		{authz.NHIRead, authz.NHIWrite},
		{authz.NHIWrite, authz.UsersWrite, authz.ClientsWrite},
		{authz.SCIMWrite},
		{authz.SCIMWrite, authz.UsersWrite, authz.GroupsWrite},
		{authz.SCIMWrite, authz.UsersRead, authz.UsersWrite, authz.GroupsRead, authz.GroupsWrite},
		{authz.ClientsWrite},
		slices.DeleteFunc(slices.Clone(realmAll), func(p authz.Permission) bool { return p == authz.UsersWrite }),
		realmAll,
		authz.All,
	}
	issued := map[string]bool{}
	for i, set := range sets {
		held, err := authz.Parse(permNames(set))
		if err != nil {
			t.Fatal(err)
		}
		// The callers holding the set: a token of an admin signed in for
		// it, a named admin API key, and a service account's API key when
		// the set is a realm's.
		token := authLoginFor(t, s, set)
		if got := probePermissions(t, s, authBearer(token)); !slices.Equal(permNames(got), authz.Names(held)) {
			t.Fatalf("admin sign-in for %v: the token passes the probes of %v", set, got)
		}
		callers := map[string]string{"admin token": authBearer(token)}
		r := s.admin(http.MethodPost, "/admin/api-keys", map[string]any{"name": fmt.Sprintf("caller-%d", i),
			"permissions": permNames(set)})
		mustStatus(t, r, http.StatusCreated)
		callers["named admin API key"] = authBearer(r.object(t)["apiKey"].(string))
		if len(outside(set, authz.Everything().Without(authz.SystemRead, authz.SystemManage))) == 0 {
			r := s.admin(http.MethodPost, "/admin/realms/acme/service-accounts", map[string]any{
				"name": fmt.Sprintf("caller-%d", i), "adminPermissions": permNames(set)})
			mustStatus(t, r, http.StatusCreated)
			sa := r.object(t)["id"].(string)
			r = s.admin(http.MethodPost, "/admin/realms/acme/service-accounts/"+sa+"/api-keys", map[string]any{})
			mustStatus(t, r, http.StatusCreated)
			callers["service account API key"] = authBearer(r.object(t)["apiKey"].(string))
		}
		for callerKind, cred := range callers {
			for _, rt := range routes {
				name := fmt.Sprintf("%s holding %v: %s", callerKind, set, rt.name)
				var body any
				if rt.body != nil {
					body = rt.body()
				}
				r := s.request(rt.method, path(rt.template), body, cred)
				if callerKind == "service account API key" && !strings.Contains(rt.template, "{realm}") {
					mustError(t, r, http.StatusUnauthorized, "unauthorized", "") // it acts only in its realm
					continue
				}
				missing := outside(append([]authz.Permission{rt.perm}, rt.holder...), held)
				if len(missing) > 0 {
					if r.Status == http.StatusForbidden {
						mustError(t, r, http.StatusForbidden, "forbidden", "")
						if !strings.Contains(string(r.Body), string(missing[0])) {
							t.Errorf("%s: the 403 does not name %s: %s", name, missing[0], r.Body)
						}
						continue
					}
					t.Errorf("%s: %d, want 403 for lacking %v", name, r.Status, missing)
				}
				if r.Status != http.StatusCreated && r.Status != http.StatusOK {
					t.Errorf("%s: %d %s", name, r.Status, r.Body)
					continue
				}
				answer := r.object(t)
				issued[rt.name] = true
				var use string
				switch rt.kind {
				case mintsAdminKey:
					use = authBearer(answer["apiKey"].(string))
				case mintsClientSecret:
					id := rt.clientID
					if id == "" {
						id = answer["clientId"].(string)
					}
					tok := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=client_credentials",
						"Content-Type: application/x-www-form-urlencoded", codeflowBasic(id, answer["secret"].(string)))
					if tok.Status == http.StatusUnauthorized {
						break // the secret authenticates nothing
					}
					mustStatus(t, tok, http.StatusOK)
					use = authBearer(tok.object(t)["access_token"].(string))
				}
				if use != "" {
					got := probePermissions(t, s, use)
					if extra := outside(got, held); len(extra) > 0 {
						t.Errorf("%s: the credential it answered holds %v, which the caller does not", name, extra)
					}
					if rt.kind == mintsAdminKey && len(got) == 0 {
						t.Errorf("%s: the API key it answered passes no probe: the probes measure nothing", name)
					}
				}
				if rt.after != nil {
					rt.after(t, answer)
				}
			}
		}
	}
	for _, rt := range routes {
		if !issued[rt.name] {
			t.Errorf("no caller was answered a %s: the table checks its refusals only", rt.name)
		}
	}
}

// authLoginFor signs the test's admin user in for the permissions, all of
// them by leaving the list out.
func authLoginFor(t *testing.T, s *testServer, perms []authz.Permission) string {
	t.Helper()
	body := map[string]any{"username": authTestAdminUser, "password": authTestAdminPassword}
	if len(perms) != len(authz.All) {
		body["permissions"] = permNames(perms)
	}
	r := s.request(http.MethodPost, "/admin/auth/login", body)
	mustStatus(t, r, http.StatusOK)
	return r.object(t)["accessToken"].(string)
}

func permNames(perms []authz.Permission) []string {
	out := make([]string, len(perms))
	for i, p := range perms {
		out[i] = string(p)
	}
	return out
}

func revokeCredential(t *testing.T, s *testServer, identityID, credID string) {
	t.Helper()
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/nhi/"+identityID+"/credentials/"+credID+"/revoke", nil), http.StatusOK)
}

// newPublicKeyPEM is a new Ed25519 public key as the credentials API takes
// it: a PEM block in a JSON string.
func newPublicKeyPEM(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}
