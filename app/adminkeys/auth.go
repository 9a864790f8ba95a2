package adminkeys

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/store"
)

// touchEvery is how often a key's last use is written: a key used by a
// busy job would otherwise cost a write per request.
const touchEvery = time.Minute

// errUnknown answers a key that is not one, or whose secret is wrong: it
// says nothing of which.
var errUnknown = apperr.Unauthorized("missing or invalid admin credentials")

// Authenticate checks a presented key: the key it is, and the
// permissions it holds. A key that is unknown, of a wrong secret, revoked,
// expired, or a previous secret past its rotation's grace is a 401; what
// went wrong is told only to a caller holding the right secret.
func (s *Service) Authenticate(ctx context.Context, presented string) (*store.AdminAPIKey, authz.Set, error) {
	id := ParseKey(presented)
	if id == "" {
		return nil, authz.Set{}, errUnknown
	}
	k, err := s.deps.Store.GetAdminAPIKey(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, authz.Set{}, errUnknown
	} else if err != nil {
		return nil, authz.Set{}, err
	}
	now := s.now().UnixMilli()
	h := sha256.Sum256([]byte(presented))
	current := subtle.ConstantTimeCompare(h[:], k.SecretHash) == 1
	previous := len(k.PreviousHash) > 0 && subtle.ConstantTimeCompare(h[:], k.PreviousHash) == 1
	switch {
	case !current && !previous:
		return nil, authz.Set{}, errUnknown
	case k.RevokedAt != 0:
		return nil, authz.Set{}, apperr.Unauthorized("admin API key %s has been revoked", k.Name)
	case k.ExpiresAt != 0 && k.ExpiresAt <= now:
		return nil, authz.Set{}, apperr.Unauthorized("admin API key %s has expired", k.Name)
	case !current && k.PreviousUntil <= now:
		return nil, authz.Set{}, apperr.Unauthorized("admin API key %s was rotated: this secret no longer works", k.Name)
	}
	perms, err := authz.ParseStored(k.Permissions)
	if err != nil {
		return nil, authz.Set{}, err
	}
	if now-k.LastUsedAt >= touchEvery.Milliseconds() {
		// A use is worth knowing, not worth failing the request for.
		if err := s.deps.Store.TouchAdminAPIKey(context.WithoutCancel(ctx), k.ID, now); err != nil {
			s.deps.Log.ErrorContext(ctx, "use of an admin API key not recorded", "key", k.ID, "err", err)
		}
	}
	return k, perms, nil
}
