package ldapfed

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The bounds of a provider's settings.
const (
	DefaultTimeout    = 5 * time.Second  // connectionTimeout and readTimeout when not given
	MaxTimeout        = 10 * time.Second // a sign-in never waits longer on one directory step
	DefaultPagination = 500              // entries per page of a sync's search
	maxPagination     = 10000
	maxSyncPeriod     = 31 * 24 * 3600 // a month, in seconds
	maxNameLength     = 255
	maxDNLength       = 4096
	maxFilterLength   = 4096
	maxCALength       = 64 << 10
)

// Sync modes, as Keycloak names them.
const (
	ModeImport   = "IMPORT"    // imported users' profiles may change locally
	ModeReadOnly = "READ_ONLY" // the directory owns the profile and the password
)

// Search scopes of the users DN.
const (
	ScopeOne     = "one"     // the entries right under usersDn
	ScopeSubtree = "subtree" // the whole tree under it
)

// What a sync does with a linked user whose entry is gone.
const (
	MissingDisable = "disable"
	MissingDelete  = "delete"
)

// preset is a vendor's schema: the defaults of the attribute settings.
type preset struct {
	objectClass, username, email, firstName, lastName, uuid string
	changed                                                 string // the attribute a changed-user sync compares
	changedFormat                                           string // its time as the directory compares it (a Go layout)
	groupObjectClass                                        string
	filter                                                  string // the default userLdapFilter
}

// Generalized time as a filter value. Active Directory orders its times
// only against the form with a fraction: against the plain form every
// entry matches.
const (
	generalizedTime   = "20060102150405Z"
	adGeneralizedTime = "20060102150405.0Z"
)

// adNotComputer keeps Active Directory's computer accounts (DC1$), which
// are users too, out of the users.
const adNotComputer = "(!(objectClass=computer))"

// vendors are the presets by the vendor setting's value. OpenLDAP's
// inetOrgPerson ones are the defaults of a provider without a vendor.
var vendors = map[string]preset{
	"openldap": {"inetOrgPerson", "uid", "mail", "givenName", "sn", "entryUUID", "modifyTimestamp", generalizedTime, "groupOfNames", ""},
	"389ds":    {"inetOrgPerson", "uid", "mail", "givenName", "sn", "nsUniqueId", "modifyTimestamp", generalizedTime, "groupOfNames", ""},
	"ad": {"person, organizationalPerson, user", "sAMAccountName", "mail", "givenName", "sn", "objectGUID", "whenChanged",
		adGeneralizedTime, "group", adNotComputer},
}

// Settings are a provider's settings besides its name, type, state,
// priority and bind password: what is stored as its config.
type Settings struct {
	Vendor            string `json:"vendor"`
	ConnectionURL     string `json:"connectionUrl"`
	StartTLS          bool   `json:"startTls"`
	UseTruststore     bool   `json:"useTruststore"` // trust the system's CAs
	CAPEM             string `json:"caPem"`         // CAs trusted besides (or instead of) them
	ConnectionTimeout int    `json:"connectionTimeout"`
	ReadTimeout       int    `json:"readTimeout"`
	Pagination        int    `json:"pagination"`
	BindDN            string `json:"bindDn"`
	UsersDN           string `json:"usersDn"`
	UserObjectClass   string `json:"userObjectClass"`
	UserLDAPFilter    string `json:"userLdapFilter"`
	SearchScope       string `json:"searchScope"`
	UsernameLDAPAttr  string `json:"usernameLdapAttr"`
	EmailLDAPAttr     string `json:"emailLdapAttr"`
	FirstNameLDAPAttr string `json:"firstNameLdapAttr"`
	LastNameLDAPAttr  string `json:"lastNameLdapAttr"`
	UUIDLDAPAttr      string `json:"uuidLdapAttr"`
	SyncMode          string `json:"syncMode"`
	SyncPeriod        int    `json:"syncPeriod"`
	ImportEnabled     bool   `json:"importEnabled"`
	MissingUsers      string `json:"missingUsers"`
	GroupSettings
}

