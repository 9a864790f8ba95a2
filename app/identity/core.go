// Package identity is the identity core: the rules every path that
// touches a user, a credential or a client obeys, with no HTTP in them.
// The admin API, registration, the account pages, the sign-in flows and
// realm import call it; SCIM, LDAP sync, brokering and the importers will
// call the same functions.
//
// It owns:
//
//   - the user lifecycle: CreateUser, UpdateUser (a disable or an enable
//     too), DeleteUser, with the username, email and name rules
//     (ValidateUser), the conflicts (a 409 naming the field), the realm's
//     password policy and history (NewPasswordHash, SetPassword) and the
//     required actions (PasswordChangeRequired, EmailVerificationRequired);
//   - password hashing: argon2id, at most as many hashes at once as there
//     are hash slots, each waiting a bounded time for one;
//   - credential checks, each under the realm's brute-force lockout and
//     the sign-in flood guard: the password of a sign-in
//     (CheckCredentials), of a signed-in user's confirmation
//     (CheckUserPassword) and of the admin login (CheckAdminLogin), a
//     TOTP or recovery code (CheckOneTimeCode), and the outcome of a
//     WebAuthn assertion (StartAssertion: the ceremonies are the rules of
//     app/identity/webauthnrp, beside the core because go-webauthn brings
//     net/http);
//   - the TOTP enrolment: the secret, its key and QR code, the first code
//     and the recovery codes (BeginTOTP, ConfirmTOTP);
//   - client rules: ValidateClient, the secret (NewClientSecret,
//     CheckClientSecret) and the service-account user
//     (SyncServiceAccount).
//
// Functions that write take the store handle to write on: the pool, or
// the transaction of a store.Tx, so that a caller can put a user write
// and its own writes in one transaction. Everything slow (a password
// hash) happens in functions that take no transaction. The core holds
// rules, not storage: handlers keep calling the store for everything
// else.
//
// Errors are *apperr.Error values, or the core's own sentinels and types
// (ErrBadCredentials, ErrUserDisabled, ErrInvalidTOTP, *ThrottledError,
// *LockedError, *PasswordRefused) that each caller answers in its own
// protocol.
//
// # Credential sources
//
// Where a sign-in checks a password, the core asks its PasswordSource
// values in order, as dex's handlers ask a PasswordConnector. The local
// store is the first; the LDAP federation (app/ldapfed) adds another,
// which alone checks the users linked to a directory entry. A source answers Right ("this
// login is mine and the password is right", with the user), Wrong ("mine
// and wrong", with the user when it has one) or NotMine; the first answer
// other than NotMine decides. The core keeps the bookkeeping around every
// answer, whichever source gave it: the flood guard admits the attempt
// before any source is asked and counts every refusal, the brute-force
// lockout of the user an answer names holds and counts, and a Right
// answer still meets the checks of the account (enabled, active).
package identity

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/idenplane/idenplane/store"
)

// Deps is what the core works with.
type Deps struct {
	// Store is the pool: what the core reads, and writes when no caller's
	// transaction is given.
	Store *store.Store
	Now   func() time.Time // nil means time.Now
	Log   *slog.Logger     // nil discards
	// LoginEvent records a login event of the core's own: the
	// LOGIN_ERROR of a brute-force lockout. nil records nothing.
	LoginEvent func(ctx context.Context, realm *store.Realm, e store.LoginEvent)
	// Throttle counts the realms' failed sign-ins for the flood guard;
	// the server's other rate limits may share it. nil makes one.
	Throttle *Throttle
	// AdminThrottle counts the admin login's failures
	// (NewStoredThrottle keeps them across restarts). nil counts in
	// memory.
	AdminThrottle FailureCounter
	// HashSlots bounds the password hashes running at once: a hash puts a
	// value in it for as long as it runs, and each takes HashMemory. nil
	// makes GOMAXPROCS slots.
	HashSlots chan struct{}
	// HashWait is how long a hash waits for a slot before it is refused
	// with ErrHashBusy; zero means DefaultHashWait.
	HashWait time.Duration
	// GuardedAnswerTime is when, after it began, a refused attempt from
	// a guarded address is answered; zero means DefaultGuardedAnswerTime.
	GuardedAnswerTime time.Duration
	// Sources are the credential sources asked after the local store, in
	// order: the LDAP federation's.
	Sources []PasswordSource
	// Federation says which users a directory owns (their password, and
	// in READ_ONLY mode their profile). nil: no user is linked.
	Federation Federation
}

// Core holds the identity rules with what they need. Its methods are
// safe for concurrent use.
type Core struct {
	store             *store.Store
	now               func() time.Time
	log               *slog.Logger
	loginEvent        func(ctx context.Context, realm *store.Realm, e store.LoginEvent)
	throttle          *Throttle
	adminThrottle     FailureCounter
	hashSlots         chan struct{}
	memories          *hashMemories
	hashWait          time.Duration
	guardedAnswerTime time.Duration
	sources           []PasswordSource // the local store first
	federation        Federation
	nhiUses           nhiUses // uses of identities' credentials not yet written
}

// New builds the core from d, filling in what d leaves out.
func New(d Deps) *Core {
	c := &Core{store: d.Store, now: d.Now, log: d.Log, loginEvent: d.LoginEvent, throttle: d.Throttle,
		adminThrottle: d.AdminThrottle, hashSlots: d.HashSlots, hashWait: d.HashWait, guardedAnswerTime: d.GuardedAnswerTime,
		memories: &hashMemories{after: hashMemoryIdle}}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.loginEvent == nil {
		c.loginEvent = func(context.Context, *store.Realm, store.LoginEvent) {}
	}
	if c.throttle == nil {
		c.throttle = NewThrottle(c.now, ThrottleWindow)
	}
	if c.adminThrottle == nil {
		c.adminThrottle = NewThrottle(c.now, ThrottleWindow)
	}
	if c.hashSlots == nil {
		c.hashSlots = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	if c.hashWait == 0 {
		c.hashWait = DefaultHashWait
	}
	if c.guardedAnswerTime == 0 {
		c.guardedAnswerTime = DefaultGuardedAnswerTime
	}
	c.sources = append([]PasswordSource{localSource{c}}, d.Sources...)
	c.federation = d.Federation
	return c
}
