package orgs

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxNameLength        = 255
	maxDescriptionLength = 1024
	maxSlugLength        = 63
	maxDomains           = 100
	maxAttributes        = 100
	maxAttributeValues   = 100
	maxAttributeLength   = 2048
)

// slugPattern is a DNS label: it fits in a URL path, a token claim and a
// host name as it is.
var slugPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// slugFromName is the slug an organization created without one gets, as
// Keycloak's alias defaults to the name: lowercased, every run of other
// characters a '-'.
func slugFromName(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		} else {
			dash = true
		}
	}
	s := b.String()
	if len(s) > maxSlugLength {
		s = strings.TrimRight(s[:maxSlugLength], "-")
	}
	return s
}

// checkSlug refuses a slug that is not a lowercase DNS label.
func checkSlug(slug string) error {
	if len(slug) > maxSlugLength || !slugPattern.MatchString(slug) {
		return apperr.Field("slug", "must be 1 to %d lowercase letters, digits and '-', starting and ending with a letter or digit", maxSlugLength)
	}
	return nil
}

// checkOrganization checks and normalizes what an organization is about to
// be stored with; domains are lowercased and kept in name order.
func checkOrganization(o *store.Organization) error {
	o.Name = strings.TrimSpace(o.Name)
	if o.Name == "" {
		return apperr.Field("name", "must not be empty")
	}
	if err := validate.DisplayName("name", o.Name, maxNameLength); err != nil {
		return err
	}
	if err := validate.Text("description", o.Description, maxDescriptionLength); err != nil {
		return err
	}
	if err := checkAttributes(o.Attributes); err != nil {
		return err
	}
	if len(o.Domains) > maxDomains {
		return apperr.Field("domains", "at most %d domains", maxDomains)
	}
	seen := map[string]bool{}
	for i := range o.Domains {
		field := fmt.Sprintf("domains[%d].name", i)
		name, err := NormalizeDomain(field, o.Domains[i].Name)
		if err != nil {
			return err
		}
		if seen[name] {
			return apperr.Field(field, "%s is listed twice", name)
		}
		seen[name] = true
		o.Domains[i].Name = name
	}
	slices.SortFunc(o.Domains, func(a, b store.OrgDomain) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// NormalizeDomain lowercases an email domain and checks it is a DNS name
// of at least two labels: not an address, not a bare top-level name.
func NormalizeDomain(field, name string) (string, error) {
	name = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
	if err := validate.Host(field, name); err != nil {
		return "", err
	}
	if _, err := netip.ParseAddr(name); err == nil || !strings.Contains(name, ".") || strings.Contains(name, "_") {
		return "", apperr.Field(field, "must be a domain name such as example.com")
	}
	return name, nil
}

func checkAttributes(attrs map[string][]string) error {
	if len(attrs) > maxAttributes {
		return apperr.Field("attributes", "at most %d attributes", maxAttributes)
	}
	for k, vs := range attrs {
		if k == "" {
			return apperr.Field("attributes", "names must not be empty")
		}
		if err := validate.Identifier("attributes", k, maxNameLength); err != nil {
			return err
		}
		if len(vs) > maxAttributeValues {
			return apperr.Field("attributes."+k, "at most %d values", maxAttributeValues)
		}
		for _, v := range vs {
			if err := validate.Text("attributes."+k, v, maxAttributeLength); err != nil {
				return err
			}
		}
	}
	return nil
}
