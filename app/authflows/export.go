package authflows

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// A realm's flows in the realm export: each as GET of one shows it, with
// the clients bound to it; an import binds them again by clientId or
// entity ID, to the clients and service providers of the same file.

// Export is the realm's flows, by alias, as the export writes them.
func Export(ctx context.Context, tx *store.Store, realmID string) ([]FlowDetail, error) {
	flows, err := tx.ListAuthFlows(ctx, realmID)
	if err != nil {
		return nil, err
	}
	bindings, err := tx.RealmFlowBindings(ctx, realmID)
	if err != nil {
		return nil, err
	}
	out := []FlowDetail{}
	for _, f := range flows {
		var bound []*store.FlowBinding
		for _, b := range bindings {
			if b.FlowID == f.ID {
				bound = append(bound, b)
			}
		}
		d, err := detail(f, bound)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// ImportIDs are how an import gives flows their IDs and times: the realm
// import's rules (a kept UUID, or a new one for a copy).
type ImportIDs struct {
	ID        func(given *string, field string) (string, error)
	Timestamp func(*int64) int64
}

// ImportClients are the clients of the file, by what bindings name them
// by: OpenID Connect clients by clientId, service providers by entity ID,
// each to the ID the import gives it.
type ImportClients struct {
	OIDC map[string]string
	SAML map[string]string
	// WebAuthn: the server's base URL names a host, so bindings may
	// follow passkey and security-key steps (signin.CanFollow).
	WebAuthn bool
}

// ImportPlan is the file's flows checked and resolved, ready to be written
// in the import's transaction.
type ImportPlan struct {
	flows    []*store.AuthFlow
	bindings []*store.FlowBinding
}

// PlanImport checks the file's flows as the admin API would, against the
// file's identity providers, and resolves their bindings to the file's
// clients. Errors name the field under "authFlows[i]".
func PlanImport(realmID string, in []FlowBody, clients ImportClients, providers []*store.IdentityProvider, ids ImportIDs) (*ImportPlan, error) {
	plan := &ImportPlan{}
	aliases := map[string]bool{}
	bound := map[[3]string]bool{} // kind, client, usage
	hasProvider := func(alias string) bool {
		return slices.ContainsFunc(providers, func(p *store.IdentityProvider) bool { return p.Alias == alias })
	}
	for i, fi := range in {
		field := fmt.Sprintf("authFlows[%d]", i)
		id, err := ids.ID(fi.ID, field+".id")
		if err != nil {
			return nil, err
		}
		d := fi.definition()
		d.ID = id
		if err := signin.CheckDefinition(d, hasProvider); err != nil {
			return nil, apperr.Under(err, field)
		}
		if aliases[d.Alias] {
			return nil, apperr.Conflict(field+".alias", "%s.alias: another flow of the file has alias %s", field, d.Alias)
		}
		aliases[d.Alias] = true
		f, err := stored(realmID, d, ids.Timestamp(fi.CreatedTimestamp))
		if err != nil {
			return nil, err
		}
		f.UpdatedAt = ids.Timestamp(fi.UpdatedTimestamp)
		plan.flows = append(plan.flows, f)
		for j, c := range fi.Clients {
			cf := fmt.Sprintf("%s.clients[%d].", field, j)
			var byName map[string]string
			switch c.Kind {
			case store.ClientKindOIDC:
				byName = clients.OIDC
			case store.ClientKindSAML:
				byName = clients.SAML
			default:
				return nil, apperr.Field(cf+"kind", "must be %s or %s, not %q", store.ClientKindOIDC, store.ClientKindSAML, c.Kind)
			}
			clientID, ok := byName[c.ClientID]
			if !ok {
				return nil, apperr.Field(cf+"clientId", "the file has no %s client %s", c.Kind, c.ClientID)
			}
			if err := checkBinding(cf, c.Kind, c.Usage, &d, clients.WebAuthn); err != nil {
				return nil, err
			}
			key := [3]string{c.Kind, clientID, string(c.Usage)}
			if bound[key] {
				return nil, apperr.Field(cf+"clientId", "the %s sign-ins of %s are bound to another flow of the file too", c.Usage, c.ClientID)
			}
			bound[key] = true
			plan.bindings = append(plan.bindings, &store.FlowBinding{RealmID: realmID, ClientKind: c.Kind, ClientID: clientID,
				Usage: string(c.Usage), FlowID: id})
		}
	}
	return plan, nil
}

// WriteImport writes the planned flows and their bindings, in tx.
func WriteImport(ctx context.Context, tx *store.Store, plan *ImportPlan) error {
	for i, f := range plan.flows {
		if err := tx.CreateAuthFlow(ctx, f); err != nil {
			var ce *store.ConflictError
			if errors.As(err, &ce) && ce.Column == "id" {
				field := fmt.Sprintf("authFlows[%d].id", i)
				return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: field,
					Message: field + ": another realm has a flow with id " + f.ID, Cause: err}
			}
			return err
		}
	}
	for _, b := range plan.bindings {
		if err := tx.BindFlow(ctx, b); err != nil {
			return err
		}
	}
	return nil
}
