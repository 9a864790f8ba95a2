package ldapfed

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// entryUser is a directory entry read as a user: what the local user is
// made of, by the provider's attribute settings.
type entryUser struct {
	DN         string
	ExternalID string // the uuidLdapAttr value, as text
	Username   string
	Email      string
	FirstName  string
	LastName   string
	Disabled   bool // Active Directory's userAccountControl says so
}

// adDisabled is the ACCOUNTDISABLE flag of userAccountControl.
const adDisabled = 0x2

// attributes are the attributes a search for users asks for.
func (s *Settings) attributes() []string {
	attrs := []string{s.UsernameLDAPAttr, s.EmailLDAPAttr, s.FirstNameLDAPAttr, s.LastNameLDAPAttr, s.UUIDLDAPAttr}
	if s.Vendor == "ad" {
		attrs = append(attrs, "userAccountControl")
	}
	if s.GroupsDN != "" && s.GroupsStrategy == GroupsByMemberOf {
		attrs = append(attrs, "memberOf")
	}
	return attrs
}

// readEntry maps an entry to a user. An entry without a username or a
// stable ID cannot be a user; everything else is checked by the identity
// core's user rules when the user is written.
func (s *Settings) readEntry(e *ldap.Entry) (entryUser, error) {
	u := entryUser{DN: e.DN, Username: strings.TrimSpace(e.GetAttributeValue(s.UsernameLDAPAttr)),
		Email: strings.TrimSpace(e.GetAttributeValue(s.EmailLDAPAttr)), FirstName: strings.TrimSpace(e.GetAttributeValue(s.FirstNameLDAPAttr)),
		LastName: strings.TrimSpace(e.GetAttributeValue(s.LastNameLDAPAttr))}
	if u.Username == "" {
		return u, fmt.Errorf("the entry has no %s (usernameLdapAttr)", s.UsernameLDAPAttr)
	}
	id, err := s.externalID(e)
	if err != nil {
		return u, err
	}
	u.ExternalID = id
	if uac := e.GetAttributeValue("userAccountControl"); s.Vendor == "ad" && uac != "" {
		n, err := strconv.ParseInt(uac, 10, 64)
		u.Disabled = err == nil && n&adDisabled != 0
	}
	return u, nil
}

// externalID is the entry's stable ID as text: Active Directory's binary
// objectGUID in its usual form, any other attribute as it is.
func (s *Settings) externalID(e *ldap.Entry) (string, error) {
	if strings.EqualFold(s.UUIDLDAPAttr, "objectGUID") {
		raw := e.GetRawAttributeValue(s.UUIDLDAPAttr)
		if len(raw) != 16 {
			return "", fmt.Errorf("the entry's objectGUID is not 16 bytes")
		}
		return formatGUID(raw), nil
	}
	id := e.GetAttributeValue(s.UUIDLDAPAttr)
	if id == "" || len(id) > 255 {
		return "", fmt.Errorf("the entry has no usable %s (uuidLdapAttr)", s.UUIDLDAPAttr)
	}
	return id, nil
}

// formatGUID writes a GUID's 16 bytes as Windows shows them: the first
// three fields little-endian.
func formatGUID(b []byte) string {
	return fmt.Sprintf("%08x-%04x-%04x-%s-%s", binary.LittleEndian.Uint32(b[0:4]), binary.LittleEndian.Uint16(b[4:6]),
		binary.LittleEndian.Uint16(b[6:8]), hex.EncodeToString(b[8:10]), hex.EncodeToString(b[10:16]))
}

// parseGUID is formatGUID's reverse.
func parseGUID(s string) ([]byte, error) {
	h := strings.ReplaceAll(s, "-", "")
	raw, err := hex.DecodeString(h)
	if err != nil || len(raw) != 16 || len(s) != 36 {
		return nil, errors.New("not a GUID")
	}
	out := make([]byte, 16)
	binary.LittleEndian.PutUint32(out[0:4], binary.BigEndian.Uint32(raw[0:4]))
	binary.LittleEndian.PutUint16(out[4:6], binary.BigEndian.Uint16(raw[4:6]))
	binary.LittleEndian.PutUint16(out[6:8], binary.BigEndian.Uint16(raw[6:8]))
	copy(out[8:], raw[8:])
	return out, nil
}

// idFilter is the filter item that finds the entry of a stable ID, its
// value escaped (byte by byte for a binary objectGUID).
func (s *Settings) idFilter(id string) (string, error) {
	if strings.EqualFold(s.UUIDLDAPAttr, "objectGUID") {
		raw, err := parseGUID(id)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, c := range raw {
			fmt.Fprintf(&b, `\%02x`, c)
		}
		return "(" + s.UUIDLDAPAttr + "=" + b.String() + ")", nil
	}
	return "(" + s.UUIDLDAPAttr + "=" + ldap.EscapeFilter(id) + ")", nil
}

// loginFilter is the filter item that finds the entry a login names: by
// username, or by email too when it holds an @.
func (s *Settings) loginFilter(login string) string {
	v := ldap.EscapeFilter(login)
	if strings.Contains(login, "@") {
		return "(|(" + s.UsernameLDAPAttr + "=" + v + ")(" + s.EmailLDAPAttr + "=" + v + "))"
	}
	return "(" + s.UsernameLDAPAttr + "=" + v + ")"
}
