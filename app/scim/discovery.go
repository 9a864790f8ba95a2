package scim

import (
	"net/http"

	"github.com/gorilla/mux"
)

// The service provider's limits, advertised in ServiceProviderConfig and
// enforced where they apply.
const (
	maxResults = 1000 // a list's page at most, and what a filter may match without paging
)

const schemaServiceProviderConfig = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"

type supported struct {
	Supported bool `json:"supported"`
}

// ServiceProviderConfigRep is RFC 7643 §5's ServiceProviderConfig.
type ServiceProviderConfigRep struct {
	Schemas               []string       `json:"schemas"`
	DocumentationURI      string         `json:"documentationUri,omitempty"`
	Patch                 supported      `json:"patch"`
	Bulk                  bulkConfig     `json:"bulk"`
	Filter                filterConfig   `json:"filter"`
	ChangePassword        supported      `json:"changePassword"`
	Sort                  supported      `json:"sort"`
	ETag                  supported      `json:"etag"`
	AuthenticationSchemes []authScheme   `json:"authenticationSchemes"`
	Meta                  map[string]any `json:"meta"`
}

type bulkConfig struct {
	Supported      bool `json:"supported"`
	MaxOperations  int  `json:"maxOperations"`
	MaxPayloadSize int  `json:"maxPayloadSize"`
}

type filterConfig struct {
	Supported  bool `json:"supported"`
	MaxResults int  `json:"maxResults"`
}

type authScheme struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Primary     bool   `json:"primary"`
}

// ServiceProviderConfig answers what the server supports (RFC 7643 §5).
func (s *Service) ServiceProviderConfig(w http.ResponseWriter, r *http.Request) error {
	writeSCIM(w, http.StatusOK, ServiceProviderConfigRep{
		Schemas:        []string{schemaServiceProviderConfig},
		Patch:          supported{true},
		Bulk:           bulkConfig{Supported: true, MaxOperations: maxBulkOperations, MaxPayloadSize: maxBulkPayload},
		Filter:         filterConfig{Supported: true, MaxResults: maxResults},
		ChangePassword: supported{true},
		Sort:           supported{true},
		ETag:           supported{true},
		AuthenticationSchemes: []authScheme{{Type: "oauthbearertoken", Name: "SCIM token",
			Description: "A SCIM token of the realm, created by its administrator: Authorization: Bearer <token>", Primary: true}},
		Meta: map[string]any{"resourceType": "ServiceProviderConfig", "location": s.location(r, "ServiceProviderConfig")},
	})
	return nil
}

// location is the URL of a resource path under the request's SCIM base:
// the realm's, or the server's for the discovery endpoints outside one.
func (s *Service) location(r *http.Request, path string) string {
	base := s.deps.BaseURL + "/scim/v2/"
	if c := callerOf(r); c != nil && hasRealm(r) {
		base += c.realm.Name + "/"
	}
	return base + path
}

// listResponse is RFC 7644 §3.4.2's answer to a query.
type listResponse struct {
	Schemas      []string `json:"schemas"`
	TotalResults int      `json:"totalResults"`
	StartIndex   int      `json:"startIndex"`
	ItemsPerPage int      `json:"itemsPerPage"`
	Resources    []any    `json:"Resources"`
}

func newList(resources []any, total, startIndex int) listResponse {
	if resources == nil {
		resources = []any{}
	}
	return listResponse{Schemas: []string{schemaListResponse}, TotalResults: total, StartIndex: startIndex,
		ItemsPerPage: len(resources), Resources: resources}
}

// SchemaRep is a schema as the Schemas endpoint answers it (RFC 7643 §7).
type SchemaRep struct {
	*schemaDef
	Schemas []string       `json:"schemas"`
	Meta    map[string]any `json:"meta"`
}

// ResourceTypeRep is RFC 7643 §6's ResourceType.
type ResourceTypeRep struct {
	Schemas          []string          `json:"schemas"`
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Endpoint         string            `json:"endpoint"`
	Description      string            `json:"description"`
	Schema           string            `json:"schema"`
	SchemaExtensions []schemaExtension `json:"schemaExtensions"`
	Meta             map[string]any    `json:"meta"`
}

