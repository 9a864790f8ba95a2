// Package authflows is the admin API of a realm's authentication flows:
// their definitions (app/signin.Definition), checked by
// signin.CheckDefinition, the built-in ones seed-defaults writes, and the
// binding of a flow to an OpenID Connect client's or a SAML service
// provider's sign-ins. The sign-in reads the bindings through
// store.FlowForClient.
package authflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the authentication flows area uses.
type Deps struct {
	Store *store.Store
	Now   func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for the Location of a new
	// flow.
	BaseURL string
	// WebAuthn: the base URL names a host (not an IP address), so that
	// browsers hold the ceremonies of passkey and security-key steps.
	WebAuthn bool
}

// Service is the authentication flows area: the admin API's handlers.
type Service struct{ deps Deps }

// New builds the authentication flows area.
func New(d Deps) *Service { return &Service{deps: d} }

// FlowRep is a flow as the API shows it: its definition and when it was
// written.
type FlowRep struct {
	signin.Definition
	CreatedTimestamp int64 `json:"createdTimestamp"`
	UpdatedTimestamp int64 `json:"updatedTimestamp"`
}

// FlowDetail is one flow with the clients whose sign-ins follow it; the
// realm export holds its flows so.
type FlowDetail struct {
	FlowRep
	Clients []BoundClient `json:"clients"`
}

// BoundClient is a client whose sign-ins of a usage follow a flow.
type BoundClient struct {
	Kind string `json:"kind"` // oidc: an OpenID Connect client; saml: a SAML service provider
	// ClientID is the OIDC client's clientId or the service provider's
	// entity ID.
	ClientID string       `json:"clientId"`
	ID       string       `json:"id"` // the client's or service provider's internal ID
	Usage    signin.Usage `json:"usage"`
}

// FlowBody is a flow in a request: the representation, whose id,
// timestamps and clients are the server's (a body read from GET may
// repeat them). Only seed-defaults makes built-in flows.
type FlowBody struct {
	ID               *string                 `json:"id"`
	Alias            string                  `json:"alias"`
	Description      string                  `json:"description"`
	Usage            signin.Usage            `json:"usage"`
	Steps            []signin.DefinitionStep `json:"steps"`
	BuiltIn          bool                    `json:"builtIn"`
	CreatedTimestamp *int64                  `json:"createdTimestamp"`
	UpdatedTimestamp *int64                  `json:"updatedTimestamp"`
	Clients          []BoundClient           `json:"clients"`
}

func (b FlowBody) definition() signin.Definition {
	return signin.Definition{Alias: b.Alias, Description: b.Description, Usage: b.Usage, Steps: b.Steps, BuiltIn: b.BuiltIn}
}

// toRep reads a stored flow; its steps were written by this package.
func toRep(f *store.AuthFlow) (FlowRep, error) {
	d, err := signin.DefinitionOf(f)
	if err != nil {
		return FlowRep{}, err
	}
	return FlowRep{Definition: *d, CreatedTimestamp: f.CreatedAt, UpdatedTimestamp: f.UpdatedAt}, nil
}

func toReps(flows []*store.AuthFlow) ([]FlowRep, error) {
	out := make([]FlowRep, 0, len(flows))
	for _, f := range flows {
		rep, err := toRep(f)
		if err != nil {
			return nil, err
		}
		out = append(out, rep)
	}
	return out, nil
}

// stored is d as the store keeps it.
func stored(realmID string, d signin.Definition, at int64) (*store.AuthFlow, error) {
	steps, err := json.Marshal(d.Steps)
	if err != nil {
		return nil, err
	}
	return &store.AuthFlow{ID: d.ID, RealmID: realmID, Alias: d.Alias, Description: d.Description, Usage: string(d.Usage),
		Steps: string(steps), BuiltIn: d.BuiltIn, CreatedAt: at, UpdatedAt: at}, nil
}

// check is signin.CheckDefinition against the realm's identity providers.
func check(ctx context.Context, tx *store.Store, realmID string, d signin.Definition) error {
	var lookupErr error
	err := signin.CheckDefinition(d, func(alias string) bool {
		_, err := tx.GetIdentityProvider(ctx, realmID, alias)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			lookupErr = err
		}
		return err == nil
	})
	if lookupErr != nil {
		return lookupErr
	}
	return err
}

func aliasConflict(err error, alias string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && ce.Column == "alias" {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "alias",
			Message: "a flow with alias " + alias + " already exists", Cause: err}
	}
	return err
}

// flow loads the realm and the flow {id} names.
func (s *Service) flow(r *http.Request) (*store.Realm, *store.AuthFlow, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	f, err := httpx.ChildOf(r, realm.ID, "id", "authentication flow", s.deps.Store.GetAuthFlow)
	return realm, f, err
}

