package app

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/pbkdf2"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/app/migration"
	"github.com/idenplane/idenplane/store"
)

// The imports of other products' exports (app/migration, docs/migration.md),
// through the real router over a real SQLite file: the fixtures of
// ../shared/fixtures as they are, exports made here with known passwords
// in each hash format, and then the users signing in through the hosted
// pages with the passwords they had.

// migrationFixtures is ../shared/fixtures beside the repository (CI lays
// shared/ there; a work tree one level further down finds it one level
// up). Without it the test is skipped, or failed under CI=true.
func migrationFixtures(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{filepath.Join("..", "..", "shared", "fixtures"), filepath.Join("..", "..", "..", "shared", "fixtures")} {
		if _, err := os.Stat(filepath.Join(dir, "keycloak")); err == nil {
			return dir
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("../shared/fixtures is missing, and CI=true needs it: the Keycloak and Auth0 exports the importers are tested on")
	}
	t.Skip("../shared/fixtures is missing: the Keycloak and Auth0 exports the importers are tested on")
	return ""
}

func readFixture(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// migrationReport is the answer of an import.
type migrationReport struct {
	Realm    string           `json:"realm"`
	DryRun   bool             `json:"dryRun"`
	Counts   map[string]int   `json:"counts"`
	Imported []migration.Item `json:"imported"`
	Skipped  []migration.Item `json:"skipped"`
}

// skipped is the item skipped at path (of kind, when given).
func (r migrationReport) skipped(path string, kind ...string) *migration.Item {
	for i := range r.Skipped {
		if r.Skipped[i].Path == path && (len(kind) == 0 || r.Skipped[i].Kind == kind[0]) {
			return &r.Skipped[i]
		}
	}
	return nil
}

func (s *oidcTestServer) migrate(t *testing.T, path string, body any, want int) migrationReport {
	t.Helper()
	r := s.admin(http.MethodPost, path, body)
	mustStatus(t, r, want)
	var rep migrationReport
	r.decode(t, &rep)
	return rep
}

// storedUser reads a user of a realm by username, through the store.
func (s *oidcTestServer) storedUser(t *testing.T, realmName, username string) *store.User {
	t.Helper()
	realm, err := s.store.GetRealm(t.Context(), realmName)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.store.GetUserByUsername(t.Context(), realm.ID, username)
	if err != nil {
		t.Fatalf("user %s of %s: %v", username, realmName, err)
	}
	return u
}

// signInThroughPages signs username in to a confidential client of realm
// through the hosted sign-in page, with the TOTP code of totpKey when it
// is given, and answers the access token's claims.
func (s *oidcTestServer) signInThroughPages(t *testing.T, realm, clientID, secret, username, password string, totpKey []byte) map[string]any {
	t.Helper()
	provider, err := oidc.NewProvider(t.Context(), s.issuer(realm))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: provider.Endpoint(), RedirectURL: codeflowRedirect,
		Scopes: []string{"openid"}}
	e := &codeflowEnv{oidcTestServer: s, t: t}
	b := e.browser()
	p := b.follow(s.url, cfg.AuthCodeURL("migrated"))
	if p.status != http.StatusOK {
		t.Fatalf("sign-in page: status %d; body %s", p.status, p.body)
	}
	p = b.submit(p, map[string]string{"username": username, "password": password})
	if totpKey != nil {
		if p.status != http.StatusSeeOther {
			t.Fatalf("password step: status %d, want 303 to the TOTP page; body %s", p.status, p.body)
		}
		page := b.follow(s.url, p.location(t).String())
		secret := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(totpKey)
		p = b.submit(page, map[string]string{"code": totpTestCode(t, secret, time.Now())})
	}
	back := e.redirectedBack(p)
	tok, err := cfg.Exchange(t.Context(), back.Get("code"))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	_, claims := jwtParts(t, tok.AccessToken)
	return claims
}

// signInRefused checks the sign-in page refuses a password.
func (s *oidcTestServer) signInRefused(t *testing.T, realm, clientID, secret, username, password string) {
	t.Helper()
	provider, err := oidc.NewProvider(t.Context(), s.issuer(realm))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: provider.Endpoint(), RedirectURL: codeflowRedirect}
	e := &codeflowEnv{oidcTestServer: s, t: t}
	b := e.browser()
	p := b.follow(s.url, cfg.AuthCodeURL("migrated"))
	p = b.submit(p, map[string]string{"username": username, "password": password})
	if p.status/100 == 3 {
		t.Fatalf("a wrong password of %s signed in: %s", username, p.header.Get("Location"))
	}
}

// testClient adds a confidential client with codeflowRedirect to an
// imported realm, and answers its secret.
func (s *oidcTestServer) testClient(t *testing.T, realm string) string {
	t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms/"+realm+"/clients", map[string]any{"clientId": "migration-check",
		"redirectUris": []string{codeflowRedirect}, "grantTypes": []string{"authorization_code"}})
	mustStatus(t, r, http.StatusCreated)
	return r.object(t)["secret"].(string)
}

func realmRolesOf(claims map[string]any) []string {
	access, _ := claims["realm_access"].(map[string]any)
	var out []string
	for _, r := range access["roles"].([]any) {
		out = append(out, r.(string))
	}
	return out
}

func mustContain(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Fatalf("%s %v, want %v among them", what, got, want)
		}
	}
}

