package account

import (
	"context"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// accountImpersonationsShown bounds the account page's list of
// administrators' sign-ins: the latest ones.
const accountImpersonationsShown = 20

// accountImpersonations are the administrators' sign-ins as the user
// (app/impersonation) as the account page lists them, at now.
func accountImpersonations(ctx context.Context, st *store.Store, realmID, userID string, now int64) ([]ui.AccountImpersonation, error) {
	list, err := st.UserImpersonations(ctx, realmID, userID, accountImpersonationsShown)
	if err != nil {
		return nil, err
	}
	out := make([]ui.AccountImpersonation, len(list))
	for i, m := range list {
		until := m.EndsAt
		if m.EndedAt != 0 {
			until = m.EndedAt
		}
		out[i] = ui.AccountImpersonation{By: m.ImpersonatorUsername, Started: accountDate(m.StartedAt),
			Until: accountDate(until), Active: m.Active(now)}
	}
	return out, nil
}
