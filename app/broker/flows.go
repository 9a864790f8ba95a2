package broker

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// flowsNaming lists the aliases of the realm's authentication flows with
// a step that sends the sign-in to the provider of alias: the flow checks
// refuse a flow naming a provider the realm lacks, so the provider stays
// while one does.
func flowsNaming(ctx context.Context, tx *store.Store, realmID, alias string) ([]string, error) {
	flows, err := tx.ListAuthFlows(ctx, realmID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range flows {
		var steps []signin.DefinitionStep
		if err := json.Unmarshal([]byte(f.Steps), &steps); err != nil {
			return nil, fmt.Errorf("auth flow %s steps: %w", f.ID, err)
		}
		for _, s := range steps {
			if s.Kind == signin.KindIdentityProvider && s.Provider == alias {
				out = append(out, f.Alias)
				break
			}
		}
	}
	return out, nil
}