// The Keycloak fixtures: every file imports; users whose export gives
// their password sign in with it, their tokens carrying their roles.
func TestMigrationKeycloakFixtures(t *testing.T) {
	dir := filepath.Join(migrationFixtures(t), "keycloak")
	type signIn struct {
		username, password string
		roles              []string
	}
	cases := map[string]struct {
		realm   string
		users   int
		signIns []signIn
		check   func(t *testing.T, s *oidcTestServer, rep migrationReport)
	}{
		"quickstart-device.json": {realm: "device-flow-quickstart", users: 1, signIns: []signIn{{"alice", "password", nil}},
			check: func(t *testing.T, s *oidcTestServer, rep migrationReport) {
				stored, err := s.store.GetClientByClientID(t.Context(), s.storedUser(t, "device-flow-quickstart", "alice").RealmID, "device-client")
				if err != nil {
					t.Fatal(err)
				}
				if stored.ClientType != "PUBLIC" || !slices.Equal(stored.GrantTypes,
					[]string{"urn:ietf:params:oauth:grant-type:device_code", "refresh_token"}) {
					t.Fatalf("device-client: %s %v", stored.ClientType, stored.GrantTypes)
				}
			}},
		"quickstart-spa.json": {realm: "quickstart", users: 2,
			signIns: []signIn{{"alice", "alice", []string{"user"}}, {"admin", "admin", []string{"user", "admin"}}},
			check: func(t *testing.T, s *oidcTestServer, rep migrationReport) {
				// The wildcard redirect, the undefined offline_access role and
				// Keycloak's own clients' roles are reported, not refused.
				for _, path := range []string{"data.clients[0].redirectUris[0]", "data.users[0].realmRoles[1]",
					"data.users[0].clientRoles.account[0]", "data.users[1].clientRoles.realm-management[0]"} {
					if rep.skipped(path) == nil {
						t.Errorf("%s not reported as skipped; skipped: %v", path, rep.Skipped)
					}
				}
			}},
		"quickstart-authz.json": {realm: "quickstart", users: 3,
			signIns: []signIn{{"alice", "alice", []string{"user"}}, {"jdoe", "jdoe", []string{"user", "user_premium"}},
				{"admin", "admin", []string{"admin"}}},
			check: func(t *testing.T, s *oidcTestServer, rep migrationReport) {
				realm := s.storedUser(t, "quickstart", "alice").RealmID
				c, err := s.store.GetClientByClientID(t.Context(), realm, "jakarta-servlet-authz-client")
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(c.GrantTypes, "client_credentials") || len(c.SecretHash) == 0 {
					t.Fatalf("the authorization client: grants %v, secret kept %v", c.GrantTypes, len(c.SecretHash) > 0)
				}
				// Its secret works: the service account signs in.
				r := s.request(http.MethodPost, "/realms/quickstart/protocol/openid-connect/token", "grant_type=client_credentials",
					"Content-Type: application/x-www-form-urlencoded", codeflowBasic("jakarta-servlet-authz-client", "secret"))
				mustStatus(t, r, http.StatusOK)
				if rep.skipped("data.clients[0].authorizationSettings") == nil {
					t.Errorf("the authorization services are not reported as skipped")
				}
			}},
		"hashed-credentials-realm.json": {realm: "my-realm", users: 1,
			check: func(t *testing.T, s *oidcTestServer, rep migrationReport) {
				// The export's pbkdf2-sha256 hash is kept as it is (its
				// password is not known: migrationKeycloakExport below signs
				// in with every format), and checked: a wrong password fails,
				// leaving it.
				u := s.storedUser(t, "my-realm", "test-user")
				want := "$pbkdf2-sha256$i=27500,l=32$RaXjs4RiUKgJGkX6kp277w$ng6oDRung/pBLayd5ro7IU3mL/p86pg3WvQNQc+N1Eg"
				if u.PasswordHash != want || u.ID != "826731b2-bf17-4bd9-b45c-6a26c76ddaae" || !u.EmailVerified ||
					u.FirstName != "John" || u.Email != "test-user@mail.com" {
					t.Fatalf("test-user as stored: %+v", u)
				}
				secret := s.testClient(t, "my-realm")
				s.signInRefused(t, "my-realm", "migration-check", secret, "test-user", "not the password")
				if got := s.storedUser(t, "my-realm", "test-user").PasswordHash; got != want {
					t.Fatalf("a refused sign-in changed the hash to %s", got)
				}
				if rep.skipped("data.users[0].realmRoles[0]") == nil {
					t.Errorf("default-roles-my-realm is not reported as skipped")
				}
			}},
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range entries {
		name := entry.Name()
		t.Run(name, func(t *testing.T) {
			tc, ok := cases[name]
			if !ok {
				t.Fatalf("fixture %s has no case here: say what it should import", name)
			}
			s := newOIDCTestServer(t)
			var export any
			if err := json.Unmarshal(readFixture(t, dir, name), &export); err != nil {
				t.Fatal(err)
			}
			rep := s.migrate(t, "/admin/migration/keycloak", map[string]any{"data": export}, http.StatusCreated)
			if rep.Realm != tc.realm || rep.Counts["user"] < tc.users || rep.Counts["realm"] != 1 {
				t.Fatalf("report: realm %s counts %v", rep.Realm, rep.Counts)
			}
			mustStatus(t, s.admin(http.MethodGet, "/admin/realms/"+tc.realm, nil), http.StatusOK)
			var secret string
			if len(tc.signIns) > 0 {
				secret = s.testClient(t, tc.realm)
			}
			for _, in := range tc.signIns {
				claims := s.signInThroughPages(t, tc.realm, "migration-check", secret, in.username, in.password, nil)
				if claims["preferred_username"] != in.username {
					t.Fatalf("token of %v", claims["preferred_username"])
				}
				if in.roles != nil {
					mustContain(t, in.username+"'s realm roles", realmRolesOf(claims), in.roles...)
				}
				if h := s.storedUser(t, tc.realm, in.username).PasswordHash; !strings.HasPrefix(h, "$argon2id$") {
					t.Fatalf("%s's hash after the sign-in: %s", in.username, h)
				}
			}
			if tc.check != nil {
				tc.check(t, s, rep)
			}
		})
	}
}

// kcCredential is a Keycloak password credential, as an export has it.
func kcCredential(algorithm string, iterations int, params map[string][]string, salt, value string) map[string]any {
	if params == nil {
		params = map[string][]string{}
	}
	cd, _ := json.Marshal(map[string]any{"hashIterations": iterations, "algorithm": algorithm, "additionalParameters": params})
	sd, _ := json.Marshal(map[string]any{"value": value, "salt": salt, "additionalParameters": map[string]any{}})
	return map[string]any{"type": "password", "userLabel": "My password", "createdDate": 1693888572700,
		"secretData": string(sd), "credentialData": string(cd)}
}

// migrationPasswords are the users of migrationKeycloakExport, each with
// a hash of another format of their password.
func migrationPasswords(t *testing.T) map[string]map[string]any {
	t.Helper()
	salt := []byte("saltsaltsaltsalt")
	b64 := base64.StdEncoding.EncodeToString
	kdf := func(pw string, iter, n int, h func() hash.Hash) string {
		return b64(pbkdf2.Key([]byte(pw), salt, iter, n, h))
	}
	bc, err := bcrypt.GenerateFromPassword([]byte("bcrypt-pass-1"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	argonParams := func(typ string) map[string][]string {
		return map[string][]string{"hashLength": {"32"}, "memory": {"7168"}, "type": {typ}, "version": {"1.3"}, "parallelism": {"1"}}
	}
	return map[string]map[string]any{
		"sha256-user": kcCredential("pbkdf2-sha256", 27500, nil, b64(salt), kdf("sha256-pass-1", 27500, 32, sha256.New)),
		"sha512-user": kcCredential("pbkdf2-sha512", 30000, nil, b64(salt), kdf("sha512-pass-1", 30000, 64, sha512.New)),
		"sha1-user":   kcCredential("pbkdf2", 20000, nil, b64(salt), kdf("sha1-pass-1", 20000, 64, sha1.New)),
		"argon2id-user": kcCredential("argon2", 5, argonParams("id"), b64(salt),
			b64(argon2.IDKey([]byte("argon2id-pass-1"), salt, 5, 7168, 1, 32))),
		"argon2i-user": kcCredential("argon2", 3, argonParams("i"), b64(salt),
			b64(argon2.Key([]byte("argon2i-pass-1"), salt, 3, 7168, 1, 32))),
		"bcrypt-user": kcCredential("bcrypt", bcrypt.MinCost, nil, "", string(bc)),
	}
}

// migrationTOTPSecret is the OTP secret of otp-user as Keycloak keeps it:
// text, whose bytes are the HMAC key.
const migrationTOTPSecret = "kT9xQw2mLp7vRz4sNb8c"

// migrationKeycloakExport is a Keycloak realm export with a user in each
// password hash format, one with an OTP credential, groups with roles and
// subgroups, composites, client roles, client scopes with mappers, and
// what has no counterpart here.
func migrationKeycloakExport(t *testing.T) map[string]any {
	t.Helper()
	var users []any
	passwords := migrationPasswords(t)
	for _, name := range mapsKeys(passwords) {
		users = append(users, map[string]any{"username": name, "enabled": true, "email": name + "@legacy.example.test",
			"emailVerified": true, "credentials": []any{passwords[name]}, "realmRoles": []string{"user"},
			"groups": []string{"/staff"}})
	}
	otpData, _ := json.Marshal(map[string]any{"subType": "totp", "digits": 6, "counter": 0, "period": 30, "algorithm": "HmacSHA1"})
	otpSecret, _ := json.Marshal(map[string]any{"value": migrationTOTPSecret})
	salt := []byte("saltsaltsaltsalt")
	b64 := base64.StdEncoding.EncodeToString
	users = append(users, map[string]any{"id": "6b0f7f52-6f54-4a0e-9d51-3f1f9a7c0d11", "username": "otp-user", "enabled": true,
		"firstName": "Otto", "lastName": "Pe", "email": "otp@legacy.example.test",
		"attributes": map[string]any{"department": []string{"sales"}, "costCenter": []string{"42", "43"}, "bad name!": []string{"x"}},
		"credentials": []any{
			kcCredential("pbkdf2-sha256", 27500, nil, b64(salt), b64(pbkdf2.Key([]byte("otp-pass-1"), salt, 27500, 32, sha256.New))),
			map[string]any{"type": "otp", "userLabel": "Phone", "secretData": string(otpSecret), "credentialData": string(otpData)},
			map[string]any{"type": "webauthn", "credentialData": "{}", "secretData": "{}"},
		},
		"requiredActions": []string{"CONFIGURE_TOTP"},
		"realmRoles":      []string{"admin"}, "groups": []string{"/staff/ops"},
		"clientRoles": map[string]any{"legacy-app": []string{"reader"}, "account": []string{"manage-account"}}})
	users = append(users, map[string]any{"username": "reset-user", "enabled": true, "credentials": []any{
		kcCredential("md5-legacy", 1, nil, b64(salt), b64([]byte("0123456789abcdef")))}, "requiredActions": []string{"UPDATE_PASSWORD"}})
	users = append(users, map[string]any{"username": "service-account-legacy-worker", "enabled": true,
		"serviceAccountClientId": "legacy-worker", "realmRoles": []string{"user"}})
	mapper := func(name, typ string, cfg map[string]string) map[string]any {
		return map[string]any{"name": name, "protocol": "openid-connect", "protocolMapper": typ, "consentRequired": false, "config": cfg}
	}
	return map[string]any{
		"id": "legacy", "realm": "legacy", "displayName": "Legacy", "enabled": true, "sslRequired": "external",
		"accessTokenLifespan": 600, "ssoSessionIdleTimeout": 3600, "bruteForceProtected": true, "failureFactor": 10,
		"passwordPolicy":      "length(10) and digits(2) and notUsername(undefined) and hashAlgorithm(pbkdf2-sha256)",
		"smtpServer":          map[string]any{"host": "smtp.legacy.example.test", "port": "2525", "from": "noreply@legacy.example.test", "starttls": "true"},
		"loginTheme":          "keycloak.v2",
		"authenticationFlows": []any{map[string]any{"alias": "browser"}},
		"clientScopes": []any{
			map[string]any{"name": "roles", "protocol": "openid-connect", "protocolMappers": []any{
				mapper("realm roles", "oidc-usermodel-realm-role-mapper", map[string]string{"multivalued": "true",
					"claim.name": "realm_access.roles", "jsonType.label": "String", "access.token.claim": "true",
					"introspection.token.claim": "true", "user.attribute": "foo", "lightweight.claim": "false"}),
				mapper("client roles", "oidc-usermodel-client-role-mapper", map[string]string{"multivalued": "true",
					"claim.name": "resource_access.${client_id}.roles", "jsonType.label": "String", "access.token.claim": "true"}),
			}},
			map[string]any{"name": "groups", "protocol": "openid-connect", "protocolMappers": []any{
				mapper("groups", "oidc-group-membership-mapper", map[string]string{"full.path": "true", "claim.name": "groups",
					"access.token.claim": "true", "id.token.claim": "true", "userinfo.token.claim": "true"}),
				mapper("script", "script-mapper.js", map[string]string{"claim.name": "x"}),
			}},
			map[string]any{"name": "profile", "protocol": "openid-connect", "protocolMappers": []any{
				mapper("username", "oidc-usermodel-property-mapper", map[string]string{"user.attribute": "username",
					"claim.name": "preferred_username", "jsonType.label": "String", "access.token.claim": "true"}),
				mapper("department", "oidc-usermodel-attribute-mapper", map[string]string{"user.attribute": "department",
					"claim.name": "department", "jsonType.label": "String", "access.token.claim": "true"}),
			}},
			map[string]any{"name": "role_list", "protocol": "saml"},
		},
		"clients": []any{
			map[string]any{"clientId": "legacy-app", "name": "Legacy App", "enabled": true, "publicClient": false, "secret": "legacy-secret",
				"redirectUris": []string{codeflowRedirect, "https://app.example.test/*"}, "webOrigins": []string{"+", "*"},
				"standardFlowEnabled": true, "directAccessGrantsEnabled": true,
				"attributes":          map[string]any{"pkce.code.challenge.method": "S256", "post.logout.redirect.uris": "+"},
				"defaultClientScopes": []string{"roles", "groups", "profile", "web-origins", "acr"}},
			map[string]any{"clientId": "legacy-spa", "publicClient": true, "implicitFlowEnabled": true,
				"rootUrl": "https://spa.example.test", "redirectUris": []string{"/callback"}},
			map[string]any{"clientId": "legacy-worker", "serviceAccountsEnabled": true, "standardFlowEnabled": false, "secret": "worker-secret"},
			map[string]any{"clientId": "account", "publicClient": true},
			map[string]any{"clientId": "saml-app", "protocol": "saml"},
		},
		"roles": map[string]any{
			"realm": []any{
				map[string]any{"name": "user", "description": "User"},
				map[string]any{"name": "admin", "composite": true, "composites": map[string]any{"realm": []string{"user"},
					"client": map[string]any{"legacy-app": []string{"writer"}}}},
			},
			"client": map[string]any{
				"legacy-app": []any{map[string]any{"name": "reader"}, map[string]any{"name": "writer"}},
				"account":    []any{map[string]any{"name": "manage-account"}},
			},
		},
		"groups": []any{map[string]any{"name": "staff", "path": "/staff", "realmRoles": []string{"user"},
			"subGroups": []any{map[string]any{"name": "ops", "path": "/staff/ops", "clientRoles": map[string]any{"legacy-app": []string{"reader"}},
				"attributes": map[string]any{"floor": []string{"2"}}}}}},
		"identityProviders": []any{
			map[string]any{"alias": "upstream", "providerId": "keycloak-oidc", "enabled": true, "trustEmail": true,
				"config": map[string]any{"clientId": "legacy", "clientSecret": "**********", "issuer": "https://idp.example.test",
					"authorizationUrl": "https://idp.example.test/auth", "tokenUrl": "https://idp.example.test/token",
					"jwksUrl": "https://idp.example.test/certs", "defaultScope": "openid email", "syncMode": "FORCE"}},
			map[string]any{"alias": "corp-saml", "providerId": "saml", "config": map[string]any{}},
		},
		"users": users,
	}
}

func mapsKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A Keycloak export with a user in each hash format: everyone signs in
// through the hosted page with their original password, their token
// carries their roles (composites and groups' included) and groups, their
// hash is argon2id after the sign-in, and the OTP credential still works.
func TestMigrationKeycloakHashesAndOTP(t *testing.T) {
	s := newOIDCTestServer(t)
	rep := s.migrate(t, "/admin/migration/keycloak", map[string]any{"data": migrationKeycloakExport(t)}, http.StatusCreated)
	if rep.Realm != "legacy" {
		t.Fatalf("realm %s", rep.Realm)
	}
	for path, why := range map[string]string{
		"data.clients[0].redirectUris[1]":                               "wildcards",
		"data.clients[0].webOrigins[1]":                                 `"*" is not allowed`,
		"data.clients[0].defaultClientScopes[4]":                        "no client scope",
		"data.clients[0].attributes.pkce.code.challenge.method":         "PKCE",
		"data.clients[1].implicitFlowEnabled":                           "implicit",
		"data.clients[3]":                                               "Keycloak's own client",
		"data.clients[4]":                                               "SAML",
		"data.clientScopes[0].protocolMappers[0].config.user.attribute": "not a setting",
		"data.clientScopes[1].protocolMappers[1]":                       "no counterpart",
		"data.clientScopes[3]":                                          "saml",
		"data.groups[0].subGroups[0].attributes":                        "no attributes",
		"data.identityProviders[0].config.clientSecret":                 "masks",
		"data.identityProviders[1]":                                     "no counterpart",
		"data.users[6].attributes.bad name!":                            "not a name",
		"data.users[6].credentials[2]":                                  "passkeys",
		"data.users[6].requiredActions[0]":                              "mfaRequired",
		"data.users[6].clientRoles.account[0]":                          "left out",
		"data.users[7].credentials[0]":                                  "password reset",
		"data.authenticationFlows":                                      "flows",
		"data.loginTheme":                                               "themes",
		"data.passwordPolicy":                                           "",
	} {
		item := rep.skipped(path)
		if item == nil || !strings.Contains(item.Reason, why) {
			t.Errorf("%s: skipped as %+v, want a reason with %q", path, item, why)
		}
	}
	realm, err := s.store.GetRealm(t.Context(), "legacy")
	if err != nil {
		t.Fatal(err)
	}
	if realm.DisplayName != "Legacy" || realm.AccessTokenLifespan != 600 || realm.RefreshTokenLifespan != 3600 ||
		realm.MaxLoginFailures != 10 || realm.PasswordMinLength != 10 || !realm.PasswordRequireDigits ||
		realm.SMTPHost != "smtp.legacy.example.test" || realm.SMTPPort != 2525 || !realm.SMTPSecure {
		t.Fatalf("realm settings: %+v", realm)
	}
	// The spa's relative redirect URI is made absolute with its rootUrl.
	spa, err := s.store.GetClientByClientID(t.Context(), realm.ID, "legacy-spa")
	if err != nil || !slices.Equal(spa.RedirectURIs, []string{"https://spa.example.test/callback"}) || spa.ClientType != "PUBLIC" {
		t.Fatalf("legacy-spa: %+v, %v", spa, err)
	}
	// The worker's service account signs in with the kept secret.
	r := s.request(http.MethodPost, "/realms/legacy/protocol/openid-connect/token", "grant_type=client_credentials",
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("legacy-worker", "worker-secret"))
	mustStatus(t, r, http.StatusOK)

	passwords := map[string]string{"sha256-user": "sha256-pass-1", "sha512-user": "sha512-pass-1", "sha1-user": "sha1-pass-1",
		"argon2id-user": "argon2id-pass-1", "argon2i-user": "argon2i-pass-1", "bcrypt-user": "bcrypt-pass-1"}
	formats := map[string]string{"sha256-user": "$pbkdf2-sha256$", "sha512-user": "$pbkdf2-sha512$", "sha1-user": "$pbkdf2-sha1$",
		"argon2id-user": "$argon2id$v=19$m=7168,t=5,p=1$", "argon2i-user": "$argon2i$", "bcrypt-user": "$2a$04$"}
	for _, username := range mapsKeys(passwords) {
		t.Run(username, func(t *testing.T) {
			if h := s.storedUser(t, "legacy", username).PasswordHash; !strings.HasPrefix(h, formats[username]) {
				t.Fatalf("hash as imported: %s, want %s…", h, formats[username])
			}
			s.signInRefused(t, "legacy", "legacy-app", "legacy-secret", username, passwords[username]+"x")
			claims := s.signInThroughPages(t, "legacy", "legacy-app", "legacy-secret", username, passwords[username], nil)
			mustContain(t, "realm roles", realmRolesOf(claims), "user")
			groups, _ := claims["groups"].([]any)
			if len(groups) != 1 || groups[0] != "/staff" {
				t.Fatalf("groups claim %v", claims["groups"])
			}
			// A foreign hash is argon2id after the sign-in; Keycloak's
			// argon2id hash, of OWASP's m=7168,t=5,p=1, is kept as it is.
			h := s.storedUser(t, "legacy", username).PasswordHash
			want := "$argon2id$v=19$m=19456,t=2,p=1$"
			if username == "argon2id-user" {
				want = formats[username]
			}
			if !strings.HasPrefix(h, want) {
				t.Fatalf("hash after the sign-in: %s, want %s…", h, want)
			}
			// And again, with the argon2id hash.
			s.signInThroughPages(t, "legacy", "legacy-app", "legacy-secret", username, passwords[username], nil)
		})
	}
	t.Run("otp-user", func(t *testing.T) {
		u := s.storedUser(t, "legacy", "otp-user")
		if u.ID != "6b0f7f52-6f54-4a0e-9d51-3f1f9a7c0d11" {
			t.Fatalf("Keycloak's user ID is not kept: %s", u.ID)
		}
		attrs, err := s.store.UserCustomAttributes(t.Context(), u.ID)
		if err != nil || !slices.Equal(attrs["department"], []string{"sales"}) || !slices.Equal(attrs["costCenter"], []string{"42", "43"}) {
			t.Fatalf("attributes %v, %v", attrs, err)
		}
		claims := s.signInThroughPages(t, "legacy", "legacy-app", "legacy-secret", "otp-user", "otp-pass-1", []byte(migrationTOTPSecret))
		// admin's composites: user, and legacy-app's writer; ops's reader.
		mustContain(t, "realm roles", realmRolesOf(claims), "admin", "user")
		app, _ := claims["resource_access"].(map[string]any)["legacy-app"].(map[string]any)
		var clientRoles []string
		for _, r := range app["roles"].([]any) {
			clientRoles = append(clientRoles, r.(string))
		}
		mustContain(t, "legacy-app roles", clientRoles, "reader", "writer")
		if groups, _ := claims["groups"].([]any); len(groups) != 1 || groups[0] != "/staff/ops" {
			t.Fatalf("groups claim %v", claims["groups"])
		}
		if claims["sub"] != u.ID {
			t.Fatalf("claims %v", claims)
		}
		if h := s.storedUser(t, "legacy", "otp-user").PasswordHash; !strings.HasPrefix(h, "$argon2id$") {
			t.Fatalf("hash after the sign-in: %s", h)
		}
	})
	t.Run("reset-user", func(t *testing.T) {
		u := s.storedUser(t, "legacy", "reset-user")
		if u.PasswordHash != "" || !u.RequirePasswordReset {
			t.Fatalf("a user whose hash is not kept: hash %q, reset %v", u.PasswordHash, u.RequirePasswordReset)
		}
	})
}

// A malformed export is refused with the JSON path of its first error,
// and nothing is written; a dry run writes nothing either.
func TestMigrationRefusalsAndDryRuns(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "existing", "email": "existing@example.test"})
	export := func(edit func(m map[string]any)) map[string]any {
		m := migrationKeycloakExport(t)
		edit(m)
		return m
	}
	user := func(m map[string]any, i int) map[string]any { return m["users"].([]any)[i].(map[string]any) }
	cases := []struct {
		name, path string
		body       any
		status     int
		code       string
		field      string
	}{
		{"keycloak: no data", "/admin/migration/keycloak", map[string]any{}, 400, "invalid_field", "data"},
		{"keycloak: a user without username", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {
			delete(user(m, 2), "username")
		})}, 400, "invalid_field", "data.users[2].username"},
		{"keycloak: a number for a string", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {
			user(m, 1)["email"] = 42
		})}, 400, "invalid_field", "data.users[1].email"},
		{"keycloak: secretData not JSON", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {
			user(m, 3)["credentials"].([]any)[0].(map[string]any)["secretData"] = "{not json"
		})}, 400, "invalid_field", "data.users[3].credentials[0].secretData"},
		{"keycloak: a hash that is not base64", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {
			user(m, 0)["credentials"] = []any{kcCredential("pbkdf2-sha256", 27500, nil, "c2FsdA==", "%%%")}
		})}, 400, "invalid_field", "data.users[0].credentials[0].secretData"},
		{"keycloak: an invalid email", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {
			user(m, 5)["email"] = "not an email"
		})}, 400, "invalid_field", "data.users[5].email"},
		{"keycloak: a role group list of numbers", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {
			m["groups"].([]any)[0].(map[string]any)["realmRoles"] = []any{1}
		})}, 400, "invalid_field", "data.groups[0].realmRoles[0]"},
		{"keycloak: a client without clientId", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {
			delete(m["clients"].([]any)[1].(map[string]any), "clientId")
		})}, 400, "invalid_field", "data.clients[1].clientId"},
		{"keycloak: two users of one name", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {
			user(m, 4)["username"] = user(m, 0)["username"]
		})}, 400, "invalid_field", "data.users[4].username"},
		{"keycloak: a realm that exists", "/admin/migration/keycloak", map[string]any{"data": export(func(m map[string]any) {}),
			"realm": "acme"}, 409, "conflict", ""},
		{"users: not a list", "/admin/realms/acme/users/import", map[string]any{"users": map[string]any{}}, 400, "invalid_field", "users"},
		{"users: no username", "/admin/realms/acme/users/import", map[string]any{"users": []any{
			map[string]any{"username": "fine"}, map[string]any{"email": "x@example.test"}}}, 400, "invalid_field", "users[1].username"},
		{"users: a bad email after good users", "/admin/realms/acme/users/import", map[string]any{"users": []any{
			map[string]any{"username": "fine"}, map[string]any{"username": "bad", "email": "@@"}}}, 400, "invalid_field", "users[1].email"},
		{"users: an id not a UUID", "/admin/realms/acme/users/import", map[string]any{"users": []any{
			map[string]any{"username": "fine", "id": "kc-1"}}}, 400, "invalid_field", "users[0].id"},
		{"users: unknown member", "/admin/realms/acme/users/import", map[string]any{"users": []any{}, "extra": 1}, 400, "unknown_field", "extra"},
		{"auth0: no realm", "/admin/migration/auth0", map[string]any{"users": "{}"}, 400, "invalid_field", "realm"},
		{"auth0: unknown realm", "/admin/migration/auth0", map[string]any{"realm": "nope", "users": "{}"}, 400, "invalid_field", "realm"},
		{"auth0: a broken line", "/admin/migration/auth0", map[string]any{"realm": "acme",
			"users": "{\"email\": \"a@example.test\"}\n{\"email\": \n"}, 400, "invalid_field", "users[1]"},
		{"auth0: a user without email", "/admin/migration/auth0", map[string]any{"realm": "acme",
			"users": []any{map[string]any{"email": "a@example.test"}, map[string]any{"username": "b"}}}, 400, "invalid_field", "users[1].email"},
		{"auth0: a hash of the wrong type", "/admin/migration/auth0", map[string]any{"realm": "acme",
			"users": []any{map[string]any{"email": "a@example.test"}}, "passwords": []any{map[string]any{"email": "a@example.test",
				"passwordHash": 7}}}, 400, "invalid_field", "passwords[0].passwordHash"},
	}
	countUsers := func() int {
		realm, _ := s.store.GetRealm(t.Context(), "acme")
		n, err := s.store.CountUsers(t.Context(), realm.ID, store.UserFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := countUsers()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s.admin(http.MethodPost, tc.path, tc.body)
			mustError(t, r, tc.status, tc.code, tc.field)
			if _, err := s.store.GetRealm(t.Context(), "legacy"); err == nil {
				t.Fatal("a refused import left realm legacy")
			}
			if n := countUsers(); n != before {
				t.Fatalf("a refused import left users in acme: %d, were %d", n, before)
			}
		})
	}
	t.Run("dry runs", func(t *testing.T) {
		rep := s.migrate(t, "/admin/migration/keycloak", map[string]any{"data": migrationKeycloakExport(t), "dryRun": true}, http.StatusOK)
		if !rep.DryRun || rep.Realm != "legacy" || rep.Counts["user"] < 7 || len(rep.Skipped) == 0 {
			t.Fatalf("dry run report: %+v", rep)
		}
		if _, err := s.store.GetRealm(t.Context(), "legacy"); err == nil {
			t.Fatal("a dry run made realm legacy")
		}
		rep = s.migrate(t, "/admin/realms/acme/users/import", map[string]any{"dryRun": true, "users": []any{
			map[string]any{"username": "dry", "passwordHash": "$2a$04$abcdefghijklmnopqrstuu5SO7N1ZTf3KxaqT8NBIBWFGb5PUb.aG"}}}, http.StatusOK)
		if rep.Counts["user"] != 1 || countUsers() != before {
			t.Fatalf("users dry run: %+v, %d users", rep, countUsers())
		}
		dir := migrationFixtures(t)
		rep = s.migrate(t, "/admin/migration/auth0", map[string]any{"realm": "acme", "dryRun": true,
			"users": string(readFixture(t, dir, "auth0", "users.ndjson")), "passwords": string(readFixture(t, dir, "auth0", "passwords.ndjson"))},
			http.StatusOK)
		if rep.Counts["user"] != 5 || countUsers() != before {
			t.Fatalf("auth0 dry run: %+v, %d users", rep, countUsers())
		}
	})
}

