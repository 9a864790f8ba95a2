package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// OpenID Connect Back-Channel Logout 1.0, both ways: logout tokens sent to
// the clients of the sessions a logout ends, and logout tokens received.

const (
	backchannelEvent = "http://schemas.openid.net/event/backchannel-logout"
	// logoutTokenLifetime bounds how long a sent token can be replayed to
	// its client, retries included.
	logoutTokenLifetime = 2 * time.Minute
	// logoutTokenMaxAge is how old (by iat) a received token may be.
	logoutTokenMaxAge = 5 * time.Minute
	// logoutTokenSkew tolerates the sender's clock running ahead.
	logoutTokenSkew = 30 * time.Second
)

// Delivery: a bounded queue drained by a few workers, so that a logout
// answers at once whatever the clients do, and a slow or dead client
// neither holds up the others nor grows memory without end.
const (
	backchannelQueueSize = 1024
	backchannelWorkers   = 4
	backchannelAttempts  = 3
	backchannelTimeout   = 5 * time.Second
	backchannelRetryWait = time.Second // doubled after each failed attempt
)

// logoutDelivery is one logout token on its way to a client.
type logoutDelivery struct {
	uri, token    string
	expires       time.Time // the token's exp: past it, delivering is pointless
	realm, client string    // for the logs
}

// backchannelSender holds the delivery queue. Its zero value is ready: the
// queue is made on first use, by a logout or by startLogoutDelivery.
type backchannelSender struct {
	once      sync.Once
	queue     chan logoutDelivery
	capacity  int                             // 0: backchannelQueueSize
	retryWait time.Duration                   // 0: backchannelRetryWait
	allowed   []netip.Prefix                  // Config.OutboundAllowed
	traced    func(*http.Client) *http.Client // telemetry.Tracing.Client
	client    *http.Client
}

func (b *backchannelSender) init() {
	b.once.Do(func() {
		if b.capacity == 0 {
			b.capacity = backchannelQueueSize
		}
		if b.retryWait == 0 {
			b.retryWait = backchannelRetryWait
		}
		b.queue = make(chan logoutDelivery, b.capacity)
		b.client = b.traced(httpx.OutboundClient(backchannelTimeout, b.allowed))
		// A redirect is a failed delivery: the token goes only to the
		// registered URI.
		b.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	})
}

// enqueue adds d unless the queue is full: then the newest delivery is the
// one refused, and the caller logs it.
func (b *backchannelSender) enqueue(d logoutDelivery) bool {
	b.init()
	select {
	case b.queue <- d:
		return true
	default:
		return false
	}
}

// startLogoutDelivery runs the delivery workers until ctx ends, and
// returns a function that waits for them to finish. RunJobs runs them for
// the server's lifetime.
func (a *App) startLogoutDelivery(ctx context.Context) (wait func()) {
	b := &a.backchannel
	b.init()
	var wg sync.WaitGroup
	for range backchannelWorkers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case d := <-b.queue:
					a.deliverLogout(ctx, d)
				}
			}
		})
	}
	return func() {
		wg.Wait()
		if n := len(b.queue); n > 0 {
			a.log.Warn("back-channel logouts left undelivered at shutdown", "count", n)
		}
	}
}

