package webauthnrp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// ErrNoKey: an assertion was asked of a user without a WebAuthn
// credential where only that user's keys will do.
var ErrNoKey = apperr.Invalid("the user has no security key or passkey")

// Failure is a refused assertion; Reason goes to the LOGIN_ERROR event
// only, so that the answer never tells an unknown key from a disabled or
// locked user.
type Failure struct {
	Reason string
	cause  error
}

func (e *Failure) Error() string {
	if e.cause != nil {
		return "WebAuthn assertion refused: " + e.Reason + ": " + e.cause.Error()
	}
	return "WebAuthn assertion refused: " + e.Reason
}

// The reasons of a refused assertion, as its LOGIN_ERROR event's
// details name them.
const (
	ReasonInvalidResponse   = "webauthn_invalid_response"
	ReasonUnknownCredential = "webauthn_unknown_credential"
	ReasonInvalidAssertion  = "webauthn_invalid_assertion"
	ReasonUserNotVerified   = "webauthn_user_not_verified"
	ReasonOtherUser         = "webauthn_other_user" // a passkey, not of the user the sign-in named
	ReasonCloneDetected     = "webauthn_clone_detected"
	ReasonUserDisabled      = "user_disabled"
	ReasonUserNotActive     = "user_not_active"
	ReasonLockedOut         = "user_temporarily_disabled"
)

// Assertion is an accepted assertion.
type Assertion struct {
	User         *store.User
	Credential   *store.WebAuthnCredential
	record       *webauthn.Credential
	UserVerified bool
}

// Key is how the key authenticated: hwk for one bound to its device, swk
// for one that may be synced.
func (as *Assertion) Key() string {
	if as.record.Flags.BackupEligible {
		return AMRSoftwareKey
	}
	return AMRHardwareKey
}

// AMR is how the assertion authenticated alone: the key, and mfa when
// the key verified its user.
func (as *Assertion) AMR() []string {
	if as.UserVerified {
		return []string{as.Key(), AMRMFA}
	}
	return []string{as.Key()}
}

// BeginAssertion begins an authentication with one of u's keys, or with
// any passkey of the realm when u is nil, and keeps its ceremony. A
// second factor's (secondFactor: after the password, the key's presence
// is enough, and a PIN prompt would only be in the way) is taken only by
// an assertion of a second factor (VerifyAssertion); any other requires
// user verification, so that the key alone is two factors.
func (s *Service) BeginAssertion(ctx context.Context, realm *store.Realm, u *User, secondFactor bool) (*Options, error) {
	rp, err := s.relyingParty(realm)
	if err != nil {
		return nil, err
	}
	kind, uv := store.CeremonyLogin, protocol.VerificationRequired
	if secondFactor {
		kind, uv = store.CeremonySecondFactor, protocol.VerificationDiscouraged
	}
	var assertion *protocol.CredentialAssertion
	var session *webauthn.SessionData
	userID := ""
	if u != nil {
		assertion, session, err = rp.BeginLogin(u, webauthn.WithUserVerification(uv))
		userID = u.user.ID
	} else {
		assertion, session, err = rp.BeginDiscoverableLogin(webauthn.WithUserVerification(uv))
	}
	if err != nil {
		return nil, fmt.Errorf("begin WebAuthn login: %w", err)
	}
	id, err := s.beginCeremony(ctx, realm, userID, kind, session)
	if err != nil {
		return nil, err
	}
	return &Options{CeremonyID: id, PublicKey: assertion.Response}, nil
}

// AssertionRequest is an assertion to check and what it is for.
type AssertionRequest struct {
	CeremonyID string
	// Credential is the JSON of the PublicKeyCredential
	// navigator.credentials.get() answered.
	Credential []byte
	// UserID, when set, is the only user whose key is accepted: the
	// ceremony must be of that user's keys, or of any passkey (a user
	// without keys gets the options of one, so that the page does not
	// tell that user from an unknown one), when the key must name the
	// user.
	UserID string
	// SecondFactor: the key follows another factor (a second step, a
	// step-up): it answers a second factor's ceremony and need not have
	// verified its user. Otherwise the key alone authenticates: it
	// answers a login ceremony and must have verified the user.
	SecondFactor bool
	// For the LOGIN_ERROR events and the throttles: the client, the
	// caller's address, and whether it is a step-up.
	ClientID string
	IP       string
	StepUp   bool
}

