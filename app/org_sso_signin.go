package app

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/idenplane/idenplane/store"
)

// Home-realm discovery: an email typed at the sign-in page whose domain an
// organization has verified, and whose SSO connection says so, signs in at
// that organization's identity provider instead of with a password.

// homeRealmURL is the provider's login for ar when username is an email of
// such a domain; "" when it is not, and the password sign-in goes on. The
// sign-in page asks it of what is typed, and of the request's login_hint
// before it shows the form.
func (a *App) homeRealmURL(ctx context.Context, realm *store.Realm, username string, ar *store.AuthRequest) (string, error) {
	at := strings.LastIndexByte(username, '@')
	if at < 1 || at == len(username)-1 {
		return "", nil
	}
	domain := strings.TrimSuffix(strings.ToLower(username[at+1:]), ".")
	d, err := a.store.DiscoverSSOConnection(ctx, realm.ID, domain)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	// The email goes on to the provider as its login_hint, as Keycloak
	// passes it to an organization's provider.
	return a.broker.LoginURL(realm, d.Connection.ProviderAlias, ar.ID) + "&" + url.Values{"login_hint": {username}}.Encode(), nil
}
