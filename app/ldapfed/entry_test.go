package ldapfed

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

func presetSettings(vendor string) *Settings {
	p := vendors[vendor]
	return &Settings{Vendor: vendor, UserObjectClass: p.objectClass, UsernameLDAPAttr: p.username, EmailLDAPAttr: p.email,
		FirstNameLDAPAttr: p.firstName, LastNameLDAPAttr: p.lastName, UUIDLDAPAttr: p.uuid}
}

func TestReadEntry(t *testing.T) {
	guid := []byte{0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}
	tests := []struct {
		name    string
		vendor  string
		attrs   map[string][]string
		raw     []byte // objectGUID
		want    entryUser
		wantErr string
	}{
		{"openldap", "openldap", map[string][]string{"uid": {"ann"}, "mail": {"ann@x.org"}, "givenName": {"Ann"}, "sn": {"Lee"},
			"entryUUID": {"6f1c-id"}}, nil,
			entryUser{DN: "uid=ann", ExternalID: "6f1c-id", Username: "ann", Email: "ann@x.org", FirstName: "Ann", LastName: "Lee"}, ""},
		{"ad disabled", "ad", map[string][]string{"sAMAccountName": {"bob"}, "userAccountControl": {"514"}}, guid,
			entryUser{DN: "uid=ann", ExternalID: "00112233-4455-6677-8899-aabbccddeeff", Username: "bob", Disabled: true}, ""},
		{"ad enabled", "ad", map[string][]string{"sAMAccountName": {"bob"}, "userAccountControl": {"512"}}, guid,
			entryUser{DN: "uid=ann", ExternalID: "00112233-4455-6677-8899-aabbccddeeff", Username: "bob"}, ""},
		{"no username", "openldap", map[string][]string{"entryUUID": {"x"}}, nil, entryUser{}, "usernameLdapAttr"},
		{"no id", "openldap", map[string][]string{"uid": {"ann"}}, nil, entryUser{}, "uuidLdapAttr"},
		{"short guid", "ad", map[string][]string{"sAMAccountName": {"bob"}}, []byte{1, 2}, entryUser{}, "objectGUID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := presetSettings(tc.vendor)
			e := ldap.NewEntry("uid=ann", tc.attrs)
			if tc.raw != nil {
				e.Attributes = append(e.Attributes, &ldap.EntryAttribute{Name: "objectGUID", Values: []string{string(tc.raw)},
					ByteValues: [][]byte{tc.raw}})
			}
			got, err := s.readEntry(e)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if tc.raw != nil {
				f, err := s.idFilter(got.ExternalID)
				if err != nil || f != `(objectGUID=\33\22\11\00\55\44\77\66\88\99\aa\bb\cc\dd\ee\ff)` {
					t.Fatalf("GUID filter %q, %v", f, err)
				}
			}
		})
	}
}

func TestFiltersEscapeValues(t *testing.T) {
	s := presetSettings("openldap")
	s.UserLDAPFilter = "(ou=staff)"
	tests := []struct{ login, want string }{
		{"ann", "(&(objectClass=inetOrgPerson)(ou=staff)(uid=ann))"},
		{"*", `(&(objectClass=inetOrgPerson)(ou=staff)(uid=\2a))`},
		{"a)(uid=*", `(&(objectClass=inetOrgPerson)(ou=staff)(uid=a\29\28uid=\2a))`},
		{`x\00`, `(&(objectClass=inetOrgPerson)(ou=staff)(uid=x\5c00))`},
		{"*@x.org", `(&(objectClass=inetOrgPerson)(ou=staff)(|(uid=\2a@x.org)(mail=\2a@x.org)))`},
	}
	for _, tc := range tests {
		if got := s.userFilter(s.loginFilter(tc.login)); got != tc.want {
			t.Errorf("login %q: filter %s, want %s", tc.login, got, tc.want)
		}
		if _, err := ldap.CompileFilter(s.userFilter(s.loginFilter(tc.login))); err != nil {
			t.Errorf("login %q: filter does not compile: %v", tc.login, err)
		}
	}
	if f, _ := s.idFilter("a*)(x"); f != `(entryUUID=a\2a\29\28x)` {
		t.Errorf("id filter %s", f)
	}
}

