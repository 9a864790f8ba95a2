package broker

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Sign-out at the upstream, for a provider with upstreamLogout (off by
// default, as the logout of Keycloak's OpenID Connect providers is a
// setting): an RP-initiated logout of an SSO session signed in through it
// sends the browser through the upstream's end_session_endpoint
// (OpenID Connect RP-Initiated Logout 1.0) with the upstream's ID token as
// id_token_hint; the upstream sends it back to logout_response, which goes
// on where the logout was going.

// pathLogoutResponse is where the upstream sends the browser back after
// signing out (Keycloak's path), under /realms/{realm}.
const pathLogoutResponse = "/broker/{alias}/endpoint/logout_response"

// logoutLifetime is how long a sign-out may take at the upstream.
const logoutLifetime = 10 * time.Minute

// LogoutResponseURL is the post_logout_redirect_uri to register at the
// provider alias.
func (s *Service) LogoutResponseURL(realm *store.Realm, alias string) string {
	return s.issuer(realm) + "/broker/" + url.PathEscape(alias) + "/endpoint/logout_response"
}

// UpstreamLogoutURL is where a browser signing out of the session b (what
// the session held of its upstream, read before it ended) goes first: the
// upstream's end_session_endpoint, when its provider is still enabled and
// signs out upstream. then is where the logout goes on to afterwards, ""
// for the signed-out page. "" when the browser goes straight on.
func (s *Service) UpstreamLogoutURL(ctx context.Context, realm *store.Realm, b *store.BrokerSession, then string) (string, error) {
	list, err := s.deps.Store.ListIdentityProviders(ctx, realm.ID)
	if err != nil {
		return "", err
	}
	var p *store.IdentityProvider
	for _, c := range list {
		if c.ID == b.ProviderID {
			p = c
		}
	}
	if p == nil || !p.Enabled {
		return "", nil
	}
	st, err := readSettings(p)
	if err != nil || !st.UpstreamLogout || st.LogoutURL == "" {
		return "", err
	}
	end, err := url.Parse(st.LogoutURL)
	if err != nil {
		return "", err
	}
	state, now := randomToken(), s.deps.Now()
	err = s.deps.Store.CreateBrokerLogout(ctx, &store.BrokerLogout{StateHash: store.HashToken(state), RealmID: realm.ID,
		ProviderID: p.ID, Redirect: then, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(logoutLifetime).UnixMilli()})
	if err != nil {
		return "", err
	}
	q := end.Query()
	q.Set("id_token_hint", b.IDToken)
	q.Set("client_id", p.ClientID)
	q.Set("post_logout_redirect_uri", s.LogoutResponseURL(realm, p.Alias))
	q.Set("state", state)
	end.RawQuery = q.Encode()
	return end.String(), nil
}

// LogoutResponse takes the browser back from the upstream's sign-out: the
// state must be one this server sent, for this provider, unused and
// unexpired. Then on to where the logout was going, or the signed-out
// page. The upstream's sign-out is its own: nothing here depends on it
// having succeeded, since the local session ended before.
func (s *Service) LogoutResponse(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ctx := r.Context()
	alias := mux.Vars(r)["alias"]
	state := r.URL.Query().Get("state")
	if state == "" {
		return errLogoutState
	}
	l, err := s.deps.Store.TakeBrokerLogout(ctx, realm.ID, store.HashToken(state), s.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return errLogoutState
	} else if err != nil {
		return err
	}
	p, err := s.deps.Store.GetIdentityProvider(ctx, realm.ID, alias)
	if errors.Is(err, store.ErrNotFound) || err == nil && p.ID != l.ProviderID {
		return errLogoutState
	} else if err != nil {
		return err
	}
	if l.Redirect == "" {
		signin.FormsLeaveServer(r.Context())
		return s.deps.Pages.Render(w, r, http.StatusOK, ui.LoggedOut(s.deps.Pages.Page("logout.done.title"), identity.RealmTitle(realm)))
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, l.Redirect, http.StatusFound)
	return nil
}