// VerifyAssertion checks an assertion against its ceremony, under the
// flood guard and the realm's brute-force policy (the identity core's
// AssertionCheck keeps their books), and records the use: the new
// signature counter, checked against cloning. Every refusal is a
// *Failure (from a guarded address, an *identity.ThrottledError),
// recorded as a LOGIN_ERROR event and counted against the user once
// known; a ceremony unknown, used or another's is ErrCeremony, a request
// without a credential a field error.
func (s *Service) VerifyAssertion(ctx context.Context, realm *store.Realm, in AssertionRequest) (*Assertion, error) {
	check, err := s.core.StartAssertion(realm, in.IP)
	if err != nil {
		return nil, err
	}
	if len(in.Credential) == 0 {
		return nil, apperr.Field("credential", "is required: the PublicKeyCredential navigator.credentials.get() returned, as JSON")
	}
	rp, err := s.relyingParty(realm)
	if err != nil {
		return nil, err
	}
	kind := store.CeremonyLogin
	if in.SecondFactor {
		kind = store.CeremonySecondFactor
	}
	ceremony, session, err := s.takeCeremony(ctx, realm, in.CeremonyID, kind)
	if err != nil {
		return nil, err
	}
	var user *store.User
	fail := func(reason string, cause error, counted bool) error {
		e := store.LoginEvent{Type: store.EventLoginError, ClientID: in.ClientID, IPAddress: in.IP, Error: "invalid_user_credentials",
			Details: map[string]string{"credential_type": store.CredentialWebAuthn, "reason": reason}}
		if user != nil {
			e.UserID, e.Details["username"] = user.ID, user.Username
			switch reason {
			case ReasonUserDisabled, ReasonLockedOut:
				e.Error = reason
			}
		}
		if in.StepUp {
			e.Details["step_up"] = "true"
		}
		return check.Refused(ctx, user, counted, e, &Failure{Reason: reason, cause: cause})
	}
	if in.UserID != "" && ceremony.UserID != "" && ceremony.UserID != in.UserID {
		return nil, ErrCeremony
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(in.Credential)
	if err != nil {
		return nil, fail(ReasonInvalidResponse, err, false)
	}
	userID := ceremony.UserID
	if userID == "" { // a passkey sign-in: the credential names its user
		c, err := s.store.WebAuthnCredentialByCredentialID(ctx, realm.ID, parsed.RawID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fail(ReasonUnknownCredential, nil, false)
		} else if err != nil {
			return nil, err
		}
		userID = c.UserID
	}
	if user, err = s.store.GetUser(ctx, realm.ID, userID); errors.Is(err, store.ErrNotFound) {
		return nil, fail(ReasonUnknownCredential, nil, false)
	} else if err != nil {
		return nil, err
	}
	if in.UserID != "" && user.ID != in.UserID {
		return nil, fail(ReasonOtherUser, nil, false)
	}
	if !user.Enabled {
		return nil, fail(ReasonUserDisabled, nil, false)
	}
	if status, err := s.store.UserStatus(ctx, realm.ID, user.ID); err != nil {
		return nil, err
	} else if status != store.UserActive {
		return nil, fail(ReasonUserNotActive, nil, false)
	}
	if locked, err := check.Locked(ctx, user); err != nil {
		return nil, err
	} else if locked {
		return nil, fail(ReasonLockedOut, nil, false)
	}
	if err := check.Admit(user); err != nil {
		return nil, err
	}
	wu, err := s.loadUser(ctx, realm, user)
	if err != nil {
		return nil, err
	}
	var rec *webauthn.Credential
	if ceremony.UserID != "" {
		rec, err = rp.ValidateLogin(wu, *session, parsed)
	} else {
		rec, err = rp.ValidateDiscoverableLogin(func(_, _ []byte) (webauthn.User, error) { return wu, nil }, *session, parsed)
	}
	if err != nil {
		return nil, fail(ReasonInvalidAssertion, err, true)
	}
	userVerified := parsed.Response.AuthenticatorData.Flags.HasUserVerified()
	if !in.SecondFactor && !userVerified {
		// The login ceremony required it, so the library refused this
		// already; the key alone must never sign in without it.
		return nil, fail(ReasonUserNotVerified, nil, true)
	}
	stored := wu.stored(rec.ID)
	if stored == nil { // the library found the record among wu's
		return nil, fail(ReasonUnknownCredential, nil, true)
	}
	if rec.Authenticator.CloneWarning {
		s.log.WarnContext(ctx, "WebAuthn signature counter went back: the authenticator may be cloned",
			"realm", realm.Name, "user", user.ID, "credential", stored.ID)
		return nil, fail(ReasonCloneDetected, nil, true)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode WebAuthn credential: %w", err)
	}
	now := s.now().UnixMilli()
	// The store decides, atomically: of two assertions with one counter
	// value, one wins.
	err = s.store.UseWebAuthnCredential(ctx, realm.ID, stored.ID, int64(rec.Authenticator.SignCount), data, now)
	if errors.Is(err, store.ErrSignCount) {
		s.log.WarnContext(ctx, "WebAuthn signature counter reused: the authenticator may be cloned",
			"realm", realm.Name, "user", user.ID, "credential", stored.ID)
		return nil, fail(ReasonCloneDetected, err, true)
	} else if err != nil {
		return nil, err
	}
	stored.SignCount, stored.LastUsedAt, stored.Data = int64(rec.Authenticator.SignCount), now, data
	if err := check.Succeeded(ctx, user); err != nil {
		return nil, err
	}
	return &Assertion{User: user, Credential: stored, record: rec, UserVerified: userVerified}, nil
}

// IsRefusal tells a refused assertion or a malformed request (shown on
// the page) from a failure of the server.
func IsRefusal(err error) bool {
	var refused *Failure
	var ae *apperr.Error
	return errors.As(err, &refused) || errors.As(err, &ae) && ae.Status < http.StatusInternalServerError
}
