package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxScopeName       = 255
	maxScopeDesc       = 255
	maxMapperName      = 255
	maxMapperConfig    = 50
	maxMappersPerScope = 100
)

// mapperRep is a protocol mapper as the admin API shows it and the realm
// export writes it; only the export sets createdTimestamp.
type mapperRep struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	MapperType       string            `json:"mapperType"`
	Protocol         string            `json:"protocol"`
	Config           map[string]string `json:"config"`
	CreatedTimestamp *int64            `json:"createdTimestamp,omitempty"` // export only
}

// scopeRep is a client scope, with its mappers, as the admin API shows it
// and the realm export writes it; only the export sets createdTimestamp
// (see exportScope).
type scopeRep struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	Description      string      `json:"description"`
	Protocol         string      `json:"protocol"`
	CreatedTimestamp *int64      `json:"createdTimestamp,omitempty"` // export only
	ProtocolMappers  []mapperRep `json:"protocolMappers"`
}

func toMapperRep(m *store.ProtocolMapper) mapperRep {
	return mapperRep{ID: m.ID, Name: m.Name, MapperType: m.MapperType, Protocol: m.Protocol, Config: m.Config}
}

func toScopeRep(c *store.ClientScope) scopeRep {
	return scopeRep{ID: c.ID, Name: c.Name, Description: c.Description, Protocol: c.Protocol,
		ProtocolMappers: httpx.Reps(c.Mappers, toMapperRep)}
}

type mapperCreate struct {
	Name       *string        `json:"name"`
	MapperType *string        `json:"mapperType"`
	Protocol   *string        `json:"protocol"`
	Config     map[string]any `json:"config"` // any, so a non-string value is named by its key
}

type scopeCreate struct {
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
	if !isScopeName(name) {
		return apperr.Field("name", "must be an OAuth scope token: printable ASCII without spaces, '\"', '\\', '<', '>', '&' or \"'\"")
	}
	return nil
}

// isScopeName says whether name is a scope token this server stores.
func isScopeName(name string) bool {
	for _, c := range []byte(name) {
		if c < 0x21 || c > 0x7e || strings.IndexByte(`"\<>&'`, c) >= 0 {
			return false
		}
	}
	return name != "" && len(name) <= maxScopeName
}

