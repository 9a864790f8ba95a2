package webhooks

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// loginEventType is the webhook event a login event is, if any.
func loginEventType(t store.EventType) (EventType, bool) {
	switch t {
	case store.EventLogin:
		return LoginSucceeded, true
	case store.EventLoginError:
		return LoginFailed, true
	}
	return "", false
}

// LoginData is the data of the login events.
type LoginData struct {
	UserID    string            `json:"userId,omitempty"`
	ClientID  string            `json:"clientId,omitempty"`
	SessionID string            `json:"sessionId,omitempty"`
	IPAddress string            `json:"ipAddress,omitempty"`
	Error     string            `json:"error,omitempty"`
	Details   map[string]string `json:"details,omitempty"`
}

// WantsLogin says whether an enabled webhook of the realm takes the login
// event e: when none does, and the realm does not keep it, nothing is
// written for it.
func (s *Service) WantsLogin(ctx context.Context, realm *store.Realm, e *store.LoginEvent) bool {
	t, ok := loginEventType(e.Type)
	if !ok {
		return false
	}
	hooks, err := s.enabledWebhooks(ctx, realm.ID)
	if err != nil {
		return true // let Publish meet the error and log it
	}
	for _, h := range hooks {
		if matches(h.Events, t) {
			return true
		}
	}
	return false
}

// PublishLogin queues the login event e for the webhooks that take it, in
// tx (Publish).
func (s *Service) PublishLogin(ctx context.Context, tx *store.Store, realm *store.Realm, e *store.LoginEvent) (int, error) {
	t, ok := loginEventType(e.Type)
	if !ok {
		return 0, nil
	}
	return s.Publish(ctx, tx, realm, t, LoginData{UserID: e.UserID, ClientID: e.ClientID, SessionID: e.SessionID,
		IPAddress: e.IPAddress, Error: e.Error, Details: e.Details})
}