// The Auth0 fixtures: the users of users.ndjson with the bcrypt hashes of
// passwords.ndjson, matched by _id; a user exported with a known
// password signs in with it and is argon2id afterwards.
func TestMigrationAuth0(t *testing.T) {
	dir := filepath.Join(migrationFixtures(t), "auth0")
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	users, passwords := readFixture(t, dir, "users.ndjson"), readFixture(t, dir, "passwords.ndjson")
	rep := s.migrate(t, "/admin/migration/auth0", map[string]any{"realm": "acme", "users": string(users), "passwords": string(passwords)},
		http.StatusCreated)
	if rep.Counts["user"] != 5 {
		t.Fatalf("report: %+v", rep)
	}
	john := s.storedUser(t, "acme", "johndoe")
	if john.PasswordHash != "$2b$10$Z6hUTEEeoJXN5/AmSm/4.eZ75RYgFVriQM9LPhNEC7kbAbS/VAaJ2" || john.Email != "john@example.com" ||
		john.FirstName != "John" || john.LastName != "Doe" || !john.EmailVerified {
		t.Fatalf("johndoe as stored: %+v", john)
	}
	attrs, err := s.store.UserCustomAttributes(t.Context(), john.ID)
	if err != nil || attrs["phoneNumber"][0] != "+1234567890" || attrs["auth0UserId"][0] != "auth0|60425dc43519d90068f82973" ||
		attrs["locale"][0] != "en-US" {
		t.Fatalf("johndoe's attributes: %v, %v", attrs, err)
	}
	// Without a username, the email is one; a name alone is the first name.
	if u := s.storedUser(t, "acme", "minimal@example.com"); !strings.HasPrefix(u.PasswordHash, "$2b$10$CSZ2") {
		t.Fatalf("minimal@example.com: %+v", u)
	}
	if u := s.storedUser(t, "acme", "onlyname@example.com"); u.FirstName != "Full Name Only" {
		t.Fatalf("onlyname: %+v", u)
	}
	secret := s.testClient(t, "acme")
	s.signInRefused(t, "acme", "migration-check", secret, "johndoe", "not john's password")

	// An export whose password is known.
	hash, err := bcrypt.GenerateFromPassword([]byte("auth0-pass-1"), 10)
	if err != nil {
		t.Fatal(err)
	}
	rep = s.migrate(t, "/admin/migration/auth0", map[string]any{"realm": "acme",
		"users": []any{map[string]any{"user_id": "auth0|abc123", "email": "kim@example.test", "email_verified": true,
			"user_metadata": map[string]any{"plan": "gold"}}},
		"passwords": []any{map[string]any{"_id": map[string]any{"$oid": "abc123"}, "email": "other@example.test",
			"passwordHash": string(hash)}}}, http.StatusCreated)
	if rep.skipped("users[0].user_metadata") == nil {
		t.Fatalf("user_metadata not reported: %+v", rep.Skipped)
	}
	claims := s.signInThroughPages(t, "acme", "migration-check", secret, "kim@example.test", "auth0-pass-1", nil)
	if claims["email"] != nil && claims["email"] != "kim@example.test" {
		t.Fatalf("claims %v", claims)
	}
	if h := s.storedUser(t, "acme", "kim@example.test").PasswordHash; !strings.HasPrefix(h, "$argon2id$") {
		t.Fatalf("hash after the sign-in: %s", h)
	}
	// Importing the same users again skips them, and says why.
	rep = s.migrate(t, "/admin/migration/auth0", map[string]any{"realm": "acme", "users": string(users)}, http.StatusCreated)
	if rep.Counts["user"] != 0 || len(rep.Skipped) < 5 || !strings.Contains(rep.skipped("users[0]", "user").Reason, "already") {
		t.Fatalf("second import: %+v", rep)
	}
}

