package app

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// The outbox worker: mail is written to the outbox in the transaction of
// the change that caused it and sent from here, outside any request, so a
// provider that is down delays mail and never loses or fails the change.
const (
	mailPollInterval = 5 * time.Second
	mailBatchSize    = 20
	mailMaxBatches   = 10 // per pass, so one pass cannot run for ever
	mailSendTimeout  = 2 * time.Minute
	mailErrorSize    = 1000 // characters of the last error kept in the outbox
	// mailRetention is how long the record of a mail sent or given up
	// (recipient, template, state, times; never its bodies) is kept.
	mailRetention = 30 * 24 * time.Hour
)

// mailRetryDelay is the wait after the attempts-th failed attempt, and
// false once the mail should be given up: five attempts over about 2.5 h.
func mailRetryDelay(attempts int) (time.Duration, bool) {
	switch attempts {
	case 1:
		return time.Minute, true
	case 2:
		return 5 * time.Minute, true
	case 3:
		return 30 * time.Minute, true
	case 4:
		return 2 * time.Hour, true
	}
	return 0, false
}

// enqueueMail puts m in the outbox through tx, due now. The worker does
// not see it before tx commits: callers call wakeMailer once it has, for
// the mail to leave at once rather than at the next poll.
func (a *App) enqueueMail(ctx context.Context, tx *store.Store, realm *store.Realm, m mailMessage) error {
	now := a.now().UnixMilli()
	return tx.EnqueueEmail(ctx, &store.OutboxEmail{ID: uuid.NewString(), RealmID: realm.ID, Recipient: m.To,
		Template: m.Template, Subject: m.Subject, HTMLBody: m.HTML, TextBody: m.Text, NextAttemptAt: now, CreatedAt: now})
}

// wakeMailer asks the worker for a pass now. A wake already pending is as
// good as a second one, so it never blocks.
func (a *App) wakeMailer() {
	select {
	case a.mailWake <- struct{}{}:
	default:
	}
}

// startMailDelivery runs the outbox worker until ctx ends and returns a
// function that waits for it. One worker is enough: sends are rare, and
// one sender never sends a mail twice.
func (a *App) startMailDelivery(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(mailPollInterval)
		defer t.Stop()
		for {
			a.deliverDueMail(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-a.mailWake:
			}
		}
	})
	return wg.Wait
}

// deliverDueMail sends what is due, and returns how many were sent.
func (a *App) deliverDueMail(ctx context.Context) (sent int) {
	realms := map[string]*store.Realm{} // by name, for this pass
	for range mailMaxBatches {
		due, err := a.store.DueEmails(ctx, a.now().UnixMilli(), mailBatchSize)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Error("reading the email outbox failed", "err", err)
			}
			return sent
		}
		for _, e := range due {
			if ctx.Err() != nil {
				return sent
			}
			realm, ok := realms[e.RealmName]
			if !ok {
				if realm, err = a.store.GetRealm(ctx, e.RealmName); err != nil {
					a.log.Error("email outbox: realm lookup failed", "realm", e.RealmName, "err", err)
					return sent
				}
				realms[e.RealmName] = realm
			}
			ok, err = a.deliverOutboxEmail(ctx, realm, e)
			if err != nil {
				a.log.Error("email outbox: recording the result failed", "id", e.ID, "err", err)
				return sent // the database is in trouble: try again next pass
			}
			if ok {
				sent++
			}
		}
		if len(due) < mailBatchSize {
			return sent
		}
	}
	return sent
}

// deliverOutboxEmail makes one attempt at e and records it: sent, due
// again after a wait, or given up. It returns whether e was sent, and an
// error only when recording failed.
func (a *App) deliverOutboxEmail(ctx context.Context, realm *store.Realm, e *store.OutboxEmail) (bool, error) {
	err := a.sendNow(ctx, realm, mailMessage{To: e.Recipient, Subject: e.Subject, HTML: e.HTMLBody, Text: e.TextBody}, false)
	if ctx.Err() != nil {
		return false, nil // shutting down: the attempt does not count
	}
	attempts := e.Attempts + 1
	now := a.now()
	if err == nil {
		a.log.Info("email sent", "realm", realm.Name, "id", e.ID, "provider", realm.EmailProvider, "attempt", attempts)
		return true, a.store.MarkEmailSent(ctx, e.ID, attempts, now.UnixMilli())
	}
	msg := err.Error()
	if r := []rune(msg); len(r) > mailErrorSize {
		msg = string(r[:mailErrorSize])
	}
	wait, retry := mailRetryDelay(attempts)
	if !retry {
		a.log.Error("email not delivered: giving up", "realm", realm.Name, "id", e.ID, "attempts", attempts, "err", msg)
		return false, a.store.MarkEmailFailed(ctx, e.ID, attempts, msg, 0, now.UnixMilli())
	}
	a.log.Warn("email not delivered: will retry", "realm", realm.Name, "id", e.ID, "attempts", attempts,
		"retry_in", wait, "err", msg)
	return false, a.store.MarkEmailFailed(ctx, e.ID, attempts, msg, now.Add(wait).UnixMilli(), now.UnixMilli())
}

// sendNow sends m through the realm's provider (or its SMTP server when
// smtpOnly), From the realm's sender, within mailSendTimeout.
func (a *App) sendNow(ctx context.Context, realm *store.Realm, m mailMessage, smtpOnly bool) error {
	from, err := mailSender(realm, smtpOnly)
	if err != nil {
		return err
	}
	m.From = from
	var mlr mailer
	if smtpOnly {
		var sm *smtpMailer
		if sm, err = a.smtpMailerFor(realm); err == nil {
			mlr = sm
		}
	} else {
		mlr, err = a.mailerFor(realm)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, mailSendTimeout)
	defer cancel()
	return mlr.send(ctx, m)
}
