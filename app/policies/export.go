package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// A realm's policies and settings in the realm export: each policy as GET
// of one shows it; an import checks them as the admin API does.

// Export is the realm's policies, by name, and its settings, as the
// export writes them.
func Export(ctx context.Context, tx *store.Store, realmID string) ([]Policy, Settings, error) {
	stored, err := tx.ListAuthzPolicies(ctx, realmID)
	if err != nil {
		return nil, Settings{}, err
	}
	out := make([]Policy, 0, len(stored))
	for _, p := range stored {
		rep, err := policyRep(p)
		if err != nil {
			return nil, Settings{}, err
		}
		out = append(out, rep)
	}
	set := DefaultSettings()
	raw, err := tx.AuthzPolicySettings(ctx, realmID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, Settings{}, err
	default:
		if err := json.Unmarshal([]byte(raw), &set); err != nil {
			return nil, Settings{}, fmt.Errorf("authorization policy settings: %w", err)
		}
	}
	return out, set, nil
}

// ImportedPolicy is a policy of an import file: the admin API's body, with
// the ID and times an export carries.
type ImportedPolicy struct {
	ID *string `json:"id"`
	PolicyInput
	CreatedTimestamp *int64 `json:"createdTimestamp"`
	UpdatedTimestamp *int64 `json:"updatedTimestamp"`
}

// ImportIDs are how an import gives policies their IDs and times: the
// realm import's rules (a kept UUID, or a new one for a copy).
type ImportIDs struct {
	ID        func(given *string, field string) (string, error)
	Timestamp func(*int64) int64
}

// ImportPlan is the file's policies and settings checked, ready to be
// written in the import's transaction.
type ImportPlan struct {
	policies []*store.AuthzPolicy
	settings *Settings
}

// PlanImport checks the file's policies (under "authorizationPolicies[i]")
// and settings (under "authorizationSettings") as the admin API would.
func PlanImport(realmID string, in []ImportedPolicy, settings *Settings, ids ImportIDs) (*ImportPlan, error) {
	plan := &ImportPlan{}
	if len(in) > MaxPoliciesPerRealm {
		return nil, apperr.Field("authorizationPolicies", "holds at most %d policies", MaxPoliciesPerRealm)
	}
	names := map[string]bool{}
	for i := range in {
		field := fmt.Sprintf("authorizationPolicies[%d]", i)
		pi := &in[i]
		id, err := ids.ID(pi.ID, field+".id")
		if err != nil {
			return nil, err
		}
		if err := checkPolicy(&pi.PolicyInput, compileCondition); err != nil {
			return nil, apperr.Under(err, field)
		}
		if names[pi.Name] {
			return nil, apperr.Conflict(field+".name", "%s.name: another policy of the file is named %q", field, pi.Name)
		}
		names[pi.Name] = true
		plan.policies = append(plan.policies, stored(realmID, id, &pi.PolicyInput, ids.Timestamp(pi.CreatedTimestamp),
			ids.Timestamp(pi.UpdatedTimestamp)))
	}
	if settings != nil {
		set := *settings
		if err := set.check(); err != nil {
			return nil, apperr.Under(err, "authorizationSettings")
		}
		plan.settings = &set
	}
	return plan, nil
}

// WriteImport writes the planned policies and settings, in tx.
func WriteImport(ctx context.Context, tx *store.Store, realmID string, plan *ImportPlan, now int64) error {
	for i, p := range plan.policies {
		if err := tx.CreateAuthzPolicy(ctx, p); err != nil {
			var ce *store.ConflictError
			if errors.As(err, &ce) && ce.Column == "id" {
				field := fmt.Sprintf("authorizationPolicies[%d].id", i)
				return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: field,
					Message: field + ": another realm has an authorization policy with id " + p.ID, Cause: err}
			}
			return err
		}
	}
	if plan.settings != nil {
		b, err := json.Marshal(plan.settings)
		if err != nil {
			return err
		}
		return tx.PutAuthzPolicySettings(ctx, realmID, string(b), now)
	}
	return nil
}