// GroupSettings map a directory's groups to the realm's top-level groups
// of the same name; an empty GroupsDN maps none.
type GroupSettings struct {
	GroupsDN           string `json:"groupsDn"`
	GroupObjectClass   string `json:"groupObjectClass"`
	GroupNameLDAPAttr  string `json:"groupNameLdapAttr"`
	MembershipLDAPAttr string `json:"membershipLdapAttr"` // holds the members' DNs
	// GroupsStrategy is how a user's groups are found: "member", the
	// groups whose membershipLdapAttr holds the user's DN, or "memberOf",
	// the user's memberOf attribute.
	GroupsStrategy string `json:"groupsStrategy"`
	// NestedGroups counts the groups that hold a user's groups too (any
	// depth up to maxNesting), as Active Directory's nesting does.
	NestedGroups bool `json:"nestedGroups"`
}

// Group strategies.
const (
	GroupsByMember   = "member"
	GroupsByMemberOf = "memberOf"
)

// Input is a provider as a create, an update or an import gives it:
// anything left out takes its default (the vendor's, for the attributes).
type Input struct {
	Name               string `json:"name"`
	ProviderType       string `json:"providerType"`
	Enabled            *bool  `json:"enabled"`
	Priority           *int   `json:"priority"`
	BindCredential     string `json:"bindCredential"`
	Vendor             string `json:"vendor"`
	ConnectionURL      string `json:"connectionUrl"`
	StartTLS           *bool  `json:"startTls"`
	UseTruststore      *bool  `json:"useTruststore"`
	CAPEM              string `json:"caPem"`
	ConnectionTimeout  *int   `json:"connectionTimeout"`
	ReadTimeout        *int   `json:"readTimeout"`
	Pagination         *int   `json:"pagination"`
	BindDN             string `json:"bindDn"`
	UsersDN            string `json:"usersDn"`
	UserObjectClass    string `json:"userObjectClass"`
	UserLDAPFilter     string `json:"userLdapFilter"`
	SearchScope        string `json:"searchScope"`
	UsernameLDAPAttr   string `json:"usernameLdapAttr"`
	EmailLDAPAttr      string `json:"emailLdapAttr"`
	FirstNameLDAPAttr  string `json:"firstNameLdapAttr"`
	LastNameLDAPAttr   string `json:"lastNameLdapAttr"`
	UUIDLDAPAttr       string `json:"uuidLdapAttr"`
	SyncMode           string `json:"syncMode"`
	SyncPeriod         *int   `json:"syncPeriod"`
	ImportEnabled      *bool  `json:"importEnabled"`
	MissingUsers       string `json:"missingUsers"`
	GroupsDN           string `json:"groupsDn"`
	GroupObjectClass   string `json:"groupObjectClass"`
	GroupNameLDAPAttr  string `json:"groupNameLdapAttr"`
	MembershipLDAPAttr string `json:"membershipLdapAttr"`
	GroupsStrategy     string `json:"groupsStrategy"`
	NestedGroups       *bool  `json:"nestedGroups"`
}

// inputFields are the fields an update may name, each returning to its
// default when set to null.
var inputFields = func() map[string]any {
	m := map[string]any{}
	for _, k := range []string{"name", "providerType", "enabled", "priority", "bindCredential", "vendor", "connectionUrl",
		"startTls", "useTruststore", "caPem", "connectionTimeout", "readTimeout", "pagination", "bindDn", "usersDn",
		"userObjectClass", "userLdapFilter", "searchScope", "usernameLdapAttr", "emailLdapAttr", "firstNameLdapAttr",
		"lastNameLdapAttr", "uuidLdapAttr", "syncMode", "syncPeriod", "importEnabled", "missingUsers", "groupsDn",
		"groupObjectClass", "groupNameLdapAttr", "membershipLdapAttr", "groupsStrategy", "nestedGroups"} {
		m[k] = nil
	}
	return m
}()

