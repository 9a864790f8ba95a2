package mail

import (
	"context"
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The language of a mail: the recipient's own choice, the user attribute
// locale as Keycloak keeps it; else the language of the request the
// recipient made that caused the mail (ui_locales, the locale cookie,
// Accept-Language, as the pages negotiate it); else the realm's. A mail
// an administrator causes does not take the administrator's language.

// UserLocaleAttribute is the user attribute naming the user's language.
const UserLocaleAttribute = "locale"

// Languages picks the language of mails from the store's users and
// the catalogues.
type Languages struct {
	Store    *store.Store
	Messages *ui.Catalogues
	// Themes, when set, adds the texts of the realm's email theme to the
	// catalogues'.
	Themes ThemeSource
}

// Localizer is the language of a mail to u. own is the request u made
// that caused it, nil when the mail is not the answer to one of u's own.
func (m Languages) Localizer(ctx context.Context, realm *store.Realm, u *store.User, own *http.Request) (*ui.Localizer, error) {
	tag, err := m.userLocale(ctx, u)
	if err != nil {
		return nil, err
	}
	if tag == "" && own != nil {
		tag = signin.RequestLocale(m.Messages, own)
	}
	return m.Tagged(ctx, realm, tag), nil
}

// Tagged is the language of a mail of the realm in tag, or in the
// realm's own when tag is "", with the realm's email theme's texts.
func (m Languages) Tagged(ctx context.Context, realm *store.Realm, tag string) *ui.Localizer {
	l := m.Messages.Localizer(Locale(m.Messages, realm, tag))
	if m.Themes == nil {
		return l
	}
	if t := m.Themes.EmailTheme(ctx, realm); t != nil {
		return l.WithOverrides(t.Messages[l.Tag])
	}
	return l
}

// userLocale is the catalogue matching u's locale attribute: a custom
// attribute (the admin and account APIs), else one stored at
// registration or by brokering; "" when u has none a catalogue matches.
func (m Languages) userLocale(ctx context.Context, u *store.User) (string, error) {
	custom, err := m.Store.UserCustomAttributes(ctx, u.ID)
	if err != nil {
		return "", err
	}
	plain, err := m.Store.UserAttributes(ctx, u.ID)
	if err != nil {
		return "", err
	}
	return ChosenLocale(m.Messages, custom[UserLocaleAttribute], plain[UserLocaleAttribute]), nil
}

// Invitee is the language of an invitation to address: that of the
// realm's user with the address when there is one, else the realm's. The
// request that invites is an administrator's, not the invitee's.
func (m Languages) Invitee(ctx context.Context, tx *store.Store, realm *store.Realm, address string) (*ui.Localizer, error) {
	users, _, err := tx.ListUsers(ctx, realm.ID, store.UserFilter{Email: address, Exact: true, Limit: 1})
	if err != nil || len(users) == 0 {
		return m.Tagged(ctx, realm, ""), err
	}
	return m.Localizer(ctx, realm, users[0], nil)
}

// ChosenLocale is the catalogue matching a user's locale attribute, held
// as a custom attribute's values or a plain attribute's value; "" when
// none matches.
func ChosenLocale(c *ui.Catalogues, custom []string, plain string) string {
	return c.Preferred(ui.Offer{}, append(slices.Clone(custom), plain), "")
}

// Locale is tag, the language the recipient or their request chose,
// or when there is none the realm's default among those it offers.
func Locale(c *ui.Catalogues, realm *store.Realm, tag string) string {
	if tag != "" {
		return tag
	}
	return c.Negotiate(signin.LocaleOffer(realm), nil, "")
}
