package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Policy is an authorization policy as the admin API shows it.
type Policy struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Enabled     bool   `json:"enabled"`
	Effect      Effect `json:"effect"`
	Target      Target `json:"target"`
	// Condition is a CEL expression over subject, resource, action and
	// context; "" holds always.
	Condition        string `json:"condition"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
	UpdatedTimestamp int64  `json:"updatedTimestamp"`
}

// Target is what a policy applies to: requests for one of its resource
// types and one of its actions; "*" is any.
type Target struct {
	ResourceTypes []string `json:"resourceTypes"`
	Actions       []string `json:"actions"`
}

// covers says whether the target takes a request for a resource of type
// rtype and the action named action.
func (t Target) covers(rtype, action string) bool {
	return (slices.Contains(t.ResourceTypes, Any) || slices.Contains(t.ResourceTypes, rtype)) &&
		(slices.Contains(t.Actions, Any) || slices.Contains(t.Actions, action))
}

// Any in a target's list is every resource type, or every action.
const Any = "*"

// PolicyInput is the body of a create and of a PUT.
type PolicyInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Enabled     *bool  `json:"enabled"` // absent: true
	Effect      Effect `json:"effect"`
	Target      Target `json:"target"`
	Condition   string `json:"condition"`
}

// Settings are a realm's policy settings (GET/PUT …/policy-settings).
type Settings struct {
	// DefaultDecision is the decision of a request no policy applies to:
	// deny, unless the realm chose permit.
	DefaultDecision Effect `json:"defaultDecision"`
}

// DefaultSettings are a realm's settings until an administrator writes
// its own.
func DefaultSettings() Settings { return Settings{DefaultDecision: Deny} }

const (
	maxNameLength        = 255
	maxDescriptionLength = 1000
	// MaxConditionLength bounds a condition's text, in bytes.
	MaxConditionLength = 10_000
	maxTargetEntries   = 100
	maxTargetLength    = 255
	// MaxPoliciesPerRealm bounds the policies a decision may consider.
	MaxPoliciesPerRealm = 1000
)

// checkPolicy refuses what no request could meet or the server cannot
// run, naming the field; the condition is compiled and its cost bounded
// (cel.go).
func checkPolicy(in *PolicyInput, compile func(string) (cel.Program, error)) error {
	if err := validate.Setting("name", in.Name, maxNameLength); err != nil {
		return err
	}
	if strings.TrimSpace(in.Name) == "" {
		return apperr.Field("name", "is required")
	}
	if len(in.Description) > maxDescriptionLength {
		return apperr.Field("description", "is longer than %d characters", maxDescriptionLength)
	}
	if in.Effect != Permit && in.Effect != Deny {
		return apperr.Field("effect", "must be permit or deny, not %q", in.Effect)
	}
	for field, list := range map[string][]string{"target.resourceTypes": in.Target.ResourceTypes, "target.actions": in.Target.Actions} {
		if len(list) == 0 {
			return apperr.Field(field, "names at least one; %q is any", Any)
		}
		if len(list) > maxTargetEntries {
			return apperr.Field(field, "holds at most %d entries", maxTargetEntries)
		}
		for _, v := range list {
			if v == "" {
				return apperr.Field(field, "holds an empty entry")
			}
			if err := validate.Setting(field, v, maxTargetLength); err != nil {
				return err
			}
		}
	}
	_, err := compile(in.Condition)
	return err
}

// readPolicy decodes and checks a policy body; nothing is stored on a
// refusal.
func (s *Service) readPolicy(body []byte) (*PolicyInput, error) {
	var in PolicyInput
	if err := strictJSON(body, &in); err != nil {
		return nil, err
	}
	if err := checkPolicy(&in, s.compile); err != nil {
		return nil, err
	}
	return &in, nil
}

// stored is the store's row of a checked input.
func stored(realmID, id string, in *PolicyInput, created, updated int64) *store.AuthzPolicy {
	types, _ := json.Marshal(in.Target.ResourceTypes)
	actions, _ := json.Marshal(in.Target.Actions)
	return &store.AuthzPolicy{ID: id, RealmID: realmID, Name: in.Name, Description: in.Description,
		Enabled: in.Enabled == nil || *in.Enabled, Effect: string(in.Effect), ResourceTypes: string(types), Actions: string(actions),
		Expression: in.Condition, CreatedAt: created, UpdatedAt: updated}
}

func policyRep(p *store.AuthzPolicy) (Policy, error) {
	rep := Policy{ID: p.ID, Name: p.Name, Description: p.Description, Enabled: p.Enabled, Effect: Effect(p.Effect),
		Condition: p.Expression, CreatedTimestamp: p.CreatedAt, UpdatedTimestamp: p.UpdatedAt}
	if err := json.Unmarshal([]byte(p.ResourceTypes), &rep.Target.ResourceTypes); err != nil {
		return rep, fmt.Errorf("authorization policy %s: %w", p.ID, err)
	}
	if err := json.Unmarshal([]byte(p.Actions), &rep.Target.Actions); err != nil {
		return rep, fmt.Errorf("authorization policy %s: %w", p.ID, err)
	}
	return rep, nil
}

// errNameTaken: policy names are the realm's own, one each.
func errNameTaken(field, name string) error {
	return apperr.Conflict(field, "the realm has an authorization policy named %q", name)
}

func (s *Service) settings(ctx context.Context, realm *store.Realm) (Settings, error) {
	raw, err := s.deps.Store.AuthzPolicySettings(ctx, realm.ID)
	if errors.Is(err, store.ErrNotFound) {
		return DefaultSettings(), nil
	} else if err != nil {
		return Settings{}, err
	}
	set := DefaultSettings()
	if err := json.Unmarshal([]byte(raw), &set); err != nil {
		return Settings{}, fmt.Errorf("authorization policy settings of realm %s: %w", realm.Name, err)
	}
	return set, nil
}

func (set *Settings) check() error {
	if set.DefaultDecision != Permit && set.DefaultDecision != Deny {
		return apperr.Field("defaultDecision", "must be permit or deny, not %q", set.DefaultDecision)
	}
	return nil
}