func orDefault[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func orString(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return strings.TrimSpace(s)
}

// apply checks in and writes it onto p (whose ID, realm and creation time
// are set): the defaults filled in, every value checked, the first bad
// one refused with its field named. The bind credential is p's own when
// in has none or the redaction placeholder.
func (in *Input) apply(p *store.FederationProvider) (*Settings, error) {
	vendor := strings.ToLower(orString(in.Vendor, "openldap"))
	pre, ok := vendors[vendor]
	if !ok {
		return nil, apperr.Field("vendor", "must be one of openldap, ad, 389ds")
	}
	s := &Settings{
		Vendor: vendor, ConnectionURL: strings.TrimSpace(in.ConnectionURL), StartTLS: orDefault(in.StartTLS, false),
		UseTruststore: orDefault(in.UseTruststore, true), CAPEM: strings.TrimSpace(in.CAPEM),
		ConnectionTimeout: orDefault(in.ConnectionTimeout, int(DefaultTimeout/time.Millisecond)),
		ReadTimeout:       orDefault(in.ReadTimeout, int(DefaultTimeout/time.Millisecond)),
		Pagination:        orDefault(in.Pagination, DefaultPagination),
		BindDN:            strings.TrimSpace(in.BindDN), UsersDN: strings.TrimSpace(in.UsersDN),
		UserObjectClass: orString(in.UserObjectClass, pre.objectClass), UserLDAPFilter: orString(in.UserLDAPFilter, pre.filter),
		SearchScope:      strings.ToLower(orString(in.SearchScope, ScopeSubtree)),
		UsernameLDAPAttr: orString(in.UsernameLDAPAttr, pre.username), EmailLDAPAttr: orString(in.EmailLDAPAttr, pre.email),
		FirstNameLDAPAttr: orString(in.FirstNameLDAPAttr, pre.firstName), LastNameLDAPAttr: orString(in.LastNameLDAPAttr, pre.lastName),
		UUIDLDAPAttr: orString(in.UUIDLDAPAttr, pre.uuid), SyncMode: strings.ToUpper(orString(in.SyncMode, ModeImport)),
		SyncPeriod: orDefault(in.SyncPeriod, 0), ImportEnabled: orDefault(in.ImportEnabled, true),
		MissingUsers: strings.ToLower(orString(in.MissingUsers, MissingDisable)),
		GroupSettings: GroupSettings{GroupsDN: strings.TrimSpace(in.GroupsDN),
			GroupObjectClass:   orString(in.GroupObjectClass, pre.groupObjectClass),
			GroupNameLDAPAttr:  orString(in.GroupNameLDAPAttr, "cn"),
			MembershipLDAPAttr: orString(in.MembershipLDAPAttr, defaultMembershipAttr(orString(in.GroupObjectClass, pre.groupObjectClass))),
			GroupsStrategy:     orString(in.GroupsStrategy, GroupsByMember), NestedGroups: orDefault(in.NestedGroups, vendor == "ad")},
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, apperr.Field("name", "is required")
	}
	if err := validate.DisplayName("name", name, maxNameLength); err != nil {
		return nil, err
	}
	if t := orString(in.ProviderType, ""); t != "ldap" {
		return nil, apperr.Field("providerType", "must be ldap")
	}
	credential := in.BindCredential
	if credential == redacted || credential == "" {
		credential = p.BindCredential
	}
	if credential == "" {
		return nil, apperr.Field("bindCredential", "is required: an empty password would make an anonymous bind")
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	config, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	p.Name, p.ProviderType, p.Enabled, p.Priority = name, "ldap", orDefault(in.Enabled, true), orDefault(in.Priority, 0)
	p.BindCredential, p.Config = credential, string(config)
	return s, nil
}

// attrName is an attribute description: a name or an OID.
var attrName = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)+)$`)

// check checks every setting, the first bad one refused with its field.
func (s *Settings) check() error {
	if err := checkURL(s); err != nil {
		return err
	}
	if s.ConnectionTimeout < 1 || s.ConnectionTimeout > int(MaxTimeout/time.Millisecond) {
		return apperr.Field("connectionTimeout", "must be between 1 and %d milliseconds", MaxTimeout/time.Millisecond)
	}
	if s.ReadTimeout < 1 || s.ReadTimeout > int(MaxTimeout/time.Millisecond) {
		return apperr.Field("readTimeout", "must be between 1 and %d milliseconds", MaxTimeout/time.Millisecond)
	}
	if s.Pagination < 1 || s.Pagination > maxPagination {
		return apperr.Field("pagination", "must be between 1 and %d", maxPagination)
	}
	for _, dn := range []struct{ field, value string }{{"bindDn", s.BindDN}, {"usersDn", s.UsersDN}} {
		if dn.value == "" {
			return apperr.Field(dn.field, "is required")
		}
		if len(dn.value) > maxDNLength {
			return apperr.Field(dn.field, "must be at most %d characters", maxDNLength)
		}
	}
	if err := checkBindName("bindDn", s.BindDN); err != nil {
		return err
	}
	if _, err := ldap.ParseDN(s.UsersDN); err != nil {
		return apperr.Field("usersDn", "is not a distinguished name: %v", err)
	}
	for _, oc := range objectClasses(s.UserObjectClass) {
		if !attrName.MatchString(oc) {
			return apperr.Field("userObjectClass", "%q is not an object class name", oc)
		}
	}
	if s.UserLDAPFilter != "" {
		if len(s.UserLDAPFilter) > maxFilterLength || !strings.HasPrefix(s.UserLDAPFilter, "(") {
			return apperr.Field("userLdapFilter", "must be one parenthesized LDAP filter of at most %d characters", maxFilterLength)
		}
		if _, err := ldap.CompileFilter(s.UserLDAPFilter); err != nil {
			return apperr.Field("userLdapFilter", "is not an LDAP filter: %v", err)
		}
	}
	if s.SearchScope != ScopeOne && s.SearchScope != ScopeSubtree {
		return apperr.Field("searchScope", "must be one or subtree")
	}
	for _, a := range []struct{ field, value string }{{"usernameLdapAttr", s.UsernameLDAPAttr},
		{"emailLdapAttr", s.EmailLDAPAttr}, {"firstNameLdapAttr", s.FirstNameLDAPAttr},
		{"lastNameLdapAttr", s.LastNameLDAPAttr}, {"uuidLdapAttr", s.UUIDLDAPAttr}} {
		if !attrName.MatchString(a.value) || len(a.value) > 128 {
			return apperr.Field(a.field, "must be an attribute name")
		}
	}
	if s.SyncMode != ModeImport && s.SyncMode != ModeReadOnly {
		return apperr.Field("syncMode", "must be IMPORT or READ_ONLY")
	}
	if s.SyncPeriod < 0 || s.SyncPeriod > maxSyncPeriod {
		return apperr.Field("syncPeriod", "must be between 0 (no periodic sync) and %d seconds", maxSyncPeriod)
	}
	if s.MissingUsers != MissingDisable && s.MissingUsers != MissingDelete {
		return apperr.Field("missingUsers", "must be disable or delete")
	}
	return s.GroupSettings.check()
}

func (g *GroupSettings) check() error {
	if g.GroupsDN != "" {
		if len(g.GroupsDN) > maxDNLength {
			return apperr.Field("groupsDn", "must be at most %d characters", maxDNLength)
		}
		if _, err := ldap.ParseDN(g.GroupsDN); err != nil {
			return apperr.Field("groupsDn", "is not a distinguished name: %v", err)
		}
	}
	for _, a := range []struct{ field, value string }{{"groupObjectClass", g.GroupObjectClass},
		{"groupNameLdapAttr", g.GroupNameLDAPAttr}, {"membershipLdapAttr", g.MembershipLDAPAttr}} {
		if !attrName.MatchString(a.value) || len(a.value) > 128 {
			return apperr.Field(a.field, "must be an attribute or object class name")
		}
	}
	if g.GroupsStrategy != GroupsByMember && g.GroupsStrategy != GroupsByMemberOf {
		return apperr.Field("groupsStrategy", "must be member or memberOf")
	}
	return nil
}

// defaultMembershipAttr is the attribute of a group object class that
// holds its members' DNs.
func defaultMembershipAttr(objectClass string) string {
	if strings.EqualFold(objectClass, "groupOfUniqueNames") {
		return "uniqueMember"
	}
	return "member"
}

func checkURL(s *Settings) error {
	if s.ConnectionURL == "" {
		return apperr.Field("connectionUrl", "is required")
	}
	u, err := url.Parse(s.ConnectionURL)
	switch {
	case err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Hostname() == "":
		return apperr.Field("connectionUrl", "must be an ldap:// or ldaps:// URL with a host")
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return apperr.Field("connectionUrl", "must name only the scheme, the host and the port")
	case u.Scheme == "ldaps" && s.StartTLS:
		return apperr.Field("startTls", "cannot be combined with an ldaps:// URL, which is TLS already")
	}
	if net.ParseIP(u.Hostname()) == nil {
		if err := validate.Host("connectionUrl", u.Hostname()); err != nil {
			return err
		}
	}
	if s.CAPEM != "" {
		if err := checkCAPEM(s.CAPEM); err != nil {
			return err
		}
	}
	if (u.Scheme == "ldaps" || s.StartTLS) && !s.UseTruststore && s.CAPEM == "" {
		return apperr.Field("caPem", "is required for TLS when useTruststore is false: nothing would be trusted")
	}
	return nil
}

// checkCAPEM checks caPem: PEM certificates, every one of them readable.
// The pool the connections build would skip one it cannot read, without
// saying so; here its reason is the answer.
func checkCAPEM(s string) error {
	if len(s) > maxCALength {
		return apperr.Field("caPem", "must be at most %d characters", maxCALength)
	}
	rest, n := []byte(s), 0
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		n++
		if len(block.Headers) != 0 {
			return apperr.Field("caPem", "certificate %d has PEM headers, which a certificate pool does not take", n)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return apperr.Field("caPem", "certificate %d cannot be read: %v", n, err)
		}
	}
	if n == 0 {
		return apperr.Field("caPem", "must hold PEM certificates")
	}
	return nil
}

// objectClasses splits a comma-separated list of object classes.
func objectClasses(list string) []string {
	var out []string
	for _, oc := range strings.Split(list, ",") {
		if oc = strings.TrimSpace(oc); oc != "" {
			out = append(out, oc)
		}
	}
	return out
}

// settingsOf reads a stored provider's settings.
func settingsOf(p *store.FederationProvider) (*Settings, error) {
	var s Settings
	if err := json.Unmarshal([]byte(p.Config), &s); err != nil {
		return nil, fmt.Errorf("federation provider %s: read settings: %w", p.ID, err)
	}
	return &s, nil
}

func (s *Settings) connectionTimeout() time.Duration {
	return time.Duration(s.ConnectionTimeout) * time.Millisecond
}

func (s *Settings) readTimeout() time.Duration {
	return time.Duration(s.ReadTimeout) * time.Millisecond
}

// changedFilter is the filter item of the entries changed at or after
// since, in the directory's own form of the time.
func (s *Settings) changedFilter(since time.Time) string {
	pre := vendors[s.Vendor]
	return "(" + pre.changed + ">=" + since.UTC().Format(pre.changedFormat) + ")"
}
