package mail

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// Deps is what the mail module takes of the server.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// BaseURL is the server's external address: its host is our name in
	// SMTP's EHLO.
	BaseURL string
	// Client is the HTTP providers' client (NewClient, maybe traced).
	Client *http.Client
	// OutboundAllowed are the non-public networks an SMTP relay may be on.
	OutboundAllowed []netip.Prefix
	// Themes finds the realm's email theme; nil, and mails go out as the
	// server writes them.
	Themes ThemeSource
}

// Service sends a realm's mail: now, for an administrator's test, or
// from the outbox.
type Service struct {
	deps Deps
	wake chan struct{} // wakes the worker after an enqueue; buffered (1)
}

// New is the mail module of deps.
func New(deps Deps) *Service {
	return &Service{deps: deps, wake: make(chan struct{}, 1)}
}

// The outbox worker: mail is written to the outbox in the transaction of
// the change that caused it and sent from here, outside any request, so a
// provider that is down delays mail and never loses or fails the change.
const (
	// PollInterval is how often the worker looks for mail due without a wake.
	PollInterval    = 5 * time.Second
	mailBatchSize   = 20
	mailMaxBatches  = 10 // per pass, so one pass cannot run for ever
	mailSendTimeout = 2 * time.Minute
	mailErrorSize   = 1000 // characters of the last error kept in the outbox
	// Retention is how long the record of a mail sent or given up
	// (recipient, template, state, times; never its bodies) is kept.
	Retention = 30 * 24 * time.Hour
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

// Enqueue puts m in the outbox through tx, due now. The worker does
// not see it before tx commits: callers call Wake once it has, for
// the mail to leave at once rather than at the next poll.
func (s *Service) Enqueue(ctx context.Context, tx *store.Store, realm *store.Realm, m Message) error {
	m = s.themed(ctx, realm, m)
	now := s.deps.Now().UnixMilli()
	return tx.EnqueueEmail(ctx, &store.OutboxEmail{ID: uuid.NewString(), RealmID: realm.ID, Recipient: m.To,
		Template: m.Template, Subject: m.Subject, HTMLBody: m.HTML, TextBody: m.Text, NextAttemptAt: now, CreatedAt: now})
}

// Wake asks the worker for a pass now. A wake already pending is as
// good as a second one, so it never blocks.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start runs the outbox worker until ctx ends and returns a
// function that waits for it. One worker is enough: sends are rare, and
// one sender never sends a mail twice.
func (s *Service) Start(ctx context.Context) (wait func()) {
	// One server of a fleet delivers at a time, so that none sends a mail
	// another is sending.
	return s.deps.Store.Worker(ctx, "mail", PollInterval, s.wake, func(ctx context.Context) { s.DeliverDue(ctx) })
}

// DeliverDue sends what is due, and returns how many were sent.
func (s *Service) DeliverDue(ctx context.Context) (sent int) {
	realms := map[string]*store.Realm{} // by name, for this pass
	for range mailMaxBatches {
		due, err := s.deps.Store.DueEmails(ctx, s.deps.Now().UnixMilli(), mailBatchSize)
		if err != nil {
			if ctx.Err() == nil {
				s.deps.Log.Error("reading the email outbox failed", "err", err)
			}
			return sent
		}
		for _, e := range due {
			if ctx.Err() != nil {
				return sent
			}
			realm, ok := realms[e.RealmName]
			if !ok {
				if realm, err = s.deps.Store.GetRealm(ctx, e.RealmName); err != nil {
					s.deps.Log.Error("email outbox: realm lookup failed", "realm", e.RealmName, "err", err)
					return sent
				}
				realms[e.RealmName] = realm
			}
			ok, err = s.deliver(ctx, realm, e)
			if err != nil {
				s.deps.Log.Error("email outbox: recording the result failed", "id", e.ID, "err", err)
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

// deliver makes one attempt at e and records it: sent, due
// again after a wait, or given up. It returns whether e was sent, and an
// error only when recording failed.
func (s *Service) deliver(ctx context.Context, realm *store.Realm, e *store.OutboxEmail) (bool, error) {
	err := s.SendNow(ctx, realm, Message{To: e.Recipient, Subject: e.Subject, HTML: e.HTMLBody, Text: e.TextBody}, false)
	if ctx.Err() != nil {
		return false, nil // shutting down: the attempt does not count
	}
	attempts := e.Attempts + 1
	now := s.deps.Now()
	if err == nil {
		s.deps.Log.Info("email sent", "realm", realm.Name, "id", e.ID, "provider", realm.EmailProvider, "attempt", attempts)
		return true, s.deps.Store.MarkEmailSent(ctx, e.ID, attempts, now.UnixMilli())
	}
	msg := err.Error()
	if r := []rune(msg); len(r) > mailErrorSize {
		msg = string(r[:mailErrorSize])
	}
	wait, retry := mailRetryDelay(attempts)
	if !retry {
		s.deps.Log.Error("email not delivered: giving up", "realm", realm.Name, "id", e.ID, "attempts", attempts, "err", msg)
		return false, s.deps.Store.MarkEmailFailed(ctx, e.ID, attempts, msg, 0, now.UnixMilli())
	}
	s.deps.Log.Warn("email not delivered: will retry", "realm", realm.Name, "id", e.ID, "attempts", attempts,
		"retry_in", wait, "err", msg)
	return false, s.deps.Store.MarkEmailFailed(ctx, e.ID, attempts, msg, now.Add(wait).UnixMilli(), now.UnixMilli())
}

// SendNow sends m through the realm's provider (or its SMTP server when
// smtpOnly), From the realm's sender, within mailSendTimeout.
func (s *Service) SendNow(ctx context.Context, realm *store.Realm, m Message, smtpOnly bool) error {
	m = s.themed(ctx, realm, m)
	from, err := Sender(realm, smtpOnly)
	if err != nil {
		return err
	}
	m.From = from
	var mlr mailer
	if smtpOnly {
		var sm *smtpMailer
		if sm, err = s.smtpMailerFor(realm); err == nil {
			mlr = sm
		}
	} else {
		mlr, err = s.mailerFor(realm)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, mailSendTimeout)
	defer cancel()
	return mlr.send(ctx, m)
}
