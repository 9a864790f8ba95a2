package scim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// userDefs are the attributes a user's body may hold at its top level:
// the core schema's, the common ones, and the enterprise extension as an
// object under its URN (RFC 7643 §3.3).
var userDefs = slices.Concat(userSchema.Attributes, commonAttributes,
	[]attribute{complexOf(schemaEnterprise, "The enterprise extension.", false, enterpriseSchema.Attributes...)})

// userDoc is a user as a request gives it, checked: the fields the users
// row holds, and the rest of its SCIM attributes as data.
type userDoc struct {
	userName, givenName, familyName, email string
	active                                 *bool
	password                               *string
	// data is every attribute but userName, active, password and the
	// given and family names, under their defined names; the enterprise
	// extension under its URN.
	data map[string]any
	// index is the values filters and sorting read, mapped ones included.
	index     []store.SCIMValue
	addresses []store.SCIMAddress
	// attrs are the custom attributes' values the mappings write, each of
	// attrSchema (all of them, an attribute without values included).
	attrs      map[string][]string
	attrSchema []*store.CustomAttribute
}

// readUser checks a user's body (a creation's or a replacement's, or a
// user after PATCH) against the realm's schemas, and moves the mapped
// values to what they are mapped to.
func readUser(m *userModel, body map[string]any) (*userDoc, error) {
	if err := checkSchemas(body, schemaUser, m.extensions...); err != nil {
		return nil, err
	}
	rest := make(map[string]any, len(body))
	for k, v := range body {
		if !strings.EqualFold(k, "schemas") {
			rest[k] = v
		}
	}
	data, err := normalize(m.defs, rest, "")
	if err != nil {
		return nil, err
	}
	d := &userDoc{data: data}
	d.userName = text(data, "userName")
	if d.userName == "" {
		return nil, badRequest(typeInvalidValue, "userName is required")
	}
	delete(data, "userName")
	if name, ok := data["name"].(map[string]any); ok {
		// A name part another attribute is mapped to the row for stays
		// with SCIM.
		if !m.mapsField(targetFirstName) {
			d.givenName = text(name, "givenName")
			delete(name, "givenName")
		}
		if !m.mapsField(targetLastName) {
			d.familyName = text(name, "familyName")
			delete(name, "familyName")
		}
		if len(name) == 0 {
			delete(data, "name")
		}
	}
	if a, ok := data["active"].(bool); ok {
		d.active = &a
		delete(data, "active")
	}
	if p, ok := data["password"].(string); ok {
		d.password = &p
		delete(data, "password")
	}
	if emails, ok := data["emails"].([]any); ok {
		for i, e := range emails {
			e := e.(map[string]any)
			if _, err := validate.NormalizeEmail(text(e, "value")); err != nil {
				return nil, badRequest(typeInvalidValue, "emails[%d].value: %s", i, apperr.From(err).Message)
			}
		}
		if i := primaryOf(emails); i >= 0 {
			d.email = text(emails[i].(map[string]any), "value")
		}
	}
	d.index, d.addresses = indexValues(m.defs, data), addressValues(data)
	if err := m.extract(d); err != nil {
		return nil, err
	}
	return d, nil
}

// checkSchemas checks a body's schemas: it names core, and nothing but
// core and the extensions given.
func checkSchemas(body map[string]any, core string, extensions ...string) error {
	var raw any
	for k, v := range body {
		if strings.EqualFold(k, "schemas") {
			raw = v
		}
	}
	list, ok := raw.([]any)
	if !ok {
		return badRequest(typeInvalidSyntax, "schemas must list the resource's schemas, %s among them", core)
	}
	hasCore := false
	for _, s := range list {
		urn, _ := s.(string)
		switch {
		case strings.EqualFold(urn, core):
			hasCore = true
		case slices.ContainsFunc(extensions, func(e string) bool { return strings.EqualFold(e, urn) }):
		default:
			return badRequest(typeInvalidValue, "unknown schema %q", urn)
		}
	}
	if !hasCore {
		return badRequest(typeInvalidValue, "schemas must include %s", core)
	}
	return nil
}

// scimUser is what SCIM keeps of a user beyond its row, and the values
// filters read.
func scimUser(d *userDoc, now int64) (store.SCIMUser, []store.SCIMValue, error) {
	b, err := json.Marshal(d.data)
	if err != nil {
		return store.SCIMUser{}, nil, fmt.Errorf("encode SCIM attributes: %w", err)
	}
	return store.SCIMUser{ModifiedAt: now, Data: string(b), Addresses: d.addresses}, d.index, nil
}

// addressValues are the user's addresses as filters read them, folded.
func addressValues(data map[string]any) []store.SCIMAddress {
	list, _ := data["addresses"].([]any)
	out := make([]store.SCIMAddress, 0, len(list))
	for _, item := range list {
		a, _ := item.(map[string]any)
		f := func(key string) string { return store.FoldCase(text(a, key)) }
		out = append(out, store.SCIMAddress{Type: f("type"), Primary: a["primary"] == true, Formatted: f("formatted"),
			StreetAddress: f("streetAddress"), Locality: f("locality"), Region: f("region"), PostalCode: f("postalCode"),
			Country: f("country")})
	}
	return out
}