// deliverLogout posts d, retrying network failures, 5xx and 429 with
// growing waits; another answer is final.
func (a *App) deliverLogout(ctx context.Context, d logoutDelivery) {
	b := &a.backchannel
	wait := b.retryWait
	for attempt := 1; ; attempt++ {
		if !a.now().Before(d.expires) {
			a.log.Warn("back-channel logout not delivered: its token expired in the queue", "realm", d.realm,
				"client", d.client, "attempts", attempt-1)
			return
		}
		retry, err := b.post(ctx, d)
		if err == nil {
			a.log.Debug("back-channel logout delivered", "realm", d.realm, "client", d.client, "attempt", attempt)
			return
		}
		if !retry || attempt == backchannelAttempts || ctx.Err() != nil {
			a.log.Warn("back-channel logout not delivered", "realm", d.realm, "client", d.client, "uri", d.uri,
				"attempts", attempt, "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// post delivers d once, and says whether a failure is worth retrying.
func (b *backchannelSender) post(ctx context.Context, d logoutDelivery) (retry bool, err error) {
	body := url.Values{"logout_token": {d.token}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.uri, strings.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.client.Do(req)
	if err != nil {
		return true, err
	}
	// Drain a little so the connection can be reused; the body says nothing.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return true, fmt.Errorf("status %d", resp.StatusCode)
	default:
		return false, fmt.Errorf("status %d", resp.StatusCode)
	}
}

// backchannelLogout queues a logout token for each ended OAuth session
// whose client has a back-channel logout URI, one per client and SSO
// session. Failures are logged: the logout itself has happened.
func (a *App) backchannelLogout(ctx context.Context, realm *store.Realm, ended []*store.Session) {
	clients := map[string]*store.Client{}
	sent := map[string]bool{}
	for _, s := range ended {
		if s.Kind != store.SessionOAuth {
			continue
		}
		c, ok := clients[s.ClientID]
		if !ok {
			var err error
			if c, err = a.store.GetClient(ctx, realm.ID, s.ClientID); err != nil {
				a.log.ErrorContext(ctx, "back-channel logout: client lookup failed", "client", s.ClientID, "err", err)
				continue
			}
			clients[s.ClientID] = c
		}
		if c.BackchannelLogoutURI == "" || !validate.IsHTTPURL(c.BackchannelLogoutURI) {
			continue
		}
		// The sid clients know is the SSO session's, from their tokens; an
		// offline session stands alone.
		sid := s.ParentID
		if sid == "" {
			sid = s.ID
		}
		if sent[c.ID+" "+sid] {
			continue
		}
		sent[c.ID+" "+sid] = true
		now := a.now()
		token, err := a.signLogoutToken(ctx, realm, c, s.UserID, sid, now)
		if err != nil {
			a.log.ErrorContext(ctx, "back-channel logout: signing failed", "client", c.ClientID, "err", err)
			continue
		}
		d := logoutDelivery{uri: c.BackchannelLogoutURI, token: token, expires: now.Add(logoutTokenLifetime), realm: realm.Name, client: c.ClientID}
		if !a.backchannel.enqueue(d) {
			a.log.ErrorContext(ctx, "back-channel logout dropped: delivery queue full", "realm", realm.Name,
				"client", c.ClientID, "uri", c.BackchannelLogoutURI)
		}
	}
}

// signLogoutToken signs a logout token (Back-Channel Logout §2.4) for client.
// The claims are built here rather than by the library's
// NewLogoutTokenClaims, which reads the wall clock instead of the App's.
func (a *App) signLogoutToken(ctx context.Context, realm *store.Realm, c *store.Client, userID, sid string, now time.Time) (string, error) {
	claims := map[string]any{
		"iss": a.issuer(realm), "aud": c.ClientID, "sub": userID, "iat": now.Unix(),
		"exp": now.Add(logoutTokenLifetime).Unix(), "jti": uuid.NewString(),
		"events": map[string]any{backchannelEvent: map[string]any{}},
	}
	if c.BackchannelLogoutSessionRequired {
		claims["sid"] = sid
	}
	return a.sign(ctx, realm, "logout+jwt", claims)
}

// backchannelLogoutIn ends the session a logout token received names: the
// SSO session of its sid, else every session of its sub. 200, or 400
// invalid_request saying what was wrong (§2.8).
func (a *App) backchannelLogoutIn(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	realm := signin.RealmFrom(ctx)
	w.Header().Set("Cache-Control", "no-store")
	lt, err := a.verifyLogoutToken(ctx, realm, r.PostFormValue("logout_token"))
	if err == nil {
		err = a.store.RecordLogoutTokenID(ctx, lt.ID, lt.IssuedAt.Time().Add(logoutTokenMaxAge+logoutTokenSkew).UnixMilli(),
			a.now().UnixMilli())
		if errors.Is(err, store.ErrConflict) {
			err = logoutTokenError("the logout token was already used")
		}
	}
	var ended []*store.Session
	if err == nil {
		ended, err = a.endLogoutTokenSessions(ctx, realm, lt)
	}
	var bad logoutTokenError
	if errors.As(err, &bad) {
		a.log.DebugContext(ctx, "logout token refused", "realm", realm.Name, "err", err)
		err = apperr.Invalid("%s", string(bad))
	}
	if err != nil {
		a.writeOAuthError(w, r, err)
		return
	}
	a.loggedOut(ctx, realm, ended, lt.client.ClientID, map[string]string{"source": "backchannel"})
	w.WriteHeader(http.StatusOK)
}

func (a *App) endLogoutTokenSessions(ctx context.Context, realm *store.Realm, lt *logoutToken) ([]*store.Session, error) {
	now := a.now().UnixMilli()
	if lt.SID == "" {
		return a.store.DeleteUserSessions(ctx, realm.ID, lt.Subject, now)
	}
	s, err := a.store.GetSession(ctx, realm.ID, lt.SID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // already over
	} else if err != nil {
		return nil, err
	}
	if lt.Subject != "" && s.UserID != lt.Subject {
		return nil, logoutTokenError("the sid is not a session of the sub")
	}
	ended, err := a.store.DeleteSession(ctx, realm.ID, s.ID, s.Kind, now)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // expired
	}
	return ended, err
}

// logoutTokenError is a refused logout token; its text is the
// error_description.
type logoutTokenError string

func (e logoutTokenError) Error() string { return string(e) }

// logoutToken is a verified logout token.
type logoutToken struct {
	jwt.Claims
	SID    string        `json:"sid"`
	client *store.Client // its audience in the realm
}

// verifyLogoutToken checks a received logout token as Back-Channel Logout
// §2.6 says: signed by the realm, its issuer, for one of its clients,
// recent, with the back-channel event and a jti, sub or sid, and no nonce.
// The jti's novelty is the caller's to check.
func (a *App) verifyLogoutToken(ctx context.Context, realm *store.Realm, raw string) (*logoutToken, error) {
	if raw == "" {
		return nil, logoutTokenError("logout_token is required")
	}
	var lt logoutToken
	var all map[string]any
	err := a.verifyRealmJWT(ctx, realm, raw, []string{"logout+jwt", "JWT", ""}, &lt, &all)
	if errors.Is(err, errInvalidJWT) {
		a.log.DebugContext(ctx, "logout token refused", "err", err)
		return nil, logoutTokenError("the logout token is not a JWT signed by this realm")
	} else if err != nil {
		return nil, err
	}
	now := a.now()
	switch {
	case lt.Issuer != a.issuer(realm):
		return nil, logoutTokenError("iss is not this realm's issuer")
	case lt.ID == "":
		return nil, logoutTokenError("jti is required")
	case lt.Subject == "" && lt.SID == "":
		return nil, logoutTokenError("sub or sid is required")
	case lt.IssuedAt == nil:
		return nil, logoutTokenError("iat is required")
	case lt.IssuedAt.Time().Before(now.Add(-logoutTokenMaxAge)) || lt.IssuedAt.Time().After(now.Add(logoutTokenSkew)):
		return nil, logoutTokenError("iat is not recent")
	case lt.Expiry != nil && !now.Before(lt.Expiry.Time()):
		return nil, logoutTokenError("the logout token has expired")
	}
	if _, ok := all["nonce"]; ok {
		return nil, logoutTokenError("a logout token must not carry a nonce")
	}
	events, _ := all["events"].(map[string]any)
	if _, ok := events[backchannelEvent].(map[string]any); !ok {
		return nil, logoutTokenError("events must hold the back-channel logout event")
	}
	c, err := a.audienceClient(ctx, realm, lt.Audience, "")
	if errors.Is(err, errNoAudienceClient) {
		return nil, logoutTokenError("aud names no client of this realm")
	} else if err != nil {
		return nil, err
	}
	lt.client = c
	return &lt, nil
}
