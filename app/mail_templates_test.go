package app

import (
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// TestMailsSpeakEveryLanguage: each mail renders in every catalogue's
// language with no key left untranslated, its html element naming the
// language and its direction (dir="rtl" for Arabic, Hebrew…).
func TestMailsSpeakEveryLanguage(t *testing.T) {
	data := newMailData(&store.Realm{Name: "acme", DisplayName: "Acme Corp"}, "Alice", "https://idp.example/x?token=t", 24)
	for _, tag := range testCatalogues.Tags() {
		l := testCatalogues.Localizer(tag)
		for _, tc := range []struct {
			tmpl mailTemplate
			data any
		}{
			{verifyEmailMail, data},
			{resetPasswordMail, data},
			{orgInvitationMail, orgInvitationData{mailData: data, Organization: "Globex", Role: "member", Until: "Mon, 30 Nov 2026 10:00:00 UTC"}},
		} {
			m, err := tc.tmpl.render("alice@example.test", l, tc.data)
			if err != nil {
				t.Fatalf("%s %s: %v", tag, tc.tmpl.name, err)
			}
			for part, text := range map[string]string{"subject": m.Subject, "html": m.HTML, "text": m.Text} {
				if strings.Contains(text, "mail.") || !strings.Contains(text, "Acme Corp") && part != "subject" {
					t.Errorf("%s %s %s: %s", tag, tc.tmpl.name, part, text)
				}
			}
			if want := `<html lang="` + tag + `" dir="` + ui.Direction(tag) + `">`; !strings.Contains(m.HTML, want) {
				t.Errorf("%s %s: no %s in %s", tag, tc.tmpl.name, want, m.HTML)
			}
		}
	}
	m, err := verifyEmailMail.render("alice@example.test", testCatalogues.Localizer("de"), data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Bestätigen Sie Ihre E-Mail-Adresse für Acme Corp" || !strings.HasPrefix(m.Text, "Hallo Alice,") {
		t.Fatalf("German mail: %q %q", m.Subject, m.Text)
	}
}