// An empty password is refused before the directory sees it: an empty
// simple bind is an unauthenticated one, which directories accept.
func TestEmptyPasswordNeverBinds(t *testing.T) {
	err := bindAs(nil, "uid=ann,dc=x", "")
	var de *DirectoryError
	if !errors.As(err, &de) || de.Kind != KindInvalidCredentials {
		t.Fatalf("empty password: %v", err)
	}
	right, err := bindUser(nil, presetSettings("openldap"), "uid=ann,dc=x", "")
	if right || err != nil {
		t.Fatalf("empty user password: %v, %v", right, err)
	}
}

// FuzzReadEntry feeds a directory's attribute values, as any directory
// may send them, through the mapping and the identity core's user rules:
// no panic, and what is accepted is a user the core would store.
func FuzzReadEntry(f *testing.F) {
	f.Add("ann", "ann@example.org", "Ann", "Lee", "6f1c", []byte{}, "openldap")
	f.Add("bob", "", "", "", "", []byte("0123456789abcdef"), "ad")
	f.Add(" \x00", "not-an-email", "\u202e", strings.Repeat("x", 300), "id", []byte{1}, "389ds")
	f.Fuzz(func(t *testing.T, username, email, first, last, id string, guid []byte, vendor string) {
		s, ok := vendors[vendor]
		if !ok {
			return
		}
		set := presetSettings(vendor)
		attrs := map[string][]string{s.username: {username}, s.email: {email}, s.firstName: {first}, s.lastName: {last},
			"userAccountControl": {id}}
		if vendor != "ad" {
			attrs[s.uuid] = []string{id}
		}
		e := ldap.NewEntry("cn=x", attrs)
		if vendor == "ad" {
			e.Attributes = append(e.Attributes, &ldap.EntryAttribute{Name: "objectGUID", Values: []string{string(guid)}, ByteValues: [][]byte{guid}})
		}
		u, err := set.readEntry(e)
		if err != nil {
			return
		}
		if u.Username == "" || u.ExternalID == "" {
			t.Fatalf("accepted an entry without username or ID: %+v", u)
		}
		if _, err := set.idFilter(u.ExternalID); err != nil {
			t.Fatalf("the ID read does not make a filter: %v", err)
		}
		if _, err := ldap.CompileFilter(set.userFilter(set.loginFilter(u.Username))); err != nil {
			t.Fatalf("the username makes a bad filter: %v", err)
		}
		su := &store.User{Username: u.Username, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName}
		_ = identity.ValidateUser(su) // refused or normalized: never a panic
	})
}

// FuzzNormDN feeds DNs as a directory may send them (group members,
// memberOf values) to the comparison of DNs: no panic, and a DN is under
// itself and under each of its parents.
func FuzzNormDN(f *testing.F) {
	f.Add("uid=ann,ou=people,dc=example,dc=org")
	f.Add("CN=Ann Lee+UID=ann , OU=People,DC=Example,DC=Org")
	f.Add(`cn=a\,b,dc=x`)
	f.Add("#04024869")
	f.Fuzz(func(t *testing.T, dn string) {
		n := normDN(dn)
		if !under(n, n) {
			t.Fatalf("%q is not under itself", n)
		}
		parsed, err := ldap.ParseDN(dn)
		if err != nil || len(parsed.RDNs) < 2 {
			return
		}
		parent := &ldap.DN{RDNs: parsed.RDNs[1:]}
		if p := normDN(parent.String()); !strings.HasSuffix(n, p) {
			t.Fatalf("%q does not end with its parent %q", n, p)
		}
	})
}