func validateScope(c *store.ClientScope) error {
	if err := validateScopeName(c.Name); err != nil {
		return err
	}
	if c.Protocol != protocolOIDC && c.Protocol != protocolSAML {
		return apperr.Field("protocol", "must be %s or %s", protocolOIDC, protocolSAML)
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

// validateMapper checks a mapper about to be stored into a scope of
// scopeProtocol; field names are given under prefix.
func validateMapper(prefix, scopeProtocol string, m *store.ProtocolMapper) error {
	if err := validate.Identifier(prefix+"name", m.Name, maxMapperName); err != nil {
		return err
	}
	if strings.TrimSpace(m.Name) == "" {
		return apperr.Field(prefix+"name", "must not be blank")
	}
	spec, ok := mapperSpecFor(m.MapperType)
	if !ok {
		return apperr.Field(prefix+"mapperType", "must be one of %s", strings.Join(mapperTypes, ", "))
	}
	// Every supported type is an OpenID Connect one.
	if m.Protocol != protocolOIDC {
		return apperr.Field(prefix+"protocol", "must be %s: the supported mapper types are OpenID Connect ones", protocolOIDC)
	}
	if scopeProtocol != protocolOIDC {
		return apperr.Field(prefix+"protocol", "the client scope's protocol is %s; OpenID Connect mappers need an %s scope",
			scopeProtocol, protocolOIDC)
	}
	return validateMapperConfig(prefix, m.MapperType, spec, m.Config)
}

// newMapper builds a mapper of a scope from a create body.
func (a *App) newMapper(prefix string, scope *store.ClientScope, body *mapperCreate) (*store.ProtocolMapper, error) {
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
		Protocol: protocolOIDC, Config: cfg, CreatedAt: a.now().UnixMilli()}
	set(&m.Protocol, body.Protocol)
	if err := validateMapper(prefix, scope.Protocol, m); err != nil {
		return nil, err
	}
	return m, nil
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

func (a *App) createClientScope(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var body scopeCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return apperr.Field("name", "is required")
	}
	scope := &store.ClientScope{ID: uuid.NewString(), RealmID: realm.ID, Name: *body.Name, Protocol: protocolOIDC,
		CreatedAt: a.now().UnixMilli(), Mappers: []*store.ProtocolMapper{}}
	set(&scope.Description, body.Description)
	set(&scope.Protocol, body.Protocol)
	if err := validateScope(scope); err != nil {
		return err
	}
	if len(body.ProtocolMappers) > maxMappersPerScope {
		return apperr.Field("protocolMappers", "must have at most %d mappers", maxMappersPerScope)
	}
	for i, raw := range body.ProtocolMappers {
		prefix := fmt.Sprintf("protocolMappers[%d].", i)
		var mc mapperCreate
		if err := decodeNested(raw, prefix, &mc); err != nil {
			return err
		}
		m, err := a.newMapper(prefix, scope, &mc)
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
	if err := a.store.CreateClientScope(r.Context(), scope); err != nil {
		return scopeConflict(err, "name", "a client scope")
	}
	slices.SortStableFunc(scope.Mappers, func(x, y *store.ProtocolMapper) int { return strings.Compare(x.Name, y.Name) })
	return httpx.Created(w, a.childURL(r, scope.ID), toScopeRep(scope))
}

func (a *App) listClientScopes(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	scopes, err := a.store.ListClientScopes(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, scopes, toScopeRep)
}

// clientScope loads the realm and the scope named by {scopeId}.
func (a *App) clientScope(r *http.Request) (*store.Realm, *store.ClientScope, error) {
	return realmChild(a, r, "scopeId", "client scope", a.store.GetClientScope)
}

func (a *App) getClientScope(w http.ResponseWriter, r *http.Request) error {
	_, scope, err := a.clientScope(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toScopeRep(scope))
}

// scopeUpdate is the body of a client scope's PUT: the fields it may
// change.
type scopeUpdate struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (a *App) putClientScope(w http.ResponseWriter, r *http.Request) error {
	_, scope, err := a.clientScope(r)
	if err != nil {
		return err
	}
	// name has no default: null keeps it, as for a username.
	u, err := httpx.ReadUpdate[scopeUpdate](r, toScopeRep(scope), map[string]any{"name": scope.Name, "description": ""})
	if err != nil {
		return err
	}
	scope.Name, scope.Description = u.Name, u.Description
	if err := validateScope(scope); err != nil {
		return err
	}
	if err := a.store.UpdateClientScope(r.Context(), scope); err != nil {
		return scopeConflict(err, "name", "a client scope")
	}
	return httpx.OK(w, toScopeRep(scope))
}

func (a *App) deleteClientScope(w http.ResponseWriter, r *http.Request) error {
	realm, scope, err := a.clientScope(r)
	if err != nil {
		return err
	}
	// Mappers and client links go with it (ON DELETE CASCADE).
	if err := a.store.DeleteClientScope(r.Context(), realm.ID, scope.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

func (a *App) listMappers(w http.ResponseWriter, r *http.Request) error {
	_, scope, err := a.clientScope(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toScopeRep(scope).ProtocolMappers)
}

func (a *App) createMapper(w http.ResponseWriter, r *http.Request) error {
	_, scope, err := a.clientScope(r)
	if err != nil {
		return err
	}
	var body mapperCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	m, err := a.newMapper("", scope, &body)
	if err != nil {
		return err
	}
	if len(scope.Mappers) >= maxMappersPerScope {
		return apperr.Invalid("a client scope has at most %d mappers", maxMappersPerScope)
	}
	if err := a.store.CreateMapper(r.Context(), m); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("client scope " + scope.ID) // deleted meanwhile
		}
		return scopeConflict(err, "name", "a mapper of this client scope")
	}
	return httpx.Created(w, a.childURL(r, m.ID), toMapperRep(m))
}

// mapper loads the scope and the mapper named in the path.
func (a *App) mapper(r *http.Request) (*store.ClientScope, *store.ProtocolMapper, error) {
	_, scope, err := a.clientScope(r)
	if err != nil {
		return nil, nil, err
	}
	m, err := pathChild(r, "mapperId", "protocol mapper", scope.ID, a.store.GetMapper)
	return scope, m, err
}

func (a *App) getMapper(w http.ResponseWriter, r *http.Request) error {
	_, m, err := a.mapper(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toMapperRep(m))
}

type mapperUpdate struct {
	Name   string         `json:"name"`
	Config map[string]any `json:"config"`
}

func (a *App) putMapper(w http.ResponseWriter, r *http.Request) error {
	scope, m, err := a.mapper(r)
	if err != nil {
		return err
	}
	current := map[string]any{"name": m.Name, "config": m.Config}
	u, err := httpx.ReadUpdate[mapperUpdate](r, current, map[string]any{"name": m.Name, "config": map[string]any{}})
	if err != nil {
		return err
	}
	cfg, err := mapperConfig("", u.Config)
	if err != nil {
		return err
	}
	m.Name, m.Config = u.Name, cfg
	if err := validateMapper("", scope.Protocol, m); err != nil {
		return err
	}
	if err := a.store.UpdateMapper(r.Context(), m); err != nil {
		return scopeConflict(err, "name", "a mapper of this client scope")
	}
	return httpx.OK(w, toMapperRep(m))
}

func (a *App) deleteMapper(w http.ResponseWriter, r *http.Request) error {
	scope, m, err := a.mapper(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteMapper(r.Context(), scope.ID, m.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// seedDefaultScopes gives a new realm Keycloak's default client scopes and
// their standard mappers, inside the transaction that creates the realm.
func seedDefaultScopes(ctx context.Context, tx *store.Store, realm *store.Realm) error {
	now := realm.CreatedAt
	for _, t := range defaultClientScopes() {
		scope := &store.ClientScope{ID: uuid.NewString(), RealmID: realm.ID, Name: t.name, Description: t.description,
			Protocol: protocolOIDC, CreatedAt: now}
		for _, mt := range t.mappers {
			scope.Mappers = append(scope.Mappers, &store.ProtocolMapper{ID: uuid.NewString(), ScopeID: scope.ID,
				Name: mt.name, MapperType: mt.mapperType, Protocol: protocolOIDC, Config: mt.config, CreatedAt: now})
		}
		if err := tx.CreateClientScope(ctx, scope); err != nil {
			return fmt.Errorf("seed client scope %s: %w", t.name, err)
		}
	}
	return nil
}
