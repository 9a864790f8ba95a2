package app

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/risk"
	"github.com/idenplane/idenplane/app/signin"
)

// jobInterval is how often RunJobs repeats its work.
const jobInterval = time.Hour

// RunJobs does the server's periodic upkeep until ctx is done, at once and
// then every hour: events past their retention, key rotation, expired
// sessions and token records, and accounts whose deletion is due; and,
// beside them, mail delivery, back-channel logouts, the plugins' observers and the periodic syncs
// of the user directories.
func (a *App) RunJobs(ctx context.Context) {
	// Last, once the server takes no more requests: the uses of
	// identities' credentials still queued.
	defer func() {
		if err := a.id.FlushNHIUses(context.WithoutCancel(ctx)); err != nil {
			a.log.Error("uses of identities not recorded", "err", err)
		}
	}()
	t := time.NewTicker(jobInterval)
	defer t.Stop()
	defer a.startLogoutDelivery(ctx)()
	defer a.mail.Start(ctx)()
	defer a.webhooks.Start(ctx)()
	defer a.plugins.Start(ctx)()
	defer a.auditStreams.Start(ctx)()
	defer a.ldap.StartPeriodicSync(ctx)()
	for {
		// A fleet runs the upkeep once an hour, on the server that claims
		// it (a minute's slack, so that a tick a little early still does).
		claimed, err := a.store.ClaimJob(ctx, upkeepJob, a.now(), jobInterval-time.Minute)
		switch {
		case err != nil && ctx.Err() == nil:
			a.log.Error("claiming the upkeep failed", "err", err)
		case err != nil:
		case !claimed:
			a.log.Info("upkeep left to the server that began it this hour")
		default:
			a.log.Info("upkeep began")
			a.expireEvents(ctx)
			a.signingKeys.RotateDue(ctx)
			a.saml.RotateDueKeys(ctx)
			a.expireSessions(ctx)
			a.account.DeleteDueAccounts(ctx)
			a.sweepNHICredentials(ctx)
		}
		// Hand back at once what start-up and the sweeps left over: the
		// runtime would return it over minutes, and an idle server should
		// look idle (2 MB of its 29 MB at start).
		debug.FreeOSMemory()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// webhookRetention is how long a delivered or abandoned webhook message
// and its attempts stay in the deliveries list.
const webhookRetention = 7 * 24 * time.Hour

// upkeepJob names the hourly upkeep among the periodic jobs of a fleet.
const upkeepJob = "upkeep"

func (a *App) expireEvents(ctx context.Context) {
	login, admin, err := a.store.DeleteExpiredEvents(ctx, a.now())
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error("deleting expired events failed", "err", err)
		}
		return
	}
	a.log.Info("deleted expired events", "login", login, "admin", admin)
}

// expireSessions deletes sessions and token records nothing can use any
// more; an expired refresh token or revocation only takes space.
func (a *App) expireSessions(ctx context.Context) {
	now := a.now().UnixMilli()
	for _, purge := range []struct {
		what string
		run  func(context.Context, int64) (int64, error)
	}{
		{"sessions", a.store.DeleteExpiredSessions},
		{"refresh tokens", a.store.DeleteExpiredRefreshTokens},
		{"access token revocations", a.store.DeleteExpiredAccessTokenRevocations},
		// Kept one lifetime past expiry, so a device still polling learns
		// expired_token rather than invalid_grant.
		{"device authorizations", func(ctx context.Context, now int64) (int64, error) {
			return a.store.DeleteExpiredDeviceAuthorizations(ctx, now-deviceCodeLifetime.Milliseconds())
		}},
		{"auth requests", a.store.DeleteExpiredAuthRequests},
		{"sign-in flows", a.store.DeleteExpiredSignInFlows},
		{"sign-in email codes", func(ctx context.Context, now int64) (int64, error) {
			return a.store.DeleteStaleSignInEmailCodes(ctx, now-signin.EmailCodeKept.Milliseconds())
		}},
		{"action tokens", a.store.DeleteExpiredActionTokens},
		{"WebAuthn ceremonies", a.store.DeleteExpiredWebAuthnCeremonies},
		{"broker sign-ins", a.store.DeleteExpiredBrokerLogins},
		{"outbox mail", func(ctx context.Context, now int64) (int64, error) {
			return a.store.DeleteFinishedEmails(ctx, now-mail.Retention.Milliseconds())
		}},
		{"webhook deliveries", func(ctx context.Context, now int64) (int64, error) {
			return a.store.DeleteFinishedWebhookMessages(ctx, now-webhookRetention.Milliseconds())
		}},
		// The delivery worker purges as its cursors move; this takes the
		// records of realms whose streams were deleted or disabled.
		{"audit records", func(ctx context.Context, _ int64) (int64, error) { return a.store.PurgeAuditRecords(ctx) }},
		{"throttle failures", func(ctx context.Context, now int64) (int64, error) {
			return a.store.DeleteOldThrottleFailures(ctx, now-identity.ThrottleWindow.Milliseconds())
		}},
		{"risk-refused refresh tokens", a.store.DeleteExpiredTokenRefusals},
		{"session risk profiles and events", func(ctx context.Context, now int64) (int64, error) {
			return a.store.DeleteStaleSessionRisks(ctx, now-risk.SessionRetention.Milliseconds())
		}},
	} {
		n, err := purge.run(ctx, now)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Error("deleting expired "+purge.what+" failed", "err", err)
			}
			continue
		}
		if n > 0 {
			a.log.Info("deleted expired "+purge.what, "count", n)
		}
	}
}

// sweepNHICredentials expires the identities' credentials past their
// policy's maximum age and announces those expiring and expired.
func (a *App) sweepNHICredentials(ctx context.Context) {
	expiring, expired, err := a.nhi.Sweep(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error("sweeping identity credentials failed", "err", err)
		}
		return
	}
	if expiring+expired > 0 {
		a.log.Info("announced identity credentials", "expiring", expiring, "expired", expired)
	}
}