type schemaExtension struct {
	Schema   string `json:"schema"`
	Required bool   `json:"required"`
}

// noDiscoveryFilter refuses a filter on a discovery endpoint with 403, as
// RFC 7644 §4 asks, so that a client never takes an ignored filter for
// one that matched.
func noDiscoveryFilter(r *http.Request) error {
	if r.URL.Query().Has("filter") {
		return fail(http.StatusForbidden, "", "filters are not supported on %s", r.URL.Path)
	}
	return nil
}

// schemaResources are the schemas, with the extensions of the caller's
// realm's own that its attribute mappings declare.
func (s *Service) schemaResources(r *http.Request) ([]any, error) {
	m, err := s.model(r)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, d := range schemas {
		out = append(out, SchemaRep{schemaDef: d, Schemas: []string{schemaSchema},
			Meta: map[string]any{"resourceType": "Schema", "location": s.location(r, "Schemas/"+d.ID)}})
	}
	for i := range m.custom {
		d := &m.custom[i]
		out = append(out, SchemaRep{schemaDef: d, Schemas: []string{schemaSchema},
			Meta: map[string]any{"resourceType": "Schema", "location": s.location(r, "Schemas/"+d.ID)}})
	}
	return out, nil
}

func (s *Service) resourceTypes(r *http.Request) ([]any, error) {
	m, err := s.model(r)
	if err != nil {
		return nil, err
	}
	exts := make([]schemaExtension, len(m.extensions))
	for i, urn := range m.extensions {
		exts[i] = schemaExtension{Schema: urn}
	}
	return []any{
		ResourceTypeRep{Schemas: []string{schemaResType}, ID: "User", Name: "User", Endpoint: "/Users",
			Description: "User Account", Schema: schemaUser, SchemaExtensions: exts,
			Meta: map[string]any{"resourceType": "ResourceType", "location": s.location(r, "ResourceTypes/User")}},
		ResourceTypeRep{Schemas: []string{schemaResType}, ID: "Group", Name: "Group", Endpoint: "/Groups",
			Description: "Group", Schema: schemaGroup, SchemaExtensions: []schemaExtension{},
			Meta: map[string]any{"resourceType": "ResourceType", "location": s.location(r, "ResourceTypes/Group")}},
	}, nil
}

// Schemas lists the schemas the server implements (RFC 7644 §4).
func (s *Service) Schemas(w http.ResponseWriter, r *http.Request) error {
	if err := noDiscoveryFilter(r); err != nil {
		return err
	}
	list, err := s.schemaResources(r)
	if err != nil {
		return err
	}
	writeSCIM(w, http.StatusOK, newList(list, len(list), 1))
	return nil
}

// Schema answers one schema by its URN.
func (s *Service) Schema(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["schemaId"]
	list, err := s.schemaResources(r)
	if err != nil {
		return err
	}
	for _, res := range list {
		if res.(SchemaRep).ID == id {
			writeSCIM(w, http.StatusOK, res)
			return nil
		}
	}
	return fail(http.StatusNotFound, "", "schema %q not found", id)
}

// ResourceTypes lists the resource types (RFC 7644 §4).
func (s *Service) ResourceTypes(w http.ResponseWriter, r *http.Request) error {
	if err := noDiscoveryFilter(r); err != nil {
		return err
	}
	list, err := s.resourceTypes(r)
	if err != nil {
		return err
	}
	writeSCIM(w, http.StatusOK, newList(list, len(list), 1))
	return nil
}

// ResourceType answers one resource type by its ID, User or Group.
func (s *Service) ResourceType(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["resourceTypeId"]
	list, err := s.resourceTypes(r)
	if err != nil {
		return err
	}
	for _, res := range list {
		if res.(ResourceTypeRep).ID == id {
			writeSCIM(w, http.StatusOK, res)
			return nil
		}
	}
	return fail(http.StatusNotFound, "", "resource type %q not found", id)
}
