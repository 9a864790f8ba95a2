// Package sessions is the admin API of a realm's sessions, of a user's
// consents and of a user's offline sessions: listing them, and ending them
// for good with the tokens they carry. Clients learn of the ended sessions
// by back-channel logout, which stays with the token endpoints in app.
package sessions

import (
	"context"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the sessions area uses.
type Deps struct {
	Store *store.Store
	Now   func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// SessionsEnded is told of the sessions an end of sessions or a
	// revoked consent ended, for their back-channel logouts.
	SessionsEnded func(context.Context, *store.Realm, []*store.Session)
}

// Service is the sessions area: the admin API's handlers.
type Service struct{ deps Deps }

// New builds the sessions area.
func New(d Deps) *Service { return &Service{deps: d} }

// user loads the realm and the user named by {userId} in the path.
func (s *Service) user(r *http.Request) (*store.Realm, *store.User, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	u, err := httpx.ChildOf(r, realm.ID, "userId", "user", s.deps.Store.GetUser)
	return realm, u, err
}

// samlServiceProviders are the SAML service providers each SSO session of
// sessions signed in to, by session ID.
func (s *Service) samlServiceProviders(ctx context.Context, realm *store.Realm, sessions []*store.Session) (map[string][]string, error) {
	var ids []string
	for _, sess := range sessions {
		if sess.Kind == store.SessionSSO {
			ids = append(ids, sess.ID)
		}
	}
	return s.deps.Store.SAMLServiceProvidersOfSessions(ctx, realm.ID, ids)
}

// withSAML is a session as listed, with its SAML service providers.
func withSAML(rep SessionRep, samlSPs map[string][]string) SessionRep {
	rep.SAMLServiceProviders = samlSPs[rep.ID]
	return rep
}
