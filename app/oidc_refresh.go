package app

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/risk"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// RefreshToken trades a refresh token for new tokens and a successor
// refresh token: every use rotates it. A rotated token presented again
// means a copy is loose: its whole family is revoked and its session
// ended. The library has already authenticated the client and checked
// that it has the grant.
func (s *oidcServer) RefreshToken(ctx context.Context, r *op.ClientRequest[oidc.RefreshTokenRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	a, realm, client := s.a, signin.RealmFrom(ctx), r.Client.(*oidcClient).c
	event := store.LoginEvent{Type: store.EventRefreshToken, ClientID: client.ClientID}
	defer func() { s.a.grantEvent(ctx, realm, event, err) }()
	hash := store.HashToken(r.Data.RefreshToken)
	// A token's user and sessions go with it when deleted: a token found
	// has both.
	grant, err := a.store.RefreshGrantByHash(ctx, realm.ID, hash)
	if errors.Is(err, store.ErrNotFound) {
		// Only a refused refresh asks why: a session a risk policy ended
		// took its tokens, and left their hashes to say so.
		why, err := a.risk.RefusedRefresh(ctx, realm, hash)
		if err != nil {
			return nil, err
		} else if why != "" {
			return nil, oidc.ErrInvalidGrant().WithDescription("%s", why)
		}
		return nil, errInvalidRefreshToken()
	} else if err != nil {
		return nil, err
	}
	old, user := grant.Token, grant.User
	if old.ClientID != client.ID {
		return nil, errInvalidRefreshToken()
	}
	// A refresh may narrow the scopes, never widen them (RFC 6749 §6).
	requested := old.Scopes
	if len(r.Data.Scopes) > 0 {
		for _, sc := range r.Data.Scopes {
			if !slices.Contains(old.Scopes, sc) {
				return nil, oidc.ErrInvalidScope().WithDescription("scope %s was not granted to this refresh token", sc)
			}
		}
		requested = r.Data.Scopes
	}
	if !user.Enabled {
		return nil, oidc.ErrInvalidGrant().WithDescription("the user is disabled")
	}
	// Resolved before the rotation, so that a scope since taken from the
	// client fails the refresh without using up the token.
	scopes, err := a.grantScopes(ctx, realm, client, requested)
	if err != nil {
		return nil, err
	}
	now := a.now().UnixMilli()
	sess, err := refreshSession(realm, grant, now)
	if err != nil {
		return nil, err
	}
	// The session's risk (app/risk): nothing read for a realm without a
	// session policy that can act, one row by its key for a session where
	// it was last seen; a policy may end the session here.
	if sess.sso != nil {
		if err := a.risk.Refreshed(ctx, realm, user, sess.sso, client.ClientID, clientIPFrom(ctx)); err != nil {
			var refused *risk.Refusal
			if errors.As(err, &refused) {
				return nil, oidc.ErrInvalidGrant().WithDescription("%s", refused.Error())
			}
			return nil, err
		}
	}
	token := randomToken()
	// A successor's ID orders by time, so that the rotations sharing a
	// commit add to one page of the ID index instead of one page each.
	next := &store.RefreshToken{ID: uuid.Must(uuid.NewV7()).String(), TokenHash: store.HashToken(token), Scopes: old.Scopes,
		CreatedAt: now, ExpiresAt: sess.expires}
	// The rotation is written while the tokens are signed: the signatures
	// are most of a refresh's CPU, and the commit's disk flush leaves the
	// CPU free. The answer waits for both, so it goes out only once its
	// rotation is durable; tokens signed for a refusal are dropped unsent.
	rotated := make(chan rotation, 1)
	go func() { rotated <- a.rotate(ctx, realm, next, old, sess, now) }()
	// An online token's tokens say how its SSO session is authenticated
	// now, so that a refresh after a step-up carries the level reached;
	// an offline token keeps what its sign-in was.
	authTime, amr := old.AuthTime, old.AMR
	var actor *store.Impersonator
	if sess.sso != nil {
		authTime, amr, actor = sess.sso.AuthTime, sess.sso.AMR, sess.sso.Impersonator
	}
	resp, signErr := a.tokenResponse(ctx, &userTokens{
		g: &tokenGrant{realm: realm, client: client, user: user, scopes: scopes, sid: sess.sid,
			authTime: time.UnixMilli(authTime), org: old.Org, actor: actor},
		amr: amr, refresh: token, noIDToken: client.OmitIDTokenOnRefresh,
	})
	rot := <-rotated
	switch {
	case errors.Is(rot.err, store.ErrNotFound):
		return nil, errInvalidRefreshToken()
	case errors.Is(rot.err, store.ErrTokenRevoked):
		// Said as it is, and nothing more is ended: the token was never
		// rotated, so no copy of it was used.
		return nil, oidc.ErrInvalidGrant().WithDescription("refresh token revoked")
	case rot.err != nil:
		return nil, rot.err
	case rot.reused:
		return nil, oidc.ErrInvalidGrant().WithDescription("refresh token already used; its session is ended")
	}
	event.UserID, event.SessionID = user.ID, sess.sid
	return resp, signErr
}

// rotation is the outcome of a refresh token's rotation: reused when the
// token had been rotated before, its family revoked and session ended.
type rotation struct {
	reused bool
	err    error
}

// rotate trades the presented token old, as read, for next and restarts
// the sessions' idle time. Concurrent refreshes share the commit (and its
// disk flush); each returns only once its own rotation is durable. The
// session touches, when written (refreshedSession.touch), ride in the
// same savepoint: the successor's expiry is the sessions' new one, so
// neither may be kept without the other.
func (a *App) rotate(ctx context.Context, realm *store.Realm, next, old *store.RefreshToken, sess *refreshedSession, now int64) rotation {
	var r rotation
	r.err = a.store.GroupTx(ctx, func(tx *store.Store) error {
		err := tx.RotateReadRefreshToken(ctx, old, next, now)
		if errors.Is(err, store.ErrTokenReused) {
			r.reused = true // commit the family's revocation, and end its session
			if _, err := tx.EndClientSession(ctx, realm.ID, old.SessionID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return nil
		} else if err != nil {
			return err
		}
		return sess.write(ctx, tx, now)
	})
	return r
}

func errInvalidRefreshToken() error {
	return oidc.ErrInvalidGrant().WithDescription("invalid refresh token")
}

// refreshedSession is the session a refresh keeps alive: for an online
// token the OAuth session and the SSO session above it, whose idle time
// the refresh restarts; for an offline token its offline session, good
// for the realm's offline lifespan from each use.
type refreshedSession struct {
	sid     string // the sid of the tokens: the SSO session, or the offline session
	expires int64  // of the successor token, and of the session it slides
	oauth   *store.Session
	sso     *store.Session // nil for offline tokens
	// touch says whether the refresh writes the sessions' access: not
	// when the session was written less than sessionTouchInterval ago.
	touch bool
}

// sessionTouchInterval spares the sessions a write on every refresh: a
// session whose last access was written less than this long ago keeps
// its row, and the successor token its expiry, so that the two still
// end together. A session's idle time then restarts at most this much
// before the refresh that would have restarted it. A client refreshing
// in a loop writes its sessions once per interval instead of on every
// refresh, and the rotation's commit carries the token rows alone.
const sessionTouchInterval = 10 * time.Second

// refreshSession says what the refresh of g does to its sessions.
func refreshSession(realm *store.Realm, g *store.RefreshGrant, now int64) (*refreshedSession, error) {
	t, oauth, sso := g.Token, g.Session, g.SSO
	if !oauth.Active(now) {
		return nil, oidc.ErrInvalidGrant().WithDescription("the session ended")
	}
	recent := func(s *store.Session) bool { return now-s.LastAccessAt < sessionTouchInterval.Milliseconds() }
	if t.Offline {
		s := &refreshedSession{sid: oauth.ID, oauth: oauth, expires: now + int64(realm.OfflineTokenLifespan)*1000, touch: true}
		if recent(oauth) {
			s.expires, s.touch = oauth.ExpiresAt, false
		}
		return s, nil
	}
	if sso == nil || !sso.Active(now) {
		return nil, oidc.ErrInvalidGrant().WithDescription("the session ended")
	}
	s := &refreshedSession{sid: sso.ID, oauth: oauth, sso: sso, expires: ssoExpiry(realm, sso, now), touch: true}
	if recent(sso) && recent(oauth) {
		s.expires, s.touch = min(sso.ExpiresAt, s.expires), false
	}
	return s, nil
}

// write records the refresh as an access to the sessions, when touch
// says so.
func (s *refreshedSession) write(ctx context.Context, tx *store.Store, now int64) error {
	switch {
	case !s.touch:
		return nil
	case s.sso == nil:
		return tx.TouchSession(ctx, s.oauth.RealmID, s.oauth.ID, now, s.expires)
	}
	if err := tx.TouchSession(ctx, s.sso.RealmID, s.sso.ID, now, s.expires); err != nil {
		return err
	}
	return tx.TouchSession(ctx, s.oauth.RealmID, s.oauth.ID, now, s.oauth.ExpiresAt)
}
