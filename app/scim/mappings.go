package scim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	filter "github.com/scim2/filter-parser/v2"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The targets of an attribute mapping: a field of the users row, or a
// custom attribute of the realm's schema (app/attributes) as
// "attributes.<name>".
const (
	targetFirstName  = "firstName"
	targetLastName   = "lastName"
	targetAttrPrefix = "attributes."
)

// MappingRep is an attribute mapping as the admin API shows it, and as
// the realm export holds it.
type MappingRep struct {
	ID        string `json:"id"`
	SCIMPath  string `json:"scimPath"`
	Target    string `json:"target"`
	CreatedAt int64  `json:"createdAt"` // Unix milliseconds
}

// MappingCreate is the body of a mapping's creation.
type MappingCreate struct {
	SCIMPath string `json:"scimPath"`
	Target   string `json:"target"`
}

func mappingRep(m *store.SCIMMapping) MappingRep {
	return MappingRep{ID: m.ID, SCIMPath: m.Path, Target: m.Target, CreatedAt: m.CreatedAt}
}

// mappingPath is the SCIM attribute a mapping reads and writes: an
// attribute of the core schema, the enterprise extension or an extension
// of the realm's own (ext, its URN; "" for core), a sub-attribute of it,
// or a sub-attribute of the value of a multi-valued attribute that has a
// type (addresses[type eq "work"].locality).
type mappingPath struct {
	ext       string
	attr, sub string
	valueType string // the selected value's type, lowercase; "" for none
}

// String is the path in its canonical form, names as their schemas
// define them.
func (p mappingPath) String() string {
	var b strings.Builder
	if p.ext != "" {
		b.WriteString(p.ext + ":")
	}
	b.WriteString(p.attr)
	if p.valueType != "" {
		fmt.Fprintf(&b, "[type eq %q]", p.valueType)
	}
	if p.sub != "" {
		b.WriteString("." + p.sub)
	}
	return b.String()
}

// key is what makes two paths the same: the canonical form, without case.
func (p mappingPath) key() string { return strings.ToLower(p.String()) }

// reservedPaths are the attributes with a meaning of their own on the
// users row or in SCIM (lowercase keys), which no mapping may take.
var reservedPaths = []string{"id", "username", "password", "active", "meta", "groups", "emails", "name.givenname",
	"name.familyname"}

// mappedMultis are the multi-valued attributes a mapping may select a
// value of, by its type, and their sub-attributes it may map.
var mappedMultis = map[string][]string{
	"addresses":    {"formatted", "streetAddress", "locality", "region", "postalCode", "country"},
	"phoneNumbers": {"value"},
}

var (
	extensionURN    = regexp.MustCompile(`^urn:[A-Za-z0-9][A-Za-z0-9._-]*(:[A-Za-z0-9._-]+)+$`)
	extensionAttr   = validate.MustPattern(`^[A-Za-z][A-Za-z0-9_-]*$`, 1, 64)
	knownSchemaURNs = []string{schemaUser, schemaEnterprise, schemaGroup, schemaSchema, schemaResType,
		schemaServiceProviderConfig, schemaListResponse, schemaPatchOp}
)

