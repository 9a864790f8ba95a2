package sessions

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

const defaultSessionPageSize = 100

// SessionRep is a session as the admin API and the account's data export
// show it.
type SessionRep struct {
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

// ToSessionRep is a session as listed, without its SAML service providers.
func ToSessionRep(s *store.Session) SessionRep {
	return SessionRep{ID: s.ID, Type: s.Kind, UserID: s.UserID, Username: s.Username, IPAddress: s.IPAddress,
		Start: s.StartedAt, LastAccess: s.LastAccessAt, Expires: s.ExpiresAt, ClientID: s.PublicClientID,
		ParentID: s.ParentID, Offline: s.Offline}
}

// ListRealmSessions answers a page of the realm's live sessions.
func (s *Service) ListRealmSessions(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var samlSPs map[string][]string
	return httpx.ListPage(w, r, defaultSessionPageSize, func(first, max int) ([]*store.Session, error) {
		sessions, err := s.deps.Store.ListRealmSessions(r.Context(), realm.ID, s.deps.Now().UnixMilli(), first, max)
		if err != nil {
			return nil, err
		}
		samlSPs, err = s.samlServiceProviders(r.Context(), realm, sessions)
		return sessions, err
	}, func(sess *store.Session) SessionRep { return withSAML(ToSessionRep(sess), samlSPs) })
}

// ListUserSessions answers the user's live sessions, offline ones too.
func (s *Service) ListUserSessions(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	sessions, err := s.deps.Store.ListUserSessions(r.Context(), realm.ID, u.ID, s.deps.Now().UnixMilli())
	if err != nil {
		return err
	}
	samlSPs, err := s.samlServiceProviders(r.Context(), realm, sessions)
	if err != nil {
		return err
	}
	return httpx.List(w, sessions, func(sess *store.Session) SessionRep { return withSAML(ToSessionRep(sess), samlSPs) })
}

// SessionsEndedRep answers the end of a session: how many sessions ended
// with it, and its type.
type SessionsEndedRep struct {
	Deleted int    `json:"deleted"`
	Type    string `json:"type"`
}

// EndSession ends one session, by default an OAuth one as the spec says,
// with what hangs under it; the answer counts the sessions ended.
func (s *Service) EndSession(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
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
	ended, err := s.deps.Store.DeleteSession(r.Context(), realm.ID, id, kind, s.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound(kind + " session " + id)
	}
	if err != nil {
		return err
	}
	s.deps.SessionsEnded(r.Context(), realm, ended)
	return httpx.OK(w, SessionsEndedRep{Deleted: len(ended), Type: kind})
}

// UserSessionsEndedRep counts the sessions a logout of a user ended.
type UserSessionsEndedRep struct {
	Count int `json:"count"`
}

// EndUserSessions logs the user out everywhere. Offline sessions stay, as
// in Keycloak: they end by revoking their offline token.
func (s *Service) EndUserSessions(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	ended, err := s.deps.Store.DeleteUserSessions(r.Context(), realm.ID, u.ID, s.deps.Now().UnixMilli())
	if err != nil {
		return err
	}
	s.deps.SessionsEnded(r.Context(), realm, ended)
	return httpx.OK(w, UserSessionsEndedRep{Count: len(ended)})
}

// ConsentRep is Keycloak's UserConsentRepresentation.
type ConsentRep struct {
	ClientID        string   `json:"clientId"`
	GrantedScopes   []string `json:"grantedScopes"`
	CreatedDate     int64    `json:"createdDate"`
	LastUpdatedDate int64    `json:"lastUpdatedDate"`
}

// ToConsentRep is a consent as the admin API and the data export show it.
func ToConsentRep(c *store.Consent) ConsentRep {
	return ConsentRep{ClientID: c.PublicClientID, GrantedScopes: c.Scopes, CreatedDate: c.GrantedAt,
		LastUpdatedDate: c.UpdatedAt}
}

// ListConsents answers the consents the user gave.
func (s *Service) ListConsents(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	consents, err := s.deps.Store.ListUserConsents(r.Context(), realm.ID, u.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, consents, ToConsentRep)
}

// ConsentEventRep is a grant or a revocation in a user's consent history.
type ConsentEventRep struct {
	ClientID string   `json:"clientId"`
	Action   string   `json:"action"` // GRANT or REVOKE
	Scopes   []string `json:"scopes"`
	Time     int64    `json:"time"`
}

// ToConsentEventRep is an event of the consent history as the admin API
// and the data export show it.
func ToConsentEventRep(e *store.ConsentEvent) ConsentEventRep {
	return ConsentEventRep{ClientID: e.PublicClientID, Action: e.Action, Scopes: e.Scopes, Time: e.Time}
}

// ConsentHistory answers a page of the user's consent history.
func (s *Service) ConsentHistory(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	return httpx.ListPage(w, r, defaultSessionPageSize, func(first, max int) ([]*store.ConsentEvent, error) {
		return s.deps.Store.ConsentHistory(r.Context(), realm.ID, u.ID, first, max)
	}, ToConsentEventRep)
}

// RevokeConsent withdraws a consent as Keycloak does: the client's offline
// tokens for the user are revoked and the user's sessions at the client
// end too. Only when there is neither consent nor offline token is it 404.
func (s *Service) RevokeConsent(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	c, err := httpx.ChildOf(r, realm.ID, "clientId", "client", s.deps.Store.GetClientByClientID)
	if err != nil {
		return err
	}
	ended, err := s.deps.Store.RevokeConsent(r.Context(), realm.ID, u.ID, c.ID, s.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("consent of user " + u.ID + " to client " + c.ClientID)
	}
	if err != nil {
		return err
	}
	s.deps.SessionsEnded(r.Context(), realm, ended)
	return httpx.NoContent(w)
}

// OfflineSessionRep is an offline token family as the admin API shows it.
type OfflineSessionRep struct {
	TokenID     string   `json:"tokenId"` // stable across refreshes: the token family
	ClientID    string   `json:"clientId"`
	Scopes      []string `json:"scopes"`
	Created     int64    `json:"created"` // Unix milliseconds, as are the times below
	Expires     int64    `json:"expires"`
	LastRefresh int64    `json:"lastRefresh,omitempty"` // absent until the token is first refreshed
}

// ListOfflineSessions answers the user's live offline tokens.
func (s *Service) ListOfflineSessions(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	tokens, err := s.deps.Store.ListOfflineTokens(r.Context(), realm.ID, u.ID, s.deps.Now().UnixMilli())
	if err != nil {
		return err
	}
	return httpx.List(w, tokens, func(t *store.OfflineToken) OfflineSessionRep {
		return OfflineSessionRep{TokenID: t.ID, ClientID: t.PublicClientID, Scopes: t.Scopes, Created: t.CreatedAt,
			Expires: t.ExpiresAt, LastRefresh: t.LastRefreshAt}
	})
}

// RevokeOfflineSession revokes one of the user's offline tokens, the
// whole family the path's {tokenId} names.
func (s *Service) RevokeOfflineSession(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	id := mux.Vars(r)["tokenId"]
	err = s.deps.Store.RevokeOfflineToken(r.Context(), realm.ID, u.ID, id, s.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("offline session " + id)
	}
	if err != nil {
		return err
	}
	return httpx.NoContent(w)
}
