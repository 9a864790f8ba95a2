package events

import (
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// LoginEventRep is a login event as the API shows it (the admin API, and
// the account's data export).
type LoginEventRep struct {
	ID        string            `json:"id"`
	Time      int64             `json:"time"`
	Type      string            `json:"type"`
	RealmID   string            `json:"realmId"`
	ClientID  string            `json:"clientId"`
	UserID    string            `json:"userId"`
	SessionID string            `json:"sessionId"`
	IPAddress string            `json:"ipAddress"`
	Error     string            `json:"error"`
	Details   map[string]string `json:"details"`
}

// ToLoginEventRep shows e.
func ToLoginEventRep(e *store.LoginEvent) LoginEventRep {
	details := e.Details
	if details == nil {
		details = map[string]string{}
	}
	return LoginEventRep{ID: e.ID, Time: e.Time, Type: string(e.Type), RealmID: e.RealmID, ClientID: e.ClientID,
		UserID: e.UserID, SessionID: e.SessionID, IPAddress: e.IPAddress, Error: e.Error, Details: details}
}

// loginEventQuery reads the realm and the filters of a login event query
// or export.
func (s *Service) loginEventQuery(r *http.Request, export bool) (*store.Realm, store.LoginEventFilter, error) {
	var f store.LoginEventFilter
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, f, err
	}
	q := r.URL.Query()
	if f.Types, err = eventListParam(q, "type", knownLoginEventType,
		"a login event type such as LOGIN or LOGIN_ERROR"); err != nil {
		return nil, f, err
	}
	if f.UserID, err = eventUUIDParam(q, "userId"); err != nil {
		return nil, f, err
	}
	f.ClientID = q.Get("clientId")
	if err := eventWindow(q, export, &f.EventWindow); err != nil {
		return nil, f, err
	}
	return realm, f, nil
}

// ListLoginEvents answers a page of the realm's login events, newest first,
// by the query's filters.
func (s *Service) ListLoginEvents(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.loginEventQuery(r, false)
	if err != nil {
		return err
	}
	events, err := s.deps.Store.ListLoginEvents(r.Context(), realm.ID, f)
	if err != nil {
		return err
	}
	reps := make([]LoginEventRep, len(events))
	for i, e := range events {
		reps[i] = ToLoginEventRep(e)
	}
	httpx.WriteJSON(w, http.StatusOK, reps)
	return nil
}

// ClearLoginEvents deletes the realm's login events.
func (s *Service) ClearLoginEvents(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.ClearLoginEvents(r.Context(), realm.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
