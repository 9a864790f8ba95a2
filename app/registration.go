package app

import (
	"context"
	"net/http"

	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/registration"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// What self-service registration (app/registration) takes of the server:
// the admin API's user representation and the mail module.

// pendingUserRep is a user awaiting approval, or just approved or
// rejected, with its registration attributes.
type pendingUserRep struct {
	userRep
	Status     string            `json:"status"`
	Attributes map[string]string `json:"attributes"`
}

func toPendingUserRep(u *store.User, status string, attrs map[string]string) any {
	return pendingUserRep{userRep: toUserRep(u), Status: status, Attributes: attrs}
}

// registrationMail is the mail module as registration sends verification
// links through it.
type registrationMail struct{ a *App }

func (m registrationMail) CanSend(realm *store.Realm) bool {
	_, err := mail.Sender(realm, false)
	return err == nil
}

func (m registrationMail) NewUserVerification(realm *store.Realm, u *store.User, custom map[string][]string, attrs map[string]string, requested string) (registration.Verification, error) {
	msgs := m.a.messages
	chosen := mail.ChosenLocale(msgs, custom[mail.UserLocaleAttribute], attrs[mail.UserLocaleAttribute])
	if chosen == "" {
		chosen = requested
	}
	return m.verification(msgs.Localizer(mail.Locale(msgs, realm, chosen)), realm, u)
}

func (m registrationMail) UserVerification(ctx context.Context, realm *store.Realm, u *store.User, own *http.Request) (registration.Verification, error) {
	l, err := m.a.mailLangs.Localizer(ctx, realm, u, own)
	if err != nil {
		return nil, err
	}
	return m.verification(l, realm, u)
}

// verification keeps a failure a nil interface.
func (m registrationMail) verification(l *ui.Localizer, realm *store.Realm, u *store.User) (registration.Verification, error) {
	v, err := m.a.mail.NewVerification(l, realm, u)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (m registrationMail) Wake() { m.a.mail.Wake() }