// parseMappingPath reads a mapping's SCIM path; its errors name the
// field scimPath.
func parseMappingPath(raw string) (mappingPath, error) {
	bad := func(format string, args ...any) error {
		return apperr.Field("scimPath", format, args...)
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return mappingPath{}, bad("is required")
	}
	if checkBounds(raw) != nil || len(raw) > 512 {
		return mappingPath{}, bad("is longer than 512 characters or nests too deeply")
	}
	fp, err := filter.ParsePath([]byte(raw))
	if err != nil {
		return mappingPath{}, bad("%q is not a SCIM attribute path (RFC 7644 §3.5.2)", raw)
	}
	ap := fp.AttributePath
	uri := ap.URI()
	if uri != "" && !strings.EqualFold(uri, schemaUser) && !strings.EqualFold(uri, schemaEnterprise) {
		// An extension of the realm's own: one attribute, nothing nested.
		if slices.ContainsFunc(knownSchemaURNs, func(u string) bool { return strings.EqualFold(u, uri) }) {
			return mappingPath{}, bad("%s is not a schema of users' attributes", uri)
		}
		if !extensionURN.MatchString(uri) || len(uri) > 256 {
			return mappingPath{}, bad("%q is not a URN", uri)
		}
		if ap.SubAttribute != nil || fp.ValueExpression != nil || fp.SubAttribute != nil || !extensionAttr.MatchString(ap.AttributeName) {
			return mappingPath{}, bad("an extension's attribute is a plain name of letters, digits, '_' and '-': %s:<name>", uri)
		}
		return mappingPath{ext: uri, attr: ap.AttributeName}, nil
	}
	defs, p := userSchema.Attributes, mappingPath{}
	if strings.EqualFold(uri, schemaEnterprise) {
		defs, p.ext = enterpriseSchema.Attributes, schemaEnterprise
	}
	def := find(defs, ap.AttributeName)
	if def == nil {
		return mappingPath{}, bad("no attribute %q in the schema", ap.AttributeName)
	}
	p.attr = def.Name
	sub := ap.SubAttributeName()
	if fp.SubAttribute != nil {
		if sub != "" {
			return mappingPath{}, bad("%q names two sub-attributes", raw)
		}
		sub = *fp.SubAttribute
	}
	if fp.ValueExpression != nil {
		subs, ok := mappedMultis[def.Name]
		if !ok || p.ext != "" {
			return mappingPath{}, bad("a value can be selected by its type in addresses and phoneNumbers only")
		}
		e, ok := fp.ValueExpression.(*filter.AttributeExpression)
		var typ string
		isText := false
		if ok {
			typ, isText = e.CompareValue.(string)
		}
		if !ok || !strings.EqualFold(e.AttributePath.AttributeName, "type") || e.AttributePath.SubAttribute != nil ||
			e.Operator != filter.EQ || !isText || typ == "" {
			return mappingPath{}, bad(`select the value by its type alone: %s[type eq "work"]`, def.Name)
		}
		i := slices.IndexFunc(subs, func(s string) bool { return strings.EqualFold(s, sub) })
		if i < 0 {
			return mappingPath{}, bad("name one of %s of the selected value", strings.Join(subs, ", "))
		}
		p.valueType, p.sub = strings.ToLower(typ), subs[i]
		return p, nil
	}
	if def.MultiValued {
		if _, ok := mappedMultis[def.Name]; ok {
			return mappingPath{}, bad(`%s is multi-valued: select one value by its type, as in %s[type eq "work"]`, def.Name, def.Name)
		}
		return mappingPath{}, bad("%s cannot be mapped", def.Name)
	}
	if sub != "" {
		sd := find(def.SubAttributes, sub)
		if sd == nil {
			return mappingPath{}, bad("no sub-attribute %q of %s", sub, def.Name)
		}
		p.sub = sd.Name
		def = sd
	} else if def.Type == typeComplex {
		return mappingPath{}, bad("%s is complex: name one of its sub-attributes", p.attr)
	}
	reserved := p.ext == "" && slices.Contains(reservedPaths, p.key()) || p.ext != "" && p.attr == "manager"
	if def.Type != typeString || def.Mutability != readWrite || reserved {
		return mappingPath{}, bad("%s cannot be mapped: it has a meaning of its own", p)
	}
	return p, nil
}

// parseTarget reads a mapping's target; its errors name the field target.
func parseTarget(raw string) (field, attr string, err error) {
	switch {
	case raw == "":
		return "", "", apperr.Field("target", "is required")
	case raw == targetFirstName || raw == targetLastName:
		return raw, "", nil
	}
	name, ok := strings.CutPrefix(raw, targetAttrPrefix)
	if !ok || name == "" {
		return "", "", apperr.Field("target", "must be %s, %s or %s<name> (a custom attribute of the realm)",
			targetFirstName, targetLastName, targetAttrPrefix)
	}
	return "", name, nil
}

// checkMapping checks a mapping as given and answers its canonical path
// and its key: the checks a realm file's mappings pass too.
func checkMapping(rep MappingRep) (mappingPath, error) {
	p, err := parseMappingPath(rep.SCIMPath)
	if err != nil {
		return p, err
	}
	if _, _, err := parseTarget(rep.Target); err != nil {
		return p, err
	}
	return p, nil
}

// mappingConflict is the admin API's error for a mapping a rule of
// uniqueness refuses.
func mappingConflict(err error, m *store.SCIMMapping) error {
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	if ce.Column == "target" {
		return apperr.Conflict("target", "another mapping of the realm writes %s", m.Target)
	}
	if ce.Column == "path_key" {
		return apperr.Conflict("scimPath", "the realm maps %s already", m.Path)
	}
	return apperr.Conflict("id", "a mapping with id %s exists", m.ID)
}

