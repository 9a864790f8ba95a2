package app

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"regexp"
	texttemplate "text/template"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// mailData is what every mail template sees.
type mailData struct {
	Realm   string // the realm's display name, or its name
	Name    string // how to greet the recipient
	Link    string
	Hours   int    // how long the link works
	Primary string // the theme's primary colour, for the button
}

// mailTemplate is one kind of mail: its subject, and its HTML and text
// bodies from html/template (escaping every value) and text/template. The
// words come from the message catalogues, through the function t; lang
// and dir are the language's tag and direction.
type mailTemplate struct {
	name    string
	subject *texttemplate.Template
	html    *htmltemplate.Template
	text    *texttemplate.Template
}

// mailFuncs are the functions the templates call, here without a
// language: render binds them to one.
func mailFuncs(l *ui.Localizer) map[string]any {
	return map[string]any{
		"t":    func(key string, args ...any) string { return l.T(key, args...) },
		"lang": func() string { return l.Tag },
		"dir":  l.Dir,
	}
}

func newMailTemplate(name, subject, html, text string) mailTemplate {
	stub := mailFuncs(&ui.Localizer{})
	return mailTemplate{
		name:    name,
		subject: texttemplate.Must(texttemplate.New(name + ".subject").Funcs(stub).Parse(subject)),
		html:    htmltemplate.Must(htmltemplate.New(name + ".html").Funcs(stub).Parse(mailLayoutHTML + html)),
		text:    texttemplate.Must(texttemplate.New(name + ".text").Funcs(stub).Parse(text)),
	}
}

// mailLayoutHTML is the frame of every HTML mail: tables and inline
// styles, as mail clients ignore style sheets. Each mail defines
// "title", "action" (the button's words) and "body".
const mailLayoutHTML = `{{define "button"}}<table role="presentation" cellspacing="0" cellpadding="0"><tr>
<td style="border-radius:6px;background:{{.Primary}}"><a href="{{.Link}}" style="display:inline-block;padding:12px 20px;color:#ffffff;text-decoration:none;font-weight:600">{{template "action" .}}</a></td>
</tr></table>{{end}}<!doctype html>
<html lang="{{lang}}" dir="{{dir}}"><head><meta charset="utf-8"><title>{{template "title" .}}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328">
<table role="presentation" width="100%" cellspacing="0" cellpadding="0"><tr><td align="center">
<table role="presentation" width="560" cellspacing="0" cellpadding="24" style="max-width:560px;background:#ffffff;border-radius:8px">
<tr><td style="text-align:start">
<h1 style="font-size:20px;margin:0 0 16px">{{.Realm}}</h1>
{{template "body" .}}
</td></tr></table></td></tr></table>
</body></html>
`

const verifyEmailHTML = `{{define "title"}}{{t "mail.verify.title"}}{{end}}{{define "action"}}{{t "mail.verify.action"}}{{end}}{{define "body"}}
<p>{{t "mail.greeting" .Name}}</p>
<p>{{t "mail.verify.intro" .Realm}}</p>
{{template "button" .}}
<p style="font-size:13px;color:#57606a">{{t "mail.verify.expiry" .Hours}} {{t "mail.linkFallback"}}<br>
<a href="{{.Link}}" style="color:#57606a;word-break:break-all" dir="ltr">{{.Link}}</a></p>
<p style="font-size:13px;color:#57606a">{{t "mail.ignore"}}</p>
{{end}}`

const verifyEmailText = `{{t "mail.greeting" .Name}}

{{t "mail.verify.introLink" .Realm}}

{{.Link}}

{{t "mail.verify.expiry" .Hours}} {{t "mail.ignore"}}

-- 
{{.Realm}}
`

var verifyEmailMail = newMailTemplate("verify-email", `{{t "mail.verify.subject" .Realm}}`, verifyEmailHTML, verifyEmailText)

// render fills the template for to with d (a mailData, or a struct that
// embeds one) in the language of l.
func (t mailTemplate) render(to string, l *ui.Localizer, d any) (mailMessage, error) {
	funcs := mailFuncs(l)
	var subject, html, text bytes.Buffer
	if err := texttemplate.Must(t.subject.Clone()).Funcs(funcs).Execute(&subject, d); err != nil {
		return mailMessage{}, fmt.Errorf("render mail subject: %w", err)
	}
	h, err := t.html.Clone()
	if err != nil {
		return mailMessage{}, fmt.Errorf("render mail html: %w", err)
	}
	if err := h.Funcs(funcs).Execute(&html, d); err != nil {
		return mailMessage{}, fmt.Errorf("render mail html: %w", err)
	}
	if err := texttemplate.Must(t.text.Clone()).Funcs(funcs).Execute(&text, d); err != nil {
		return mailMessage{}, fmt.Errorf("render mail text: %w", err)
	}
	return mailMessage{To: to, Template: t.name, Subject: subject.String(), HTML: html.String(), Text: text.String()}, nil
}

// mailLocalizer is the language of a realm's mails: its default.
func (a *App) mailLocalizer(realm *store.Realm) *ui.Localizer {
	return a.messages.Localizer(a.messages.Negotiate(localeOffer(realm), nil, ""))
}

var hexColor = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// newMailData fills in the realm's part: its title and theme colour.
func newMailData(realm *store.Realm, name, link string, hours int) mailData {
	d := mailData{Realm: realmTitle(realm), Name: name, Link: link, Hours: hours, Primary: "#2f6fed"}
	if c, ok := realm.Theme["primaryColor"].(string); ok && hexColor.MatchString(c) {
		d.Primary = c
	}
	return d
}

// greeting is how a mail addresses the user.
func greeting(u *store.User) string {
	switch {
	case u.FirstName != "":
		return u.FirstName
	case u.Username != "":
		return u.Username
	}
	return u.Email
}
