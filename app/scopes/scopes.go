// Package scopes is the admin API of a realm's client scopes and their
// protocol mappers: the scopes, the mapper types and the checks of their
// configs, and the scopes every new realm starts with. The claims the
// mappers put in tokens are built by the token issuer, which reads the
// types and their specs from here.
package scopes

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the client scopes area uses.
type Deps struct {
	Store *store.Store
	Now   func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for the Location of a new
	// scope or mapper.
	BaseURL string
}

// Service is the client scopes area: the admin API's handlers.
type Service struct{ deps Deps }

// New builds the client scopes area.
func New(d Deps) *Service { return &Service{deps: d} }

const (
	maxScopeName       = 255
	maxScopeDesc       = 255
	maxMapperName      = 255
	maxMapperConfig    = 50
	maxMappersPerScope = 100
)

// MapperRep is a protocol mapper as the admin API shows it and the realm
// export writes it; only the export sets createdTimestamp.
type MapperRep struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	MapperType       string            `json:"mapperType"`
	Protocol         string            `json:"protocol"`
	Config           map[string]string `json:"config"`
	CreatedTimestamp *int64            `json:"createdTimestamp,omitempty"` // export only
}

// ScopeRep is a client scope, with its mappers, as the admin API shows it
// and the realm export writes it; only the export sets createdTimestamp
// (the realm export's exportScope in app).
type ScopeRep struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	Description      string      `json:"description"`
	Protocol         string      `json:"protocol"`
	CreatedTimestamp *int64      `json:"createdTimestamp,omitempty"` // export only
	ProtocolMappers  []MapperRep `json:"protocolMappers"`
}

func toMapperRep(m *store.ProtocolMapper) MapperRep {
	return MapperRep{ID: m.ID, Name: m.Name, MapperType: m.MapperType, Protocol: m.Protocol, Config: m.Config}
}

// ToScopeRep is a client scope as the admin API shows it.
func ToScopeRep(c *store.ClientScope) ScopeRep {
	return ScopeRep{ID: c.ID, Name: c.Name, Description: c.Description, Protocol: c.Protocol,
		ProtocolMappers: httpx.Reps(c.Mappers, toMapperRep)}
}

// MapperCreate is the body of a mapper's POST, and a mapper of a scope's.
type MapperCreate struct {
	Name       *string        `json:"name"`
	MapperType *string        `json:"mapperType"`
	Protocol   *string        `json:"protocol"`
	Config     map[string]any `json:"config"` // any, so a non-string value is named by its key
}

// ScopeCreate is the body of a client scope's POST.
type ScopeCreate struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Protocol    *string `json:"protocol"`
	// Decoded one by one, so an error names the mapper it is in.
	ProtocolMappers []json.RawMessage `json:"protocolMappers"`
}

// decodeNested strictly decodes one element of a body's array, naming any
// field at fault under prefix ("protocolMappers[2].").
func decodeNested(raw json.RawMessage, prefix string, v any) error {
	if !httpx.IsObject(raw) {
		return apperr.Field(strings.TrimSuffix(prefix, "."), "must be an object")
	}
	err := httpx.StrictUnmarshal(raw, v)
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Field != "" {
		nested := *ae
		nested.Field = prefix + ae.Field
		nested.Message = prefix + ae.Message
		return &nested
	}
	return err
}

// validateScopeName accepts an OAuth scope token (RFC 6749 §3.3: printable
// ASCII without space, '"' or '\') that is also free of the characters
// HTML gives a meaning (< > & '): a scope's name is published in discovery
// and shown on consent pages and in other parties' consoles.
func validateScopeName(name string) error {
	if name == "" || len(name) > maxScopeName {
		return apperr.Field("name", "must be 1 to %d characters", maxScopeName)
	}
	if !IsScopeName(name) {
		return apperr.Field("name", "must be an OAuth scope token: printable ASCII without spaces, '\"', '\\', '<', '>', '&' or \"'\"")
	}
	return nil
}

// IsScopeName says whether name is a scope token this server stores.
func IsScopeName(name string) bool {
	for _, c := range []byte(name) {
		if c < 0x21 || c > 0x7e || strings.IndexByte(`"\<>&'`, c) >= 0 {
			return false
		}
	}
	return name != "" && len(name) <= maxScopeName
}

// ValidateScope checks a client scope about to be stored.
func ValidateScope(c *store.ClientScope) error {
	if err := validateScopeName(c.Name); err != nil {
		return err
	}
	if c.Protocol != ProtocolOIDC && c.Protocol != ProtocolSAML {
		return apperr.Field("protocol", "must be %s or %s", ProtocolOIDC, ProtocolSAML)
	}
	return validate.Text("description", c.Description, maxScopeDesc)
}