// syncBuffer is a log the server writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// users/import: argon2 and bcrypt hashes kept, other formats owing a
// reset, roles and groups by name, users the realm has skipped, and a
// progress line in the log for a large import.
func TestUsersImport(t *testing.T) {
	logs := &syncBuffer{}
	s := newOIDCTestServer(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "editor"}), http.StatusCreated)
	g := s.admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "staff"})
	mustStatus(t, g, http.StatusCreated)
	s.createUser("acme", map[string]any{"username": "taken"})
	salt := []byte("saltsaltsaltsalt")
	argon := fmt.Sprintf("$argon2id$v=19$m=4096,t=3,p=1$%s$%s", base64.RawStdEncoding.EncodeToString(salt),
		base64.RawStdEncoding.EncodeToString(argon2.IDKey([]byte("argon-pass-1"), salt, 3, 4096, 1, 32)))
	bc, _ := bcrypt.GenerateFromPassword([]byte("bcrypt-pass-1"), bcrypt.MinCost)
	rep := s.migrate(t, "/admin/realms/acme/users/import", map[string]any{"users": []any{
		map[string]any{"username": "ann", "email": "ann@example.test", "passwordHash": argon, "realmRoles": []string{"editor", "ghost"},
			"groups": []string{"/staff", "/nowhere"}, "attributes": map[string]any{"team": []string{"blue"}}},
		map[string]any{"username": "ben", "passwordHash": string(bc), "requiredActions": []string{"UPDATE_PASSWORD", "TERMS_AND_CONDITIONS"}},
		map[string]any{"username": "cal", "passwordHash": "{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="},
		map[string]any{"username": "taken"},
	}}, http.StatusCreated)
	if rep.Counts["user"] != 3 {
		t.Fatalf("report: %+v", rep)
	}
	for path, why := range map[string]string{"users[0].realmRoles[1]": "no role", "users[0].groups[1]": "no group",
		"users[1].requiredActions[1]": "no required action", "users[2].passwordHash": "password reset", "users[3]": "already"} {
		if item := rep.skipped(path); item == nil || !strings.Contains(item.Reason, why) {
			t.Errorf("%s: %+v, want a reason with %q", path, item, why)
		}
	}
	if u := s.storedUser(t, "acme", "ann"); u.PasswordHash != argon {
		t.Fatalf("ann's hash: %s", u.PasswordHash)
	}
	if u := s.storedUser(t, "acme", "ben"); u.PasswordHash != string(bc) || !u.RequirePasswordReset {
		t.Fatalf("ben: %+v", u)
	}
	if u := s.storedUser(t, "acme", "cal"); u.PasswordHash != "" || !u.RequirePasswordReset {
		t.Fatalf("cal: %+v", u)
	}
	secret := s.testClient(t, "acme")
	claims := s.signInThroughPages(t, "acme", "migration-check", secret, "ann", "argon-pass-1", nil)
	mustContain(t, "ann's roles", realmRolesOf(claims), "editor")

	// The import is an admin event of the realm, with its counts; a dry
	// run, which writes nothing, is none.
	s.migrate(t, "/admin/realms/acme/users/import", map[string]any{"dryRun": true, "users": []any{map[string]any{"username": "dry"}}},
		http.StatusOK)
	var evs []events.AdminEventRep
	r := s.admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceTypes=USER", nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &evs)
	imports := 0
	for _, ev := range evs {
		if ev.ResourcePath == "users/import" {
			imports++
			var note map[string]any
			if err := json.Unmarshal(ev.Representation, &note); err != nil || note["skipped"] != float64(5) ||
				ev.OperationType != "CREATE" {
				t.Fatalf("admin event %+v: %s", ev, ev.Representation)
			}
		}
	}
	if imports != 1 {
		t.Fatalf("%d admin events of users/import, want 1: %+v", imports, evs)
	}

	// A large import logs its progress.
	var many []any
	for i := range 1000 {
		many = append(many, map[string]any{"username": fmt.Sprintf("bulk-%04d", i)})
	}
	rep = s.migrate(t, "/admin/realms/acme/users/import", map[string]any{"users": many}, http.StatusCreated)
	if rep.Counts["user"] != 1000 || !strings.Contains(logs.String(), "migration: import progress") ||
		!strings.Contains(logs.String(), "done=1000 total=1000") {
		t.Fatalf("count %d; log:\n%s", rep.Counts["user"], logs.String())
	}
}
