package app

import (
	"net/http"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// loginEventTypes are the login event types the server records, as Keycloak
// names them; a query for any other type is refused rather than answered
// with nothing.
var loginEventTypes = []string{
	"LOGIN", "LOGIN_ERROR", "REGISTER", "REGISTER_ERROR", "LOGOUT", "LOGOUT_ERROR",
	"CODE_TO_TOKEN", "CODE_TO_TOKEN_ERROR", "REFRESH_TOKEN", "REFRESH_TOKEN_ERROR",
	"CLIENT_LOGIN", "CLIENT_LOGIN_ERROR", "INTROSPECT_TOKEN", "INTROSPECT_TOKEN_ERROR",
	"TOKEN_EXCHANGE", "USER_INFO_REQUEST", "UPDATE_PASSWORD", "UPDATE_PROFILE",
	"SEND_VERIFY_EMAIL", "VERIFY_EMAIL", "SEND_RESET_PASSWORD", "RESET_PASSWORD",
	"UPDATE_TOTP", "REMOVE_TOTP", "UPDATE_CREDENTIAL", "REMOVE_CREDENTIAL", "GRANT_CONSENT", "REVOKE_GRANT",
	"OAUTH2_DEVICE_AUTH", "OAUTH2_DEVICE_CODE_TO_TOKEN", "IMPERSONATE",
	"PERMANENT_LOCKOUT", "USER_DISABLED_BY_TEMPORARY_LOCKOUT",
	"UPDATE_EMAIL", "DELETE_ACCOUNT", "DELETE_ACCOUNT_SCHEDULED", "DELETE_ACCOUNT_CANCELLED",
}

// knownLoginEventType says whether t is one of loginEventTypes or the
// _ERROR twin of one.
func knownLoginEventType(t string) bool {
	return slices.Contains(loginEventTypes, t) || slices.Contains(loginEventTypes, strings.TrimSuffix(t, "_ERROR"))
}

// notRecordedByDefault are the types a realm records only when its
// enabledEventTypes names them, as Keycloak's saveByDefault=false types:
// one per API call, they would put a write behind every refresh,
// introspection and userinfo request.
var notRecordedByDefault = []string{
	"REFRESH_TOKEN", "REFRESH_TOKEN_ERROR", "INTROSPECT_TOKEN", "INTROSPECT_TOKEN_ERROR",
	"USER_INFO_REQUEST", "USER_INFO_REQUEST_ERROR",
}

// recordsEventType says whether realm keeps login events of type t.
func recordsEventType(realm *store.Realm, t string) bool {
	if len(realm.EnabledEventTypes) > 0 {
		return slices.Contains(realm.EnabledEventTypes, t)
	}
	return !slices.Contains(notRecordedByDefault, t)
}

// eventTypesRep shows a realm's enabled event types: [] for the default set.
func eventTypesRep(types []string) []string {
	if types == nil {
		return []string{}
	}
	return types
}

// checkEventTypes validates an enabledEventTypes list.
func checkEventTypes(types []string) error {
	if len(types) > 2*len(loginEventTypes) {
		return apperr.Field("enabledEventTypes", "lists too many types")
	}
	for _, t := range types {
		if !knownLoginEventType(t) {
			return apperr.Field("enabledEventTypes", "%q is not a login event type", t)
		}
	}
	return nil
}

// loginEventRep is a login event as the API shows it.
type loginEventRep struct {
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

func toLoginEventRep(e *store.LoginEvent) loginEventRep {
	details := e.Details
	if details == nil {
		details = map[string]string{}
	}
	return loginEventRep{ID: e.ID, Time: e.Time, Type: e.Type, RealmID: e.RealmID, ClientID: e.ClientID,
		UserID: e.UserID, SessionID: e.SessionID, IPAddress: e.IPAddress, Error: e.Error, Details: details}
}

// loginEventQuery reads the realm and the filters of a login event query
// or export.
func (a *App) loginEventQuery(r *http.Request, export bool) (*store.Realm, store.LoginEventFilter, error) {
	var f store.LoginEventFilter
	realm, err := a.realm(r)
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

func (a *App) listLoginEvents(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := a.loginEventQuery(r, false)
	if err != nil {
		return err
	}
	events, err := a.store.ListLoginEvents(r.Context(), realm.ID, f)
	if err != nil {
		return err
	}
	reps := make([]loginEventRep, len(events))
	for i, e := range events {
		reps[i] = toLoginEventRep(e)
	}
	httpx.WriteJSON(w, http.StatusOK, reps)
	return nil
}

func (a *App) clearLoginEvents(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	if err := a.store.ClearLoginEvents(r.Context(), realm.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