// mapperConfig turns a decoded config object into strings, naming any
// value that is not one.
func mapperConfig(prefix string, raw map[string]any) (map[string]string, error) {
	if len(raw) > maxMapperConfig {
		return nil, apperr.Field(prefix+"config", "must have at most %d entries", maxMapperConfig)
	}
	cfg := make(map[string]string, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		s, ok := raw[k].(string)
		if !ok {
			return nil, apperr.Field(prefix+"config."+k, "must be a string")
		}
		cfg[k] = s
	}
	return cfg, nil
}

// ValidateMapper checks a mapper about to be stored into a scope of
// scopeProtocol; field names are given under prefix.
func ValidateMapper(prefix, scopeProtocol string, m *store.ProtocolMapper) error {
	if err := validate.Identifier(prefix+"name", m.Name, maxMapperName); err != nil {
		return err
	}
	if strings.TrimSpace(m.Name) == "" {
		return apperr.Field(prefix+"name", "must not be blank")
	}
	spec, ok := specFor(m.MapperType)
	if !ok {
		return apperr.Field(prefix+"mapperType", "must be one of %s", strings.Join(mapperTypes, ", "))
	}
	// Every supported type is an OpenID Connect one.
	if m.Protocol != ProtocolOIDC {
		return apperr.Field(prefix+"protocol", "must be %s: the supported mapper types are OpenID Connect ones", ProtocolOIDC)
	}
	if scopeProtocol != ProtocolOIDC {
		return apperr.Field(prefix+"protocol", "the client scope's protocol is %s; OpenID Connect mappers need an %s scope",
			scopeProtocol, ProtocolOIDC)
	}
	return validateMapperConfig(prefix, m.MapperType, spec, m.Config)
}

// newMapper builds a mapper of a scope from a create body.
func (s *Service) newMapper(prefix string, scope *store.ClientScope, body *MapperCreate) (*store.ProtocolMapper, error) {
	if body.Name == nil {
		return nil, apperr.Field(prefix+"name", "is required")
	}
	if body.MapperType == nil {
		return nil, apperr.Field(prefix+"mapperType", "is required")
	}
	cfg, err := mapperConfig(prefix, body.Config)
	if err != nil {
		return nil, err
	}
	m := &store.ProtocolMapper{ID: uuid.NewString(), ScopeID: scope.ID, Name: *body.Name, MapperType: *body.MapperType,
		Protocol: ProtocolOIDC, Config: cfg, CreatedAt: s.deps.Now().UnixMilli()}
	set(&m.Protocol, body.Protocol)
	if err := ValidateMapper(prefix, scope.Protocol, m); err != nil {
		return nil, err
	}
	return m, nil
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// scopeConflict names the field of a uniqueness clash: a scope's name in
// the realm, or a mapper's in its scope.
func scopeConflict(err error, field, what string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && ce.Column == "name" {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: field,
			Message: what + " with this name already exists", Cause: err}
	}
	return err
}

// CreateClientScope creates a client scope with the mappers its body gives.
func (s *Service) CreateClientScope(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body ScopeCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return apperr.Field("name", "is required")
	}
	scope := &store.ClientScope{ID: uuid.NewString(), RealmID: realm.ID, Name: *body.Name, Protocol: ProtocolOIDC,
		CreatedAt: s.deps.Now().UnixMilli(), Mappers: []*store.ProtocolMapper{}}
	set(&scope.Description, body.Description)
	set(&scope.Protocol, body.Protocol)
	if err := ValidateScope(scope); err != nil {
		return err
	}
	if len(body.ProtocolMappers) > maxMappersPerScope {
		return apperr.Field("protocolMappers", "must have at most %d mappers", maxMappersPerScope)
	}
	for i, raw := range body.ProtocolMappers {
		prefix := fmt.Sprintf("protocolMappers[%d].", i)
		var mc MapperCreate
		if err := decodeNested(raw, prefix, &mc); err != nil {
			return err
		}
		m, err := s.newMapper(prefix, scope, &mc)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(scope.Mappers, func(o *store.ProtocolMapper) bool { return o.Name == m.Name }) {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: prefix + "name",
				Message: "two mappers of the scope are named " + m.Name}
		}
		scope.Mappers = append(scope.Mappers, m)
	}
	// Mapper names were checked above, so a name clash here is the scope's.
	if err := s.deps.Store.CreateClientScope(r.Context(), scope); err != nil {
		return scopeConflict(err, "name", "a client scope")
	}
	slices.SortStableFunc(scope.Mappers, func(x, y *store.ProtocolMapper) int { return strings.Compare(x.Name, y.Name) })
	return httpx.Created(w, s.childURL(r, scope.ID), ToScopeRep(scope))
}

// ListClientScopes lists the realm's client scopes.
func (s *Service) ListClientScopes(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	scopes, err := s.deps.Store.ListClientScopes(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, scopes, ToScopeRep)
}