// CreateMapping answers POST .../scim/attribute-mappings:
// {"scimPath", "target"}. A custom attribute target must be in the
// realm's schema.
func (s *Service) CreateMapping(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body MappingCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	p, err := checkMapping(MappingRep{SCIMPath: body.SCIMPath, Target: body.Target})
	if err != nil {
		return err
	}
	m := &store.SCIMMapping{ID: uuid.NewString(), RealmID: realm.ID, Path: p.String(), PathKey: p.key(), Target: body.Target,
		CreatedAt: s.deps.Now().UnixMilli()}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if _, attr, _ := parseTarget(body.Target); attr != "" {
			schema, err := tx.ListCustomAttributes(r.Context(), realm.ID)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(schema, func(a *store.CustomAttribute) bool { return a.Name == attr }) {
				return apperr.Field("target", "no custom attribute %q in the realm's schema", attr)
			}
		}
		return mappingConflict(tx.CreateSCIMMapping(r.Context(), m), m)
	})
	if err != nil {
		return err
	}
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+m.ID, mappingRep(m))
}

// ListMappings answers the realm's mappings, oldest first.
func (s *Service) ListMappings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	out, err := ExportMappings(r.Context(), s.deps.Store, realm.ID)
	if err != nil {
		return err
	}
	return httpx.OK(w, out)
}

// DeleteMapping removes a mapping. What SCIM wrote to its target stays
// there; the SCIM path is kept by SCIM again from the next write on.
func (s *Service) DeleteMapping(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	id := mux.Vars(r)["mappingId"]
	if err := s.deps.Store.DeleteSCIMMapping(r.Context(), realm.ID, id); errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("SCIM attribute mapping " + id)
	} else if err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// ExportMappings is a realm's mappings in the admin API's representation,
// for the realm export.
func ExportMappings(ctx context.Context, st *store.Store, realmID string) ([]MappingRep, error) {
	list, err := st.ListSCIMMappings(ctx, realmID)
	if err != nil {
		return nil, err
	}
	out := make([]MappingRep, len(list))
	for i, m := range list {
		out[i] = mappingRep(m)
	}
	return out, nil
}

// ImportedMapping is a mapping in a realm file: the admin API's
// representation, its ID and creation time optional.
type ImportedMapping struct {
	ID        *string `json:"id"`
	SCIMPath  string  `json:"scimPath"`
	Target    string  `json:"target"`
	CreatedAt *int64  `json:"createdAt"`
}

// PlanImportMappings checks the mappings of a realm file (as the admin API
// checks them, but for the existence of a custom attribute target, which
// the file does not carry: such a mapping acts once the attribute exists)
// and turns them into the rows to write into realm realmID.
func PlanImportMappings(in []ImportedMapping, realmID string, asCopy bool, now int64) ([]*store.SCIMMapping, error) {
	out := make([]*store.SCIMMapping, 0, len(in))
	paths, targets := map[string]bool{}, map[string]bool{}
	for i, im := range in {
		prefix := fmt.Sprintf("scimAttributeMappings[%d]", i)
		p, err := checkMapping(MappingRep{SCIMPath: im.SCIMPath, Target: im.Target})
		if err != nil {
			return nil, apperr.Under(err, prefix)
		}
		m := &store.SCIMMapping{ID: uuid.NewString(), RealmID: realmID, Path: p.String(), PathKey: p.key(), Target: im.Target,
			CreatedAt: now}
		if im.ID != nil && !asCopy {
			if err := uuid.Validate(*im.ID); err != nil {
				return nil, apperr.Field(prefix+".id", "must be a UUID")
			}
			m.ID = strings.ToLower(*im.ID)
		}
		if im.CreatedAt != nil {
			m.CreatedAt = *im.CreatedAt
		}
		switch {
		case paths[m.PathKey]:
			return nil, apperr.Conflict(prefix+".scimPath", "%s.scimPath: %s is mapped twice", prefix, m.Path)
		case targets[m.Target]:
			return nil, apperr.Conflict(prefix+".target", "%s.target: %s is written by two mappings", prefix, m.Target)
		}
		paths[m.PathKey], targets[m.Target] = true, true
		out = append(out, m)
	}
	return out, nil
}

// WriteMappings writes a realm file's mappings planned by
// PlanImportMappings.
func WriteMappings(ctx context.Context, tx *store.Store, ms []*store.SCIMMapping) error {
	for i, m := range ms {
		if err := tx.CreateSCIMMapping(ctx, m); err != nil {
			return apperr.Under(mappingConflict(err, m), fmt.Sprintf("scimAttributeMappings[%d]", i))
		}
	}
	return nil
}
