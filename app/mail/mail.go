package mail

import (
	"context"
	"fmt"
	"net/mail"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Message is one email, with an HTML and a plain-text body: clients
// that show no HTML, and spam filters, want the text.
type Message struct {
	From string // an address, optionally with a display name
	To   string // a bare address
	// Template names the kind of mail (verify-email, reset-password, ...):
	// the outbox keeps it after the bodies are gone.
	Template string
	Subject  string
	HTML     string
	Text     string
	// content is what the mail was rendered from (Content.Render), for an
	// email theme to render it again (Apply); nil for a mail made otherwise.
	content *Content
}

// mailer delivers a message through one provider. Errors name what went
// wrong in words safe to show an administrator: never a password or key.
type mailer interface {
	send(ctx context.Context, m Message) error
}

// ConfigError is a realm's email settings that cannot work: no
// attempt was made. Its text says what to set, and is safe to show.
type ConfigError string

func (e ConfigError) Error() string { return string(e) }

func configErrorf(format string, args ...any) error {
	return ConfigError(fmt.Sprintf(format, args...))
}

// errNoSender: the realm has no sender address to put in From.
var errNoSender error = ConfigError("the realm has no sender address: set smtpFrom (or emailProviderConfig.from)")

// mailerFor picks the realm's configured provider.
func (s *Service) mailerFor(realm *store.Realm) (mailer, error) {
	switch realm.EmailProvider {
	case "", "smtp":
		m, err := s.smtpMailerFor(realm)
		if err != nil {
			return nil, err
		}
		return m, nil
	case "resend", "sendgrid", "mailgun", "postmark":
		m, err := httpMailerFor(realm.EmailProvider, realm.EmailProviderConfig, s.deps.Client)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, configErrorf("unknown email provider %q", realm.EmailProvider)
}

// Sender is the From of the realm's mail: emailProviderConfig's "from"
// when an HTTP provider's verified sender differs from the SMTP one, else
// smtpFrom. The realm's display name is added when the address has none.
func Sender(realm *store.Realm, smtpOnly bool) (string, error) {
	from := realm.SMTPFrom
	if f, ok := realm.EmailProviderConfig["from"].(string); ok && f != "" && !smtpOnly && realm.EmailProvider != "smtp" {
		from = f
	}
	if from == "" {
		return "", errNoSender
	}
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return "", configErrorf("the sender address %q is not an email address", from)
	}
	if addr.Name == "" {
		addr.Name = identity.RealmTitle(realm)
	}
	return addr.String(), nil
}

// bareAddress is the address part of "Name <addr>" (or addr itself).
func bareAddress(s string) (string, error) {
	addr, err := mail.ParseAddress(s)
	if err != nil {
		return "", fmt.Errorf("%q is not an email address", s)
	}
	return addr.Address, nil
}
