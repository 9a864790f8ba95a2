package mail

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"regexp"
	texttemplate "text/template"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Content is what one mail says, in one language. Every text comes
// from the message catalogues (the mail.* keys); the frame around it is
// shared by every kind of mail.
type Content struct {
	Lang    string // the catalogue's tag, for the html element
	Dir     string // rtl for a right-to-left language, else ltr
	Subject string
	Realm   string // the realm's display name, or its name
	Primary string // the theme's primary colour, for the button
	// PrimaryText is the colour of the button's text.
	PrimaryText string
	// Logo is the absolute address of the email theme's logo; "" for none.
	Logo     string
	Greeting string
	Body     []string // paragraphs
	Action   string   // the button's text
	Link     string   // none for a mail without one
	CopyLink string   // the advice shown with the link spelled out
	Notes    []string // the small print below the link
	// Vars are the values of the mail's own variables, by name, for the
	// templates of an email theme (ui/mailtheme lists them per kind).
	Vars map[string]string
}

// rtlLanguages are the catalogue languages written right to left.
var rtlLanguages = map[string]bool{"ar": true, "fa": true, "he": true, "ur": true}

var hexColor = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// NewContent starts a mail in l's language with the realm's part:
// its title and theme colour.
func NewContent(l *ui.Localizer, realm *store.Realm) Content {
	c := Content{Lang: l.Tag, Dir: "ltr", Realm: identity.RealmTitle(realm), Primary: "#2f6fed", PrimaryText: "#ffffff",
		CopyLink: l.T("mail.common.copyLink")}
	if rtlLanguages[l.Tag] {
		c.Dir = "rtl"
	}
	if p, ok := realm.Theme["primaryColor"].(string); ok && hexColor.MatchString(p) {
		c.Primary = p
	}
	return c
}

// mailHTML is the frame of every HTML mail: tables and inline styles, as
// mail clients ignore style sheets. html/template escapes every value.
var mailHTML = htmltemplate.Must(htmltemplate.New("mail.html").Parse(`<!doctype html>
<html lang="{{.Lang}}" dir="{{.Dir}}"><head><meta charset="utf-8"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328">
<table role="presentation" width="100%" cellspacing="0" cellpadding="0"><tr><td align="center">
<table role="presentation" width="560" cellspacing="0" cellpadding="24" style="max-width:560px;background:#ffffff;border-radius:8px">
<tr><td>
{{with .Logo}}<img src="{{.}}" alt="" height="40" style="display:block;height:40px;max-width:200px;margin:0 0 12px">
{{end}}<h1 style="font-size:20px;margin:0 0 16px">{{.Realm}}</h1>
{{with .Greeting}}<p>{{.}}</p>
{{end}}{{range .Body}}<p>{{.}}</p>
{{end}}{{if .Link}}<table role="presentation" cellspacing="0" cellpadding="0"><tr>
<td style="border-radius:6px;background:{{.Primary}}"><a href="{{.Link}}" style="display:inline-block;padding:12px 20px;color:{{.PrimaryText}};text-decoration:none;font-weight:600">{{.Action}}</a></td>
</tr></table>
<p style="font-size:13px;color:#57606a">{{.CopyLink}}<br>
<a href="{{.Link}}" style="color:#57606a;word-break:break-all">{{.Link}}</a></p>
{{end}}{{range .Notes}}<p style="font-size:13px;color:#57606a">{{.}}</p>
{{end}}</td></tr></table></td></tr></table>
</body></html>
`))

// mailText is the text part of every mail.
var mailText = texttemplate.Must(texttemplate.New("mail.text").Parse(`{{with .Greeting}}{{.}}

{{end}}{{range .Body}}{{.}}

{{end}}{{with .Link}}{{.}}

{{end}}{{range .Notes}}{{.}}
{{end}}{{if .Notes}}
{{end}}-- 
{{.Realm}}
`))

// Render is the mail to to, recorded in the outbox as template.
func (c Content) Render(template, to string) (Message, error) {
	var html, text bytes.Buffer
	if err := mailHTML.Execute(&html, c); err != nil {
		return Message{}, fmt.Errorf("render mail html: %w", err)
	}
	if err := mailText.Execute(&text, c); err != nil {
		return Message{}, fmt.Errorf("render mail text: %w", err)
	}
	kept := c
	return Message{To: to, Template: template, Subject: c.Subject, HTML: html.String(), Text: text.String(), content: &kept}, nil
}

// LinkMail is a mail carrying a single-use link to a user. Its texts are
// the catalogue keys <key>.subject, .greeting, .intro, .action, .expiry
// and .ignore.
type LinkMail struct {
	Name     string // the template name the outbox records
	Key      string
	Lifetime time.Duration // how long the link works
	Unit     time.Duration // what .expiry counts the lifetime in
}

// Render is the mail to u, in l's language, carrying link.
func (m LinkMail) Render(l *ui.Localizer, realm *store.Realm, u *store.User, link string) (Message, error) {
	c := NewContent(l, realm)
	c.Subject = l.T(m.Key+".subject", c.Realm)
	c.Greeting = l.T(m.Key+".greeting", Greeting(u))
	c.Body = []string{l.T(m.Key+".intro", c.Realm)}
	c.Action, c.Link = l.T(m.Key+".action"), link
	c.Notes = []string{l.T(m.Key+".expiry", int(m.Lifetime/m.Unit)), l.T(m.Key + ".ignore")}
	c.Vars = map[string]string{"Name": Greeting(u), "Email": u.Email, "Link": link, "Greeting": c.Greeting, "Intro": c.Body[0],
		"Action": c.Action, "Expiry": c.Notes[0], "Ignore": c.Notes[1], "CopyLink": c.CopyLink}
	return c.Render(m.Name, u.Email)
}

// Greeting is how a mail addresses the user.
func Greeting(u *store.User) string {
	switch {
	case u.FirstName != "":
		return u.FirstName
	case u.Username != "":
		return u.Username
	}
	return u.Email
}

// EmailCodeTemplate is the template name the outbox records for a sign-in's
// one-time code; its texts are the mail.emailCode.* keys.
const EmailCodeTemplate = "email-code"

// EmailCode is the mail to u, in l's language, carrying a sign-in's
// one-time code, valid for lifetime.
func EmailCode(l *ui.Localizer, realm *store.Realm, u *store.User, code string, lifetime time.Duration) (Message, error) {
	c := NewContent(l, realm)
	c.Subject = l.T("mail.emailCode.subject", c.Realm)
	c.Greeting = l.T("mail.emailCode.greeting", Greeting(u))
	c.Body = []string{l.T("mail.emailCode.intro", c.Realm), l.T("mail.emailCode.code", code)}
	c.Notes = []string{l.T("mail.emailCode.expiry", int(lifetime/time.Minute)), l.T("mail.emailCode.ignore")}
	c.Vars = map[string]string{"Name": Greeting(u), "Email": u.Email, "Greeting": c.Greeting, "Intro": c.Body[0],
		"Code": code, "CodeLine": c.Body[1], "Expiry": c.Notes[0], "Ignore": c.Notes[1]}
	return c.Render(EmailCodeTemplate, u.Email)
}
