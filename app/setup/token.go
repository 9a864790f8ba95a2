package setup

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// TokenHeader is the header the bootstrap token may come in, besides
// Authorization: Bearer.
const TokenHeader = "X-Setup-Token"

// tokenBytes is the bootstrap token's randomness.
const tokenBytes = 32

// tokenLimitPerIP is how many wrong tokens an address may send in the
// throttle's window before it must wait: the token's 256 bits need no
// help, but a credential endpoint is never an open door.
const tokenLimitPerIP = 10

// Bootstrap opens the wizard at the first start that finds no
// administrator: it makes the wizard's record with the hash of a new
// bootstrap token, and prints the token and the wizard's address, once.
// A start that finds an administrator and a wizard nobody has begun
// closes it as skipped (IDENPLANE_ADMIN_USER made one, or the admin API
// did, or an earlier version): there is nothing to set up.
func (s *Service) Bootstrap(ctx context.Context) error {
	rec, err := s.deps.Store.GetSetupWizard(ctx)
	if errors.Is(err, store.ErrNotFound) {
		rec = nil
	} else if err != nil {
		return err
	} else if Status(rec.Status) != StatusPending {
		return nil
	}
	admins, err := s.deps.Store.ListAdminAccounts(ctx)
	if err != nil {
		return err
	}
	if len(admins) > 0 {
		return s.closeUnneeded(ctx, rec)
	}
	if rec != nil {
		// The token was printed at the start that made the record: only
		// its hash is kept, so it cannot be printed again.
		s.deps.Log.Info("the setup wizard is waiting: open it with the bootstrap token printed at the first start",
			"url", s.deps.BaseURL+Path)
		return nil
	}
	token, hash := newToken()
	now := s.deps.Now().UnixMilli()
	rec = &store.SetupWizard{Status: string(StatusPending), TokenHash: hash, Steps: "{}", CreatedAt: now, UpdatedAt: now}
	if err := s.deps.Store.CreateSetupWizard(ctx, rec); errors.Is(err, store.ErrConflict) {
		return nil // another server of the fleet made it, and printed its token
	} else if err != nil {
		return err
	}
	fmt.Fprintf(s.deps.Stdout, "Setup wizard (first run, no administrator yet): open %s%s#token=%s\n", s.deps.BaseURL, Path, token)
	fmt.Fprintf(s.deps.Stdout, "Setup bootstrap token (shown once; send it as Authorization: Bearer to %s%s/...): %s\n",
		s.deps.BaseURL, Path, token)
	return nil
}

// closeUnneeded records the wizard as skipped because an administrator
// exists, unless the wizard was begun: its own administrator is one, and
// a restart must not end it half way.
func (s *Service) closeUnneeded(ctx context.Context, rec *store.SetupWizard) error {
	now := s.deps.Now().UnixMilli()
	if rec == nil {
		err := s.deps.Store.CreateSetupWizard(ctx, &store.SetupWizard{Status: string(StatusSkipped), Steps: "{}",
			CreatedAt: now, UpdatedAt: now, FinishedAt: now, FinishedBy: byExistingAdmin})
		if errors.Is(err, store.ErrConflict) {
			return nil
		}
		return err
	}
	_, steps, err := s.record(ctx)
	if err != nil || !steps.empty() {
		return err
	}
	rec.Status, rec.TokenHash, rec.UpdatedAt, rec.FinishedAt, rec.FinishedBy = string(StatusSkipped), nil, now, now, byExistingAdmin
	if err := s.deps.Store.UpdateSetupWizard(ctx, rec); err != nil && !errors.Is(err, store.ErrConflict) {
		return err
	}
	s.deps.Log.Info("setup wizard closed: an administrator exists")
	return nil
}

// newToken makes a bootstrap token and its hash, the only form it is
// stored in.
func newToken() (string, []byte) {
	raw := make([]byte, tokenBytes)
	_, _ = rand.Read(raw)
	token := base64.RawURLEncoding.EncodeToString(raw)
	return token, tokenHash(token)
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// requestToken is the token of an API request: Authorization: Bearer, or
// X-Setup-Token.
func requestToken(r *http.Request) string {
	if t := r.Header.Get(TokenHeader); t != "" {
		return t
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return ""
}

// errNoToken is a request of the wizard without its token.
var errNoToken = apperr.Unauthorized("the setup wizard needs the bootstrap token the server printed at its first start: " +
	"send it as Authorization: Bearer or " + TokenHeader).WithKey("setup.token.missing")

// errWrongToken is a token that is not the one printed.
var errWrongToken = apperr.Unauthorized("this is not the bootstrap token the server printed").WithKey("setup.token.wrong")

// open reads the wizard for a request that brings token: 410 once the
// wizard is closed, whatever the token; then 401 without a token or with
// a wrong one, and 429 once the caller's address sent too many wrong ones.
func (s *Service) open(r *http.Request, token string) (*store.SetupWizard, *Steps, error) {
	rec, steps, err := s.record(r.Context())
	if err != nil {
		return nil, nil, err
	}
	if Status(rec.Status) != StatusPending {
		return nil, nil, errGone(rec)
	}
	if token == "" {
		return nil, nil, errNoToken
	}
	if err := s.checkToken(r, rec, token); err != nil {
		return nil, nil, err
	}
	return rec, steps, nil
}

// checkToken compares token with the stored hash in constant time, under
// the rate limit of the caller's address.
func (s *Service) checkToken(r *http.Request, rec *store.SetupWizard, token string) error {
	key := "setup-token:" + s.deps.ClientIP(r)
	if wait := s.deps.Throttle.Wait(key, tokenLimitPerIP); wait > 0 {
		return apperr.TooMany(wait, "too many wrong bootstrap tokens from this address; try again later").
			WithKey("setup.token.tooMany")
	}
	if subtle.ConstantTimeCompare(tokenHash(token), rec.TokenHash) != 1 {
		if err := s.deps.Throttle.Record(r.Context(), key); err != nil {
			s.deps.Log.Warn("counting a wrong setup token failed", "err", err)
		}
		return errWrongToken
	}
	return nil
}
