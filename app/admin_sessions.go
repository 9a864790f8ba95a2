package app

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

const defaultSessionPageSize = 100

type sessionRep struct {
	ID         string `json:"id"`
	Type       string `json:"type"` // sso or oauth
	UserID     string `json:"userId"`
	Username   string `json:"username"`
	IPAddress  string `json:"ipAddress"`
	Start      int64  `json:"start"` // Unix milliseconds, as are the times below
	LastAccess int64  `json:"lastAccess"`
	Expires    int64  `json:"expires"`
	ClientID   string `json:"clientId,omitempty"` // the public clientId of an OAuth session
	ParentID   string `json:"parentId,omitempty"` // the SSO session of an online OAuth session
	Offline    bool   `json:"offline"`
	// The entity IDs of the SAML service providers an SSO session signed in to.
	SAMLServiceProviders []string `json:"samlServiceProviders,omitempty"`
}

func toSessionRep(s *store.Session) sessionRep {
	return sessionRep{ID: s.ID, Type: s.Kind, UserID: s.UserID, Username: s.Username, IPAddress: s.IPAddress,
		Start: s.StartedAt, LastAccess: s.LastAccessAt, Expires: s.ExpiresAt, ClientID: s.PublicClientID,
		ParentID: s.ParentID, Offline: s.Offline}
}

func toSessionReps(sessions []*store.Session) []sessionRep { return httpx.Reps(sessions, toSessionRep) }

func (a *App) listRealmSessions(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var samlSPs map[string][]string
	return httpx.ListPage(w, r, defaultSessionPageSize, func(first, max int) ([]*store.Session, error) {
		sessions, err := a.store.ListRealmSessions(r.Context(), realm.ID, a.now().UnixMilli(), first, max)
		if err != nil {
			return nil, err
		}
		samlSPs, err = a.samlServiceProviders(r.Context(), realm, sessions)
		return sessions, err
	}, func(s *store.Session) sessionRep { return withSAML(toSessionRep(s), samlSPs) })
}

func (a *App) listUserSessions(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	sessions, err := a.store.ListUserSessions(r.Context(), realm.ID, u.ID, a.now().UnixMilli())
	if err != nil {
		return err
	}
	samlSPs, err := a.samlServiceProviders(r.Context(), realm, sessions)
	if err != nil {
		return err
	}
	return httpx.List(w, sessions, func(s *store.Session) sessionRep { return withSAML(toSessionRep(s), samlSPs) })
}

// sessionsEndedRep answers the end of a session: how many sessions ended
// with it, and its type.
type sessionsEndedRep struct {
	Deleted int    `json:"deleted"`
	Type    string `json:"type"`
}

// deleteSession ends one session, by default an OAuth one as the spec
// says, with what hangs under it; the answer counts the sessions ended.
func (a *App) deleteSession(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	kind := r.URL.Query().Get("type")
	switch kind {
	case "":
		kind = store.SessionOAuth
	case store.SessionOAuth, store.SessionSSO:
	default:
		return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidParameter, Field: "type",
			Message: "type: must be oauth or sso"}
	}
	id := mux.Vars(r)["sessionId"]
	ended, err := a.store.DeleteSession(r.Context(), realm.ID, id, kind, a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound(kind + " session " + id)
	}
	if err != nil {
		return err
	}
	a.backchannelLogout(r.Context(), realm, ended)
	return httpx.OK(w, sessionsEndedRep{Deleted: len(ended), Type: kind})
}

// sessionsEnded counts the sessions a logout ended.
type sessionsEnded struct {
	Count int `json:"count"`
}

// deleteUserSessions logs the user out everywhere. Offline sessions stay,
// as in Keycloak: they end by revoking their offline token.
func (a *App) deleteUserSessions(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	ended, err := a.store.DeleteUserSessions(r.Context(), realm.ID, u.ID, a.now().UnixMilli())
	if err != nil {
		return err
	}
	a.backchannelLogout(r.Context(), realm, ended)
	return httpx.OK(w, sessionsEnded{Count: len(ended)})
}

// consentRep is Keycloak's UserConsentRepresentation.
type consentRep struct {
	ClientID        string   `json:"clientId"`
	GrantedScopes   []string `json:"grantedScopes"`
	CreatedDate     int64    `json:"createdDate"`
	LastUpdatedDate int64    `json:"lastUpdatedDate"`
}

func (a *App) listConsents(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	consents, err := a.store.ListUserConsents(r.Context(), realm.ID, u.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, consents, func(c *store.Consent) consentRep {
		return consentRep{ClientID: c.PublicClientID, GrantedScopes: c.Scopes, CreatedDate: c.GrantedAt,
			LastUpdatedDate: c.UpdatedAt}
	})
}

type consentEventRep struct {
	ClientID string   `json:"clientId"`
	Action   string   `json:"action"` // GRANT or REVOKE
	Scopes   []string `json:"scopes"`
	Time     int64    `json:"time"`
}

func (a *App) consentHistory(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	return httpx.ListPage(w, r, defaultSessionPageSize, func(first, max int) ([]*store.ConsentEvent, error) {
		return a.store.ConsentHistory(r.Context(), realm.ID, u.ID, first, max)
	}, func(e *store.ConsentEvent) consentEventRep {
		return consentEventRep{ClientID: e.PublicClientID, Action: e.Action, Scopes: e.Scopes, Time: e.Time}
	})
}

// revokeConsent withdraws a consent as Keycloak does: the client's offline
// tokens for the user are revoked and the user's sessions at the client
// end too. Only when there is neither consent nor offline token is it 404.
func (a *App) revokeConsent(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	c, err := pathChild(r, "clientId", "client", realm.ID, a.store.GetClientByClientID)
	if err != nil {
		return err
	}
	ended, err := a.store.RevokeConsent(r.Context(), realm.ID, u.ID, c.ID, a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("consent of user " + u.ID + " to client " + c.ClientID)
	}
	if err != nil {
		return err
	}
	a.backchannelLogout(r.Context(), realm, ended)
	return httpx.NoContent(w)
}

type offlineSessionRep struct {
	TokenID     string   `json:"tokenId"` // stable across refreshes: the token family
	ClientID    string   `json:"clientId"`
	Scopes      []string `json:"scopes"`
	Created     int64    `json:"created"` // Unix milliseconds, as are the times below
	Expires     int64    `json:"expires"`
	LastRefresh int64    `json:"lastRefresh,omitempty"` // absent until the token is first refreshed
}

func (a *App) listOfflineSessions(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	tokens, err := a.store.ListOfflineTokens(r.Context(), realm.ID, u.ID, a.now().UnixMilli())
	if err != nil {
		return err
	}
	return httpx.List(w, tokens, func(t *store.OfflineToken) offlineSessionRep {
		return offlineSessionRep{TokenID: t.ID, ClientID: t.PublicClientID, Scopes: t.Scopes, Created: t.CreatedAt,
			Expires: t.ExpiresAt, LastRefresh: t.LastRefreshAt}
	})
}

func (a *App) revokeOfflineSession(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	id := mux.Vars(r)["tokenId"]
	err = a.store.RevokeOfflineToken(r.Context(), realm.ID, u.ID, id, a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("offline session " + id)
	}
	if err != nil {
		return err
	}
	return httpx.NoContent(w)
}
