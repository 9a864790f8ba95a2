package signin

import (
	"context"
	"errors"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// EventType is the type of a login event the sign-in records: the store's
// types, as Keycloak names them.
type EventType = store.EventType

// The types the sign-in's steps record.
const (
	EventLogin          = store.EventLogin
	EventLoginError     = store.EventLoginError
	EventUpdatePassword = store.EventUpdatePassword
	EventUpdateTOTP     = store.EventUpdateTOTP
)

// Emitter records a login event of the realm (the events module's
// writer), with the caller's address when the event has none.
type Emitter func(ctx context.Context, realm *store.Realm, e store.LoginEvent)

// stepFailed records the LOGIN_ERROR of a refused step, when the refusal
// is the person's and not the server's.
func (emit Emitter) stepFailed(ctx context.Context, f *Flow, v View, userID, username string, err error) {
	reason := LoginErrorReason(err)
	if reason == "" && errors.Is(err, identity.ErrInvalidTOTP) {
		reason = "invalid_totp"
	}
	if reason == "" {
		return
	}
	e := store.LoginEvent{Type: EventLoginError, ClientID: f.Wants.Client, IPAddress: v.ClientIP, Error: reason, UserID: userID,
		Details: map[string]string{}}
	if username != "" {
		e.Details["username"] = username
	}
	if f.Requester() == RequesterStepUp {
		e.Details["step_up"] = "true"
	}
	if len(e.Details) == 0 {
		e.Details = nil
	}
	if lockedID, locked := identity.LockedOut(err); locked {
		e.UserID = lockedID
	}
	emit(ctx, f.Realm, e)
}

// LoginErrorReason names a failed sign-in for its LOGIN_ERROR event, with
// Keycloak's error names; "" when the failure is the server's, not the
// user's. A brute-force lockout, answered as a wrong password, is told
// apart here only.
func LoginErrorReason(err error) string {
	var throttled *identity.ThrottledError
	if _, locked := identity.LockedOut(err); locked {
		return "user_temporarily_disabled"
	}
	switch {
	case errors.Is(err, identity.ErrBadCredentials):
		return "invalid_user_credentials"
	case errors.Is(err, identity.ErrUserDisabled):
		return "user_disabled"
	case errors.As(err, &throttled):
		return "user_temporarily_disabled"
	}
	return ""
}
