package ldapfed

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// maxCounted bounds the users test-connection counts: past it, the count
// is a lower bound.
const maxCounted = 10000

// ConnectionTest is the answer of test-connection: what the directory
// showed, or why it failed.
type ConnectionTest struct {
	Success        bool     `json:"success"`
	Error          string   `json:"error,omitempty"` // a Kind
	Detail         string   `json:"detail,omitempty"`
	Vendor         string   `json:"vendor,omitempty"` // as the root DSE shows it
	VendorVersion  string   `json:"vendorVersion,omitempty"`
	NamingContexts []string `json:"namingContexts,omitempty"`
	// UserCount is how many entries under usersDn match the user filter,
	// counted up to maxCounted; UserCountCapped says there are more.
	UserCount       int  `json:"userCount"`
	UserCountCapped bool `json:"userCountCapped,omitempty"`
}

// TestConnection connects with the provider's stored settings, binds with
// its account, reads the root DSE and counts the users under usersDn. A
// failure is an answer too (200, success false), naming its kind.
func (s *Service) TestConnection(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.provider(r)
	if err != nil {
		return err
	}
	set, err := settingsOf(p)
	if err != nil {
		return err
	}
	out, err := testConnection(r.Context(), set, p)
	var de *DirectoryError
	if errors.As(err, &de) {
		return httpx.OK(w, ConnectionTest{Error: de.Kind, Detail: de.Detail})
	} else if err != nil {
		return err
	}
	return httpx.OK(w, out)
}

func testConnection(ctx context.Context, set *Settings, p *store.FederationProvider) (out *ConnectionTest, err error) {
	err = withConn(ctx, set, func(c *ldap.Conn) error {
		out, err = testBound(ctx, c, set, p)
		return err
	})
	return out, err
}

func testBound(ctx context.Context, c *ldap.Conn, set *Settings, p *store.FederationProvider) (*ConnectionTest, error) {
	if err := bindAs(c, set.BindDN, p.BindCredential); err != nil {
		return nil, classify(err, set, "bind as "+set.BindDN)
	}
	out := &ConnectionTest{Success: true}
	root, err := c.Search(ldap.NewSearchRequest("", ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 0, false,
		"(objectClass=*)", []string{"namingContexts", "vendorName", "vendorVersion", "objectClass", "forestFunctionality"}, nil))
	if err == nil && len(root.Entries) == 1 {
		e := root.Entries[0]
		out.NamingContexts = e.GetAttributeValues("namingContexts")
		out.Vendor, out.VendorVersion = vendorOf(e), e.GetAttributeValue("vendorVersion")
	}
	// The users DN first on its own, so that a wrong one is told apart
	// from an empty one.
	if _, err := c.Search(ldap.NewSearchRequest(set.UsersDN, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 0, false,
		"(objectClass=*)", []string{"1.1"}, nil)); err != nil {
		return nil, classify(err, set, "read usersDn "+set.UsersDN)
	}
	if err := countUsers(ctx, c, set, out); err != nil {
		return nil, classify(err, set, "search the users under "+set.UsersDN)
	}
	return out, nil
}

// countUsers counts the users page by page, asking for no attributes.
func countUsers(ctx context.Context, c *ldap.Conn, set *Settings, out *ConnectionTest) error {
	req := ldap.NewSearchRequest(set.UsersDN, set.searchScope(), ldap.NeverDerefAliases, 0, 0, false,
		set.userFilter(""), []string{"1.1"}, nil)
	return eachEntry(ctx, c, req, fixed(set.Pagination), func(*ldap.Entry) error {
		out.UserCount++
		if out.UserCount >= maxCounted {
			out.UserCountCapped = true
			return errStop
		}
		return nil
	})
}

// vendorOf names the directory product a root DSE shows.
func vendorOf(root *ldap.Entry) string {
	name := root.GetAttributeValue("vendorName")
	switch {
	case strings.Contains(name, "389"):
		return "389ds"
	case slices.Contains(root.GetAttributeValues("objectClass"), "OpenLDAProotDSE"):
		return "openldap"
	case root.GetAttributeValue("forestFunctionality") != "":
		return "ad"
	}
	return name
}
