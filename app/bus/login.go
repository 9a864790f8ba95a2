package bus

import "github.com/idenplane/idenplane/store"

// LoginData is the data of the events a login event makes.
type LoginData struct {
	// Event is the login event's own type (LOGIN, UPDATE_TOTP, …).
	Event     store.EventType   `json:"event"`
	UserID    string            `json:"userId,omitempty"`
	ClientID  string            `json:"clientId,omitempty"`
	SessionID string            `json:"sessionId,omitempty"`
	IPAddress string            `json:"ipAddress,omitempty"`
	Error     string            `json:"error,omitempty"`
	Details   map[string]string `json:"details,omitempty"`
	// Credential and Source say what a credential or user event is about:
	// "password", "otp" or "webauthn"; "registration" or "account".
	Credential string `json:"credential,omitempty"`
	Source     string `json:"source,omitempty"`
}

// OfLogin is the event a login event makes: a sign-in, a credential or
// user change made in the sign-in or the account pages, an impersonation,
// or auth.event for the others.
func OfLogin(e *store.LoginEvent) (Type, LoginData) {
	d := LoginData{Event: e.Type, UserID: e.UserID, ClientID: e.ClientID, SessionID: e.SessionID,
		IPAddress: e.IPAddress, Error: e.Error, Details: e.Details}
	switch e.Type {
	case store.EventLogin:
		return LoginSucceeded, d
	case store.EventLoginError:
		return LoginFailed, d
	case store.EventRegister:
		d.Source = "registration"
		return UserCreated, d
	case store.EventDeleteAccount:
		d.Source = "account"
		return UserDeleted, d
	case store.EventUpdatePassword, store.EventResetPassword:
		d.Credential = "password"
		return CredentialRotated, d
	case store.EventUpdateTOTP:
		d.Credential = "otp"
		return CredentialAdded, d
	case store.EventRemoveTOTP:
		d.Credential = "otp"
		return CredentialRemoved, d
	case store.EventUpdateCredential:
		d.Credential = credentialType(e)
		return CredentialAdded, d
	case store.EventRemoveCredential:
		d.Credential = credentialType(e)
		return CredentialRemoved, d
	case store.EventImpersonate:
		return ImpersonationStarted, d
	}
	return AuthEvent, d
}

// credentialType is the kind of credential a credential event names; the
// events without one are of passkeys.
func credentialType(e *store.LoginEvent) string {
	if t := e.Details["credential_type"]; t != "" {
		return t
	}
	return store.CredentialWebAuthn
}
