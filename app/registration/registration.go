// Package registration is self-service registration: the public API (the
// form's fields, register, verify-email, resend), the one core that the
// API and the hosted register page both register through, and the admin
// API of the registration fields, the settings and the pending
// registrations with their approval.
package registration

import (
	"context"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Deps is what registration works with.
type Deps struct {
	Store *store.Store
	Now   func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for the Location of a new
	// field.
	BaseURL string
	// Identity is the identity core: the user rules, the password hash,
	// the custom attributes.
	Identity *identity.Core
	// Throttle counts registrations, resends and failed verifications by
	// address, in the sign-in flood guard's window.
	Throttle *identity.Throttle
	Messages *ui.Catalogues
	Mail     Mailer
	// LoginEvent records the REGISTER, VERIFY_EMAIL and SEND_VERIFY_EMAIL
	// events and the refused registrations.
	LoginEvent func(ctx context.Context, realm *store.Realm, e store.LoginEvent)
	// ClientIP is the address of the request's client.
	ClientIP func(r *http.Request) string
	// UserRep is a user as the admin API shows one: the registered user
	// in the register answer.
	UserRep func(u *store.User) any
	// PendingUserRep is a user awaiting approval, or just approved or
	// rejected, as the admin API shows one: the user's representation with
	// its status and registration attributes.
	PendingUserRep func(u *store.User, status string, attrs map[string]string) any
}

// Mailer is the outgoing mail registration sends: the mail module's, which
// the server hands over, since a module does not import another.
type Mailer interface {
	// CanSend says whether realm has a sender for mail.
	CanSend(realm *store.Realm) bool
	// NewUserVerification is the verify-email token and mail of u, a user
	// being registered with the custom attributes custom and the
	// attributes attrs, in the language its locale attribute chooses, else
	// in requested, the language the registration asked for.
	NewUserVerification(realm *store.Realm, u *store.User, custom map[string][]string, attrs map[string]string, requested string) (Verification, error)
	// UserVerification is the verify-email token and mail of the stored
	// user u, in u's language, else that of own, the request u made.
	UserVerification(ctx context.Context, realm *store.Realm, u *store.User, own *http.Request) (Verification, error)
	// Wake has the mail worker send what a committed transaction queued.
	Wake()
}

// Verification is a verify-email token and its mail, ready to be written.
type Verification interface {
	// Queue stores the token and puts the mail in the outbox through tx.
	Queue(ctx context.Context, tx *store.Store) error
}

// Service is self-service registration: its handlers and its core.
type Service struct{ deps Deps }

// New builds the registration module.
func New(d Deps) *Service { return &Service{deps: d} }

// set copies src to dst when the body gave it.
func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}
