package authflows

import (
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// SeedDefaults answers POST .../auth-flows/seed-defaults: the realm gets
// the built-in flows (signin.DefaultDefinitions) it lacks, and the answer
// is the built-in flows, so that a second call changes nothing and
// answers the same. A flow of the realm's own that holds a built-in
// flow's alias is a conflict: it is not the server's.
func (s *Service) SeedDefaults(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	var out []*store.AuthFlow
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		now := s.deps.Now().UnixMilli()
		for _, d := range signin.DefaultDefinitions() {
			f, err := tx.GetAuthFlowByAlias(ctx, realm.ID, d.Alias)
			switch {
			case err == nil && !f.BuiltIn:
				return apperr.Conflict("alias", "the realm's own flow %s holds the alias of a built-in flow; rename it first", d.Alias)
			case err == nil:
			case errors.Is(err, store.ErrNotFound):
				d.ID = uuid.NewString()
				if f, err = stored(realm.ID, d, now); err != nil {
					return err
				}
				if err := tx.CreateAuthFlow(ctx, f); err != nil {
					return aliasConflict(err, f.Alias)
				}
			default:
				return err
			}
			out = append(out, f)
		}
		return nil
	})
	if err != nil {
		return err
	}
	reps, err := toReps(out)
	if err != nil {
		return err
	}
	return httpx.OK(w, reps)
}
