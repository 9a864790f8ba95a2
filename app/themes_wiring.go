package app

import (
	"context"
	"fmt"
	"time"

	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// previewMail renders, for a theme's preview (themes.Deps.PreviewMail),
// each mail the server sends as it makes it, with sample values, then
// as the email theme t has it.
func previewMail(messages *ui.Catalogues, baseURL string) func(ctx context.Context, realm *store.Realm, kind, tag string,
	t *mailtheme.Theme) (string, string, string, error) {
	return func(ctx context.Context, realm *store.Realm, kind, tag string, t *mailtheme.Theme) (string, string, string, error) {
		l := messages.Localizer(tag)
		if t != nil {
			l = l.WithOverrides(t.Messages[l.Tag])
		}
		u := &store.User{Username: "alex", FirstName: "Alex", Email: "alex@example.com"}
		link := baseURL + "/realms/" + realm.Name + "/preview"
		var msg mail.Message
		var err error
		switch kind {
		case mail.VerifyEmail.Name:
			msg, err = mail.VerifyEmail.Render(l, realm, u, link)
		case resetPasswordMail.Name:
			msg, err = resetPasswordMail.Render(l, realm, u, link)
		case mail.EmailCodeTemplate:
			msg, err = mail.EmailCode(l, realm, u, "493027", 10*time.Minute)
		case orgInvitationTemplate:
			msg, err = orgInvitationMail(l, realm, orgs.InvitationMail{To: u.Email, Organization: "Acme Research", Role: "member",
				Link: link, Expires: time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)})
		case testMailTemplate:
			msg, err = deliveryTestMail(l, realm, "smtp", u.Email)
		default:
			return "", "", "", fmt.Errorf("no preview of mail %s", kind)
		}
		if err != nil {
			return "", "", "", err
		}
		if msg, err = mail.Apply(t, msg); err != nil {
			return "", "", "", err
		}
		return msg.Subject, msg.HTML, msg.Text, nil
	}
}
