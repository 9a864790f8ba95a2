package app

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// mailPlaceholder is a catalogue placeholder left unfilled.
var mailPlaceholder = regexp.MustCompile(`\{[0-9]+\}`)

// Every mail renders in every catalogue language: its keys all present in
// that catalogue, the subject translated, every placeholder filled, the
// values escaped in the HTML, and the html element carrying the language
// and, for Arabic, the right-to-left direction.
func TestMailsInEveryLanguage(t *testing.T) {
	realm := &store.Realm{Name: "acme", DisplayName: `Acme <b>&</b> Co`}
	u := &store.User{Username: "alice", FirstName: "Alice", Email: "alice@example.test"}
	const link = "https://id.example.test/realms/acme/x?token=abc&n=1"
	mails := map[string]func(l *ui.Localizer) (mail.Message, error){
		"verify-email":   func(l *ui.Localizer) (mail.Message, error) { return mail.VerifyEmail.Render(l, realm, u, link) },
		"reset-password": func(l *ui.Localizer) (mail.Message, error) { return resetPasswordMail.Render(l, realm, u, link) },
		"test":           func(l *ui.Localizer) (mail.Message, error) { return deliveryTestMail(l, realm, "smtp", u.Email) },
		"email-code": func(l *ui.Localizer) (mail.Message, error) {
			return mail.EmailCode(l, realm, u, "042137", 5*time.Minute)
		},
		"organization-invitation": func(l *ui.Localizer) (mail.Message, error) {
			return orgInvitationMail(l, realm, orgs.InvitationMail{To: u.Email, Organization: "Alice Corp", Role: "member",
				Link: link, Expires: time.Date(2030, 1, 2, 15, 4, 0, 0, time.UTC)})
		},
	}
	english := map[string]mail.Message{}
	for name, render := range mails {
		m, err := render(testCatalogues.Localizer(ui.DefaultLocale))
		if err != nil {
			t.Fatal(err)
		}
		english[name] = m
	}

	var mailKeys []string
	for _, k := range testCatalogues.Keys(ui.DefaultLocale) {
		if strings.HasPrefix(k, "mail.") {
			mailKeys = append(mailKeys, k)
		}
	}
	if len(mailKeys) < 20 {
		t.Fatalf("only %d mail keys in English", len(mailKeys))
	}
	tags := testCatalogues.Tags()
	for _, want := range []string{"en", "de", "fr", "es", "it", "nl", "pl", "pt-BR", "ja", "zh-CN", "ar"} {
		if !slices.Contains(tags, want) {
			t.Errorf("no %s catalogue among %v", want, tags)
		}
	}
	for _, tag := range tags {
		t.Run(tag, func(t *testing.T) {
			held := testCatalogues.Keys(tag)
			for _, k := range mailKeys {
				if !slices.Contains(held, k) {
					t.Errorf("%s lacks %s", tag, k)
				}
			}
			l := testCatalogues.Localizer(tag)
			for name, render := range mails {
				m, err := render(l)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if tag != ui.DefaultLocale && m.Subject == english[name].Subject {
					t.Errorf("%s: subject %q is English", name, m.Subject)
				}
				for part, s := range map[string]string{"subject": m.Subject, "html": m.HTML, "text": m.Text} {
					if p := mailPlaceholder.FindString(s); p != "" {
						t.Errorf("%s %s: %s left in %q", name, part, p, s)
					}
				}
				if !strings.Contains(m.Subject, realm.DisplayName) || !strings.Contains(m.Text, realm.DisplayName) {
					t.Errorf("%s: the realm's name is missing: %q %q", name, m.Subject, m.Text)
				}
				if strings.Contains(m.HTML, "<b>&</b>") || !strings.Contains(m.HTML, html.EscapeString(realm.DisplayName)) {
					t.Errorf("%s: the realm's name is not escaped in %s", name, m.HTML)
				}
				dir := "ltr"
				if tag == "ar" {
					dir = "rtl"
				}
				if !strings.Contains(m.HTML, `<html lang="`+tag+`" dir="`+dir+`">`) {
					t.Errorf("%s: html element of %s", name, m.HTML)
				}
				if name == "email-code" && (!strings.Contains(m.Text, "042137") || !strings.Contains(m.HTML, "042137") ||
					!strings.Contains(m.Text, "Alice")) {
					t.Errorf("%s: code or name missing: %s\n%s", name, m.Text, m.HTML)
				}
				if name != "test" && name != "email-code" && (!strings.Contains(m.Text, link) || !strings.Contains(m.Text, "Alice") ||
					!strings.Contains(m.HTML, `href="`+html.EscapeString(link)+`"`)) {
					t.Errorf("%s: link or name missing: %s\n%s", name, m.Text, m.HTML)
				}
			}
		})
	}
}
