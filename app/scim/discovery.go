package scim

import (
	"net/http"
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

type serviceProviderConfig struct {
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
	writeSCIM(w, http.StatusOK, serviceProviderConfig{
		Schemas:        []string{schemaServiceProviderConfig},
		Patch:          supported{false},
		Bulk:           bulkConfig{},
		Filter:         filterConfig{},
		ChangePassword: supported{false},
		Sort:           supported{false},
		ETag:           supported{false},
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
