package ldapfed_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/ldapfed"
)

const fedPath = "/admin/realms/acme/user-federation"

// minimalProvider is the spec's required fields, nothing else.
func minimalProvider(name string) map[string]any {
	return map[string]any{"name": name, "providerType": "ldap", "connectionUrl": "ldap://127.0.0.1:1389",
		"bindDn": "cn=admin,dc=example,dc=org", "bindCredential": "s3cret-bind", "usersDn": "ou=people,dc=example,dc=org"}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func createProvider(t *testing.T, s *apptest.Server, body map[string]any) ldapfed.Provider {
	t.Helper()
	r := s.Admin(http.MethodPost, fedPath, body)
	apptest.MustStatus(t, r, http.StatusCreated)
	var p ldapfed.Provider
	r.Decode(t, &p)
	return p
}

func getProvider(t *testing.T, s *apptest.Server, id string) ldapfed.Provider {
	t.Helper()
	r := s.Admin(http.MethodGet, fedPath+"/"+id, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var p ldapfed.Provider
	r.Decode(t, &p)
	return p
}

func storedCredential(t *testing.T, s *apptest.Server, id string) string {
	t.Helper()
	p, err := s.Store.GetFederationProvider(context.Background(), s.Realm("acme").ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return p.BindCredential
}

func TestProviderCRUD(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	r := s.Admin(http.MethodPost, fedPath, minimalProvider("corp"))
	apptest.MustStatus(t, r, http.StatusCreated)
	var p ldapfed.Provider
	r.Decode(t, &p)
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, fedPath+"/"+p.ID) {
		t.Fatalf("Location %q", loc)
	}
	want := ldapfed.Settings{Vendor: "openldap", ConnectionURL: "ldap://127.0.0.1:1389", UseTruststore: true,
		ConnectionTimeout: 5000, ReadTimeout: 5000, Pagination: 500, BindDN: "cn=admin,dc=example,dc=org",
		UsersDN: "ou=people,dc=example,dc=org", UserObjectClass: "inetOrgPerson", SearchScope: "subtree",
		UsernameLDAPAttr: "uid", EmailLDAPAttr: "mail", FirstNameLDAPAttr: "givenName", LastNameLDAPAttr: "sn",
		UUIDLDAPAttr: "entryUUID", SyncMode: "IMPORT", ImportEnabled: true, MissingUsers: "disable",
		GroupSettings: ldapfed.GroupSettings{GroupObjectClass: "groupOfNames", GroupNameLDAPAttr: "cn",
			MembershipLDAPAttr: "member", GroupsStrategy: "member"}}
	if p.Settings != want || !p.Enabled || p.Priority != 0 || p.ProviderType != "ldap" || p.Name != "corp" {
		t.Fatalf("created %+v\nwant settings %+v", p, want)
	}
	if p.BindCredential != "**********" || bytes.Contains(r.Body, []byte("s3cret-bind")) {
		t.Fatalf("bind credential shown: %s", r.Body)
	}
	if p.SyncStatus == nil || p.SyncStatus.LastSync != nil || p.SyncStatus.Running != nil {
		t.Fatalf("sync status of a new provider: %+v", p.SyncStatus)
	}

	second := createProvider(t, s, with(minimalProvider("lab"), "priority", -1))
	list := s.Admin(http.MethodGet, fedPath, nil)
	apptest.MustStatus(t, list, http.StatusOK)
	var ps []ldapfed.Provider
	list.Decode(t, &ps)
	if len(ps) != 2 || ps[0].ID != second.ID || ps[1].ID != p.ID {
		t.Fatalf("list not in priority order: %s", list.Body)
	}

	// PUT changes what it names; the redacted credential keeps the stored one.
	got := getProvider(t, s, p.ID)
	upd := s.Admin(http.MethodPut, fedPath+"/"+p.ID, map[string]any{"name": "corp", "providerType": "ldap",
		"connectionUrl": "ldap://dir.example.org:389", "bindDn": got.BindDN, "bindCredential": got.BindCredential,
		"usersDn": got.UsersDN, "syncMode": "READ_ONLY", "priority": 3, "enabled": false})
	apptest.MustStatus(t, upd, http.StatusOK)
	got = getProvider(t, s, p.ID)
	if got.ConnectionURL != "ldap://dir.example.org:389" || got.SyncMode != "READ_ONLY" || got.Priority != 3 || got.Enabled {
		t.Fatalf("after PUT: %+v", got)
	}
	if c := storedCredential(t, s, p.ID); c != "s3cret-bind" {
		t.Fatalf("credential after a PUT of the placeholder: %q", c)
	}
	// PATCH merges; a new credential replaces the stored one; null returns a field to its default.
	apptest.MustStatus(t, s.Admin(http.MethodPatch, fedPath+"/"+p.ID,
		map[string]any{"bindCredential": "rotated", "syncMode": nil}), http.StatusOK)
	if got = getProvider(t, s, p.ID); got.SyncMode != "IMPORT" || got.ConnectionURL != "ldap://dir.example.org:389" {
		t.Fatalf("after PATCH: %+v", got)
	}
	if c := storedCredential(t, s, p.ID); c != "rotated" {
		t.Fatalf("credential after PATCH: %q", c)
	}

	apptest.MustStatus(t, s.Admin(http.MethodDelete, fedPath+"/"+p.ID, nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodGet, fedPath+"/"+p.ID, nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodDelete, fedPath+"/"+p.ID, nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/user-federation", nil), http.StatusNotFound, "not_found", "")
	// Another realm's provider is not found through this one.
	s.CreateRealm("other")
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/other/user-federation/"+second.ID, nil),
		http.StatusNotFound, "not_found", "")
}

func TestProviderVendorPresets(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	tests := []struct {
		vendor                          string
		extra                           []any
		username, uuid, objectClass, at string
	}{
		{"", nil, "uid", "entryUUID", "inetOrgPerson", "mail"},
		{"openldap", nil, "uid", "entryUUID", "inetOrgPerson", "mail"},
		{"ad", nil, "sAMAccountName", "objectGUID", "person, organizationalPerson, user", "mail"},
		{"389ds", nil, "uid", "nsUniqueId", "inetOrgPerson", "mail"},
		{"AD", []any{"usernameLdapAttr", "userPrincipalName", "emailLdapAttr", "userPrincipalName"},
			"userPrincipalName", "objectGUID", "person, organizationalPerson, user", "userPrincipalName"},
	}
	for i, tc := range tests {
		body := with(minimalProvider("p"+string(rune('a'+i))), append([]any{"vendor", tc.vendor}, tc.extra...)...)
		p := createProvider(t, s, body)
		if p.UsernameLDAPAttr != tc.username || p.UUIDLDAPAttr != tc.uuid || p.UserObjectClass != tc.objectClass ||
			p.EmailLDAPAttr != tc.at {
			t.Errorf("vendor %q: %+v", tc.vendor, p.Settings)
		}
		if ad := strings.EqualFold(tc.vendor, "ad"); p.NestedGroups != ad || (p.GroupObjectClass == "group") != ad {
			t.Errorf("vendor %q: group settings %+v", tc.vendor, p.GroupSettings)
		}
		// AD's computer accounts are users too: its preset leaves them out.
		if ad := strings.EqualFold(tc.vendor, "ad"); (p.UserLDAPFilter == "(!(objectClass=computer))") != ad ||
			(!ad && p.UserLDAPFilter != "") {
			t.Errorf("vendor %q: user filter %q", tc.vendor, p.UserLDAPFilter)
		}
	}
	p := createProvider(t, s, with(minimalProvider("unique"), "groupObjectClass", "groupOfUniqueNames"))
	if p.MembershipLDAPAttr != "uniqueMember" {
		t.Errorf("groupOfUniqueNames: %+v", p.GroupSettings)
	}
}

// bindDn takes a DN, and the user@domain and DOMAIN\user names Active
// Directory binds by; anything else is refused.
func TestProviderBindNames(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	for i, name := range []string{"cn=admin,dc=example,dc=org", "svc-idp@corp.example.com", `CORP\svc-idp`,
		`corp-eu.1\Jane Doe`} {
		p := createProvider(t, s, with(minimalProvider(fmt.Sprint("p", i)), "bindDn", name))
		if p.BindDN != name {
			t.Errorf("bindDn %q stored as %q", name, p.BindDN)
		}
	}
	for _, name := range []string{"admin", `CORP\`, `\admin`, `CORP\a\b`, `CORP\a,b`, `CORPORATION-EUROPE\a`,
		"admin@", "@corp.example", "admin@corp example.org", "a b@corp.example", "cn=admin,,dc=x"} {
		apptest.MustError(t, s.Admin(http.MethodPost, fedPath, with(minimalProvider("bad"), "bindDn", name)),
			http.StatusBadRequest, "invalid_field", "bindDn")
	}
}

func TestProviderValidation(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	base := minimalProvider("corp")
	tests := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no name", with(base, "name", nil), "name"},
		{"blank name", with(base, "name", "  "), "name"},
		{"other type", with(base, "providerType", "kerberos"), "providerType"},
		{"no type", with(base, "providerType", nil), "providerType"},
		{"no url", with(base, "connectionUrl", nil), "connectionUrl"},
		{"http url", with(base, "connectionUrl", "http://dir.example.org"), "connectionUrl"},
		{"url with path", with(base, "connectionUrl", "ldap://dir.example.org/dc=x"), "connectionUrl"},
		{"url with user", with(base, "connectionUrl", "ldap://u:p@dir.example.org"), "connectionUrl"},
		{"bad host", with(base, "connectionUrl", "ldap://dir example"), "connectionUrl"},
		{"ldaps and starttls", with(base, "connectionUrl", "ldaps://dir.example.org", "startTls", true), "startTls"},
		{"nothing trusted", with(base, "startTls", true, "useTruststore", false), "caPem"},
		{"bad ca", with(base, "caPem", "not a certificate"), "caPem"},
		{"no bind dn", with(base, "bindDn", nil), "bindDn"},
		{"bad bind dn", with(base, "bindDn", "admin"), "bindDn"},
		{"no credential", with(base, "bindCredential", nil), "bindCredential"},
		{"empty credential", with(base, "bindCredential", ""), "bindCredential"},
		{"no users dn", with(base, "usersDn", nil), "usersDn"},
		{"bad users dn", with(base, "usersDn", "ou=people,,"), "usersDn"},
		{"bad object class", with(base, "userObjectClass", "inetOrgPerson, (x)"), "userObjectClass"},
		{"bad filter", with(base, "userLdapFilter", "(uid=*"), "userLdapFilter"},
		{"filter without parens", with(base, "userLdapFilter", "uid=a"), "userLdapFilter"},
		{"bad scope", with(base, "searchScope", "base"), "searchScope"},
		{"bad username attr", with(base, "usernameLdapAttr", "u id"), "usernameLdapAttr"},
		{"bad email attr", with(base, "emailLdapAttr", "mail)(x"), "emailLdapAttr"},
		{"bad uuid attr", with(base, "uuidLdapAttr", "*"), "uuidLdapAttr"},
		{"bad mode", with(base, "syncMode", "WRITABLE"), "syncMode"},
		{"negative period", with(base, "syncPeriod", -1), "syncPeriod"},
		{"zero timeout", with(base, "connectionTimeout", 0), "connectionTimeout"},
		{"long timeout", with(base, "connectionTimeout", 10001), "connectionTimeout"},
		{"long read timeout", with(base, "readTimeout", 60000), "readTimeout"},
		{"zero page", with(base, "pagination", 0), "pagination"},
		{"bad vendor", with(base, "vendor", "novell"), "vendor"},
		{"bad missing users", with(base, "missingUsers", "keep"), "missingUsers"},
		{"bad groups dn", with(base, "groupsDn", "groups"), "groupsDn"},
		{"bad group class", with(base, "groupObjectClass", "a b"), "groupObjectClass"},
		{"bad group name attr", with(base, "groupNameLdapAttr", "(cn)"), "groupNameLdapAttr"},
		{"bad membership attr", with(base, "membershipLdapAttr", "mem ber"), "membershipLdapAttr"},
		{"bad strategy", with(base, "groupsStrategy", "nested"), "groupsStrategy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, fedPath, tc.body), http.StatusBadRequest, "invalid_field", tc.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, fedPath, with(base, "bogus", 1)), http.StatusBadRequest, "unknown_field", "bogus")
	apptest.MustError(t, s.Admin(http.MethodPost, fedPath, with(base, "priority", "high")), http.StatusBadRequest, "invalid_field", "priority")
	p := createProvider(t, s, base)
	apptest.MustError(t, s.Admin(http.MethodPost, fedPath, base), http.StatusConflict, "conflict", "name")
	apptest.MustError(t, s.Admin(http.MethodPut, fedPath+"/"+p.ID, map[string]any{"syncMode": "bad"}),
		http.StatusBadRequest, "invalid_field", "syncMode")
	apptest.MustError(t, s.Admin(http.MethodPut, fedPath+"/"+p.ID, map[string]any{"id": "x"}),
		http.StatusBadRequest, "unknown_field", "id")
	// Nothing refused was stored.
	if got := getProvider(t, s, p.ID); got.SyncMode != "IMPORT" {
		t.Fatalf("a refused update changed the provider: %+v", got)
	}
	var list []ldapfed.Provider
	s.Admin(http.MethodGet, fedPath, nil).Decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("%d providers after refusals", len(list))
	}
}

// The bind credential is sealed in the database file and hidden in the
// admin events.
func TestBindCredentialEncryptedAndRedacted(t *testing.T) {
	s := realapp.New(t)
	r := s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "adminEventsEnabled": true})
	apptest.MustStatus(t, r, http.StatusCreated)
	p := createProvider(t, s, with(minimalProvider("corp"), "bindCredential", "plain-bind-pw-42"))
	apptest.MustStatus(t, s.Admin(http.MethodPatch, fedPath+"/"+p.ID, map[string]any{"bindCredential": "plain-bind-pw-43"}), http.StatusOK)

	db, err := sql.Open("sqlite", "file:"+s.DBPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var sealed []byte
	if err := db.QueryRow("SELECT bind_credential FROM federation_providers WHERE id = $1", p.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte("plain-bind-pw")) {
		t.Fatalf("bind credential stored in the clear: %q", sealed)
	}
	ev := s.Admin(http.MethodGet, "/admin/realms/acme/admin-events", nil)
	apptest.MustStatus(t, ev, http.StatusOK)
	if bytes.Contains(ev.Body, []byte("plain-bind-pw")) || !bytes.Contains(ev.Body, []byte("USER_FEDERATION")) {
		t.Fatalf("admin events: %s", ev.Body)
	}
}

func TestProviderExportImport(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	p := createProvider(t, s, with(minimalProvider("corp"), "vendor", "ad", "priority", 2, "syncPeriod", 600))

	exp := s.Admin(http.MethodGet, "/admin/realms/acme/export", nil)
	apptest.MustStatus(t, exp, http.StatusOK)
	if bytes.Contains(exp.Body, []byte("s3cret-bind")) || !bytes.Contains(exp.Body, []byte(`"userFederationProviders"`)) {
		t.Fatalf("export without secrets: %s", exp.Body)
	}
	withSecrets := s.Admin(http.MethodGet, "/admin/realms/acme/export?includeSecrets=true", nil)
	apptest.MustStatus(t, withSecrets, http.StatusOK)
	if !bytes.Contains(withSecrets.Body, []byte("s3cret-bind")) {
		t.Fatalf("export with secrets lacks the bind credential")
	}

	// Overwriting the realm from an export without secrets keeps the credential.
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/import?overwrite=true", exp.Body), http.StatusCreated)
	got := getProvider(t, s, p.ID)
	if got.Settings != p.Settings || got.Priority != 2 || !got.Enabled || storedCredential(t, s, p.ID) != "s3cret-bind" {
		t.Fatalf("after overwrite: %+v", got)
	}
	// A copy elsewhere has no credential to keep: it arrives disabled.
	body := bytes.Replace(exp.Body, []byte(`"name": "acme"`), []byte(`"name": "copy"`), 1)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", body), http.StatusCreated)
	var copies []ldapfed.Provider
	s.Admin(http.MethodGet, "/admin/realms/copy/user-federation", nil).Decode(t, &copies)
	if len(copies) != 1 || copies[0].ID == p.ID || copies[0].Enabled || copies[0].Settings != p.Settings {
		t.Fatalf("copy: %+v", copies)
	}
	// With secrets, a copy keeps its credential and its state.
	body = bytes.Replace(withSecrets.Body, []byte(`"name": "acme"`), []byte(`"name": "copy2"`), 1)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", body), http.StatusCreated)
	s.Admin(http.MethodGet, "/admin/realms/copy2/user-federation", nil).Decode(t, &copies)
	if len(copies) != 1 || !copies[0].Enabled {
		t.Fatalf("copy with secrets: %+v", copies)
	}
	// A bad provider in a file is refused with its place named, and nothing is written.
	bad := bytes.Replace(withSecrets.Body, []byte(`"name": "acme"`), []byte(`"name": "bad"`), 1)
	bad = bytes.Replace(bad, []byte(`"syncMode": "IMPORT"`), []byte(`"syncMode": "NOPE"`), 1)
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", bad), http.StatusBadRequest,
		"invalid_field", "userFederationProviders[0].syncMode")
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/bad", nil), http.StatusNotFound, "not_found", "")
}