// childURL is the URL of a resource just created under the request's
// collection path: the Location of a 201.
func (s *Service) childURL(r *http.Request, id string) string {
	return s.deps.BaseURL + r.URL.Path + "/" + id
}

// clientScope loads the realm and the scope named by {scopeId}.
func (s *Service) clientScope(r *http.Request) (*store.Realm, *store.ClientScope, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	scope, err := httpx.ChildOf(r, realm.ID, "scopeId", "client scope", s.deps.Store.GetClientScope)
	return realm, scope, err
}

// GetClientScope answers with one client scope.
func (s *Service) GetClientScope(w http.ResponseWriter, r *http.Request) error {
	_, scope, err := s.clientScope(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, ToScopeRep(scope))
}

// ScopeUpdate is the body of a client scope's PUT: the fields it may
// change.
type ScopeUpdate struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// PutClientScope replaces a client scope's name and description.
func (s *Service) PutClientScope(w http.ResponseWriter, r *http.Request) error {
	_, scope, err := s.clientScope(r)
	if err != nil {
		return err
	}
	// name has no default: null keeps it, as for a username.
	u, err := httpx.ReadUpdate[ScopeUpdate](r, ToScopeRep(scope), map[string]any{"name": scope.Name, "description": ""})
	if err != nil {
		return err
	}
	scope.Name, scope.Description = u.Name, u.Description
	if err := ValidateScope(scope); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateClientScope(r.Context(), scope); err != nil {
		return scopeConflict(err, "name", "a client scope")
	}
	return httpx.OK(w, ToScopeRep(scope))
}

// DeleteClientScope deletes a client scope.
func (s *Service) DeleteClientScope(w http.ResponseWriter, r *http.Request) error {
	realm, scope, err := s.clientScope(r)
	if err != nil {
		return err
	}
	// Mappers and client links go with it (ON DELETE CASCADE).
	if err := s.deps.Store.DeleteClientScope(r.Context(), realm.ID, scope.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// ListMappers lists a client scope's mappers.
func (s *Service) ListMappers(w http.ResponseWriter, r *http.Request) error {
	_, scope, err := s.clientScope(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, ToScopeRep(scope).ProtocolMappers)
}

// CreateMapper adds a mapper to a client scope.
func (s *Service) CreateMapper(w http.ResponseWriter, r *http.Request) error {
	_, scope, err := s.clientScope(r)
	if err != nil {
		return err
	}
	var body MapperCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	m, err := s.newMapper("", scope, &body)
	if err != nil {
		return err
	}
	if len(scope.Mappers) >= maxMappersPerScope {
		return apperr.Invalid("a client scope has at most %d mappers", maxMappersPerScope)
	}
	if err := s.deps.Store.CreateMapper(r.Context(), m); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("client scope " + scope.ID) // deleted meanwhile
		}
		return scopeConflict(err, "name", "a mapper of this client scope")
	}
	return httpx.Created(w, s.childURL(r, m.ID), toMapperRep(m))
}

// mapper loads the scope and the mapper named in the path.
func (s *Service) mapper(r *http.Request) (*store.ClientScope, *store.ProtocolMapper, error) {
	_, scope, err := s.clientScope(r)
	if err != nil {
		return nil, nil, err
	}
	m, err := httpx.ChildOf(r, scope.ID, "mapperId", "protocol mapper", s.deps.Store.GetMapper)
	return scope, m, err
}

// GetMapper answers with one mapper of a client scope.
func (s *Service) GetMapper(w http.ResponseWriter, r *http.Request) error {
	_, m, err := s.mapper(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toMapperRep(m))
}

// MapperUpdate is the body of a mapper's PUT: the fields it may change.
type MapperUpdate struct {
	Name   string         `json:"name"`
	Config map[string]any `json:"config"`
}

// PutMapper replaces a mapper's name and config.
func (s *Service) PutMapper(w http.ResponseWriter, r *http.Request) error {
	scope, m, err := s.mapper(r)
	if err != nil {
		return err
	}
	current := map[string]any{"name": m.Name, "config": m.Config}
	u, err := httpx.ReadUpdate[MapperUpdate](r, current, map[string]any{"name": m.Name, "config": map[string]any{}})
	if err != nil {
		return err
	}
	cfg, err := mapperConfig("", u.Config)
	if err != nil {
		return err
	}
	m.Name, m.Config = u.Name, cfg
	if err := ValidateMapper("", scope.Protocol, m); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateMapper(r.Context(), m); err != nil {
		return scopeConflict(err, "name", "a mapper of this client scope")
	}
	return httpx.OK(w, toMapperRep(m))
}

// DeleteMapper deletes a mapper of a client scope.
func (s *Service) DeleteMapper(w http.ResponseWriter, r *http.Request) error {
	scope, m, err := s.mapper(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteMapper(r.Context(), scope.ID, m.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}