// CreateFlow answers POST .../auth-flows.
func (s *Service) CreateFlow(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body FlowBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.BuiltIn {
		return apperr.Field("builtIn", "only seed-defaults makes built-in flows")
	}
	d := body.definition()
	d.ID = uuid.NewString()
	f, err := stored(realm.ID, d, s.deps.Now().UnixMilli())
	if err != nil {
		return err
	}
	// The check and the write in one transaction: a provider the flow
	// names is not deleted meanwhile.
	ctx := r.Context()
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := check(ctx, tx, realm.ID, d); err != nil {
			return err
		}
		return aliasConflict(tx.CreateAuthFlow(ctx, f), f.Alias)
	})
	if err != nil {
		return err
	}
	rep, err := toRep(f)
	if err != nil {
		return err
	}
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+f.ID, rep)
}

// ListFlows answers the realm's flows, by alias.
func (s *Service) ListFlows(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	flows, err := s.deps.Store.ListAuthFlows(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	reps, err := toReps(flows)
	if err != nil {
		return err
	}
	return httpx.OK(w, reps)
}

// GetFlow answers one flow with the clients bound to it.
func (s *Service) GetFlow(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.flow(r)
	if err != nil {
		return err
	}
	bound, err := s.deps.Store.FlowBindings(r.Context(), realm.ID, f.ID)
	if err != nil {
		return err
	}
	d, err := detail(f, bound)
	if err != nil {
		return err
	}
	return httpx.OK(w, d)
}

func detail(f *store.AuthFlow, bound []*store.FlowBinding) (FlowDetail, error) {
	rep, err := toRep(f)
	out := FlowDetail{FlowRep: rep, Clients: []BoundClient{}}
	for _, b := range bound {
		out.Clients = append(out.Clients, BoundClient{Kind: b.ClientKind, ClientID: b.ClientName, ID: b.ClientID, Usage: signin.Usage(b.Usage)})
	}
	return out, err
}

// UpdateFlow answers PUT .../auth-flows/{id}: the whole flow, as POST
// takes it. A built-in flow is the server's own and stays as it is, as
// Keycloak's do: a changed one is a new flow under another alias. A
// bound flow keeps its usage, which its bindings are for.
func (s *Service) UpdateFlow(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.flow(r)
	if err != nil {
		return err
	}
	var body FlowBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	switch {
	case f.BuiltIn:
		return apperr.Field("builtIn", "%s is a built-in flow, which cannot be changed: create a flow with its steps under another alias", f.Alias)
	case body.BuiltIn:
		return apperr.Field("builtIn", "only seed-defaults makes built-in flows")
	case body.ID != nil && *body.ID != f.ID:
		return apperr.Field("id", "cannot be changed")
	}
	d := body.definition()
	d.ID = f.ID
	ctx := r.Context()
	var rep FlowRep
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := check(ctx, tx, realm.ID, d); err != nil {
			return err
		}
		bound, err := tx.FlowBindings(ctx, realm.ID, f.ID)
		if err != nil {
			return err
		}
		if string(d.Usage) != f.Usage && len(bound) > 0 {
			return apperr.Conflict("usage", "usage: the flow is bound to %s, whose %s sign-ins need a %s flow; assign them another flow first",
				clientNames(bound), f.Usage, f.Usage)
		}
		// The clients bound to it follow the new steps from their next
		// sign-in: each must be able to.
		for _, b := range bound {
			if err := checkBinding("", b.ClientKind, signin.Usage(b.Usage), &d, s.deps.WebAuthn); err != nil {
				return err
			}
		}
		updated, err := stored(realm.ID, d, s.deps.Now().UnixMilli())
		if err != nil {
			return err
		}
		updated.CreatedAt = f.CreatedAt
		if err := tx.UpdateAuthFlow(ctx, updated); err != nil {
			return aliasConflict(err, updated.Alias)
		}
		rep, err = toRep(updated)
		return err
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// DeleteFlow answers DELETE .../auth-flows/{id}. A flow that clients'
// sign-ins follow stays until they follow another; a built-in one stays.
func (s *Service) DeleteFlow(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.flow(r)
	if err != nil {
		return err
	}
	if f.BuiltIn {
		return apperr.Field("builtIn", "%s is a built-in flow, which cannot be deleted", f.Alias)
	}
	err = s.deps.Store.DeleteAuthFlow(r.Context(), realm.ID, f.ID)
	var inUse *store.FlowInUseError
	switch {
	case errors.As(err, &inUse):
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Cause: err,
			Message: fmt.Sprintf("flow %s is bound to %s; assign them another flow first", f.Alias, clientNames(inUse.Bindings))}
	case errors.Is(err, store.ErrNotFound):
		return apperr.NotFound("authentication flow " + f.ID)
	case err != nil:
		return err
	}
	return httpx.NoContent(w)
}
