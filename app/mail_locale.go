package app

import (
	"context"
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The language of a mail: the recipient's own choice, the user attribute
// locale as Keycloak keeps it; else the language of the request the
// recipient made that caused the mail (ui_locales, the locale cookie,
// Accept-Language, as the pages negotiate it); else the realm's. A mail
// an administrator causes does not take the administrator's language.

// userLocaleAttribute is the user attribute naming the user's language.
const userLocaleAttribute = "locale"

// mailLocalizer is the language of a mail to u. r is the request u made
// that caused it, nil when the mail is not the answer to one of u's own.
func (a *App) mailLocalizer(ctx context.Context, realm *store.Realm, u *store.User, r *http.Request) (*ui.Localizer, error) {
	tag, err := a.userLocale(ctx, u)
	if err != nil {
		return nil, err
	}
	if tag == "" && r != nil {
		tag = a.requestLocale(r)
	}
	return a.messages.Localizer(mailLocale(a.messages, realm, tag)), nil
}

// userLocale is the catalogue matching u's locale attribute: a custom
// attribute (the admin and account APIs), else one stored at
// registration or by brokering; "" when u has none a catalogue matches.
func (a *App) userLocale(ctx context.Context, u *store.User) (string, error) {
	custom, err := a.store.UserCustomAttributes(ctx, u.ID)
	if err != nil {
		return "", err
	}
	plain, err := a.store.UserAttributes(ctx, u.ID)
	if err != nil {
		return "", err
	}
	return a.chosenLocale(custom[userLocaleAttribute], plain[userLocaleAttribute]), nil
}

// chosenLocale is the catalogue matching a user's locale attribute, held
// as a custom attribute's values or a plain attribute's value; "" when
// none matches.
func (a *App) chosenLocale(custom []string, plain string) string {
	return a.messages.Preferred(ui.Offer{}, append(slices.Clone(custom), plain), "")
}

// mailLocale is tag, the language the recipient or their request chose,
// or when there is none the realm's default among those it offers.
func mailLocale(c *ui.Catalogues, realm *store.Realm, tag string) string {
	if tag != "" {
		return tag
	}
	return c.Negotiate(localeOffer(realm), nil, "")
}