// indexValues are the values of data filters and sorting read: every
// single-valued string, at its lowercased path, folded, and each value of the
// emails and phone numbers with its type and whether it is primary.
func indexValues(defs []attribute, data map[string]any) []store.SCIMValue {
	var out []store.SCIMValue
	var walk func(defs []attribute, m map[string]any, prefix string)
	walk = func(defs []attribute, m map[string]any, prefix string) {
		for _, def := range defs {
			v, ok := m[def.Name]
			if !ok {
				continue
			}
			key := prefix + strings.ToLower(def.Name)
			switch {
			case def.MultiValued && (def.Name == "emails" || def.Name == "phoneNumbers"):
				for _, item := range v.([]any) {
					e := item.(map[string]any)
					val := text(e, "value")
					fold := store.FoldCase(val)
					if def.Name == "emails" {
						fold = strings.ToLower(val) // as the core stores the user's email, which filters compare too
					}
					out = append(out, store.SCIMValue{Attr: key, Value: val, Fold: fold,
						Type: store.FoldCase(text(e, "type")), Primary: e["primary"] == true})
				}
			case def.MultiValued:
			case def.Type == typeComplex:
				walk(def.SubAttributes, v.(map[string]any), key+".")
			case def.Type == typeString || def.Type == typeReference:
				s := v.(string)
				out = append(out, store.SCIMValue{Attr: key, Value: s, Fold: store.FoldCase(s)})
			}
		}
	}
	walk(defs, data, "")
	return out
}

// scimTime is a time as SCIM shows it (RFC 3339, UTC, milliseconds).
func scimTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// renderUser is the user as SCIM shows it, meta and version included:
// what SCIM keeps, the users row, and the mapped values at their paths
// (held, the user's custom attributes).
func (s *Service) renderUser(r *http.Request, m *userModel, u *store.User, su store.SCIMUser, groups []*store.Group,
	held map[string][]string) (map[string]any, error) {
	doc := map[string]any{}
	if su.Data != "" {
		if err := json.Unmarshal([]byte(su.Data), &doc); err != nil {
			return nil, fmt.Errorf("SCIM attributes of user %s: %w", u.ID, err)
		}
	}
	doc["id"] = u.ID
	doc["userName"] = u.Username
	doc["active"] = u.Enabled
	name, _ := doc["name"].(map[string]any)
	if name == nil {
		name = map[string]any{}
	}
	if u.FirstName != "" && !m.mapsField(targetFirstName) {
		name["givenName"] = u.FirstName
	}
	if u.LastName != "" && !m.mapsField(targetLastName) {
		name["familyName"] = u.LastName
	}
	if len(name) > 0 {
		doc["name"] = name
	}
	for _, am := range m.maps {
		switch {
		case am.field == targetFirstName && u.FirstName != "":
			m.put(doc, am.path, u.FirstName)
		case am.field == targetLastName && u.LastName != "":
			m.put(doc, am.path, u.LastName)
		case am.attr != nil && len(held[am.attr.Name]) > 0:
			m.put(doc, am.path, typed(am, held[am.attr.Name]))
		}
	}
	schemaList := []any{schemaUser}
	for _, ext := range m.extensions {
		if _, ok := doc[ext]; ok {
			schemaList = append(schemaList, ext)
		}
	}
	doc["schemas"] = schemaList
	doc["emails"] = renderEmails(doc["emails"], u.Email)
	if doc["emails"] == nil {
		delete(doc, "emails")
	}
	if len(groups) > 0 {
		list := make([]any, len(groups))
		for i, g := range groups {
			list[i] = map[string]any{"value": g.ID, "$ref": s.location(r, "Groups/"+g.ID), "display": g.Name, "type": "direct"}
		}
		doc["groups"] = list
	}
	if ext, ok := doc[schemaEnterprise].(map[string]any); ok {
		if m, ok := ext["manager"].(map[string]any); ok && text(m, "value") != "" {
			m["$ref"] = s.location(r, "Users/"+text(m, "value"))
		}
	}
	modified := su.ModifiedAt
	if modified == 0 {
		modified = u.CreatedAt
	}
	doc["meta"] = map[string]any{"resourceType": "User", "created": scimTime(u.CreatedAt), "lastModified": scimTime(modified),
		"location": s.location(r, "Users/"+u.ID), "version": version(doc)}
	return doc, nil
}

// renderEmails shows the user's emails with the users row's email as the
// primary one's value: the row is the truth, which the admin API may have
// changed since SCIM wrote the list.
func renderEmails(stored any, email string) any {
	list, _ := stored.([]any)
	primary := primaryOf(list)
	out := make([]any, 0, len(list)+1)
	found := false
	for i, item := range list {
		m := item.(map[string]any)
		if i == primary {
			if email == "" {
				continue
			}
			m["value"], m["primary"], found = email, true, true
		}
		out = append(out, m)
	}
	if !found && email != "" {
		out = append([]any{map[string]any{"value": email, "primary": true}}, out...)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// version is the ETag of a resource: a digest of what it shows but its
// meta, so that it changes with every change of the resource, whichever
// path made it.
func version(doc map[string]any) string {
	b, _ := json.Marshal(doc) // maps marshal with sorted keys
	sum := sha256.Sum256(b)
	return `W/"` + hex.EncodeToString(sum[:12]) + `"`
}
