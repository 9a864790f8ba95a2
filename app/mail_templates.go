package app

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"regexp"
	texttemplate "text/template"

	"github.com/idenplane/idenplane/store"
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
// bodies from html/template (escaping every value) and text/template.
type mailTemplate struct {
	name    string
	subject *texttemplate.Template
	html    *htmltemplate.Template
	text    *texttemplate.Template
}

func newMailTemplate(name, subject, html, text string) mailTemplate {
	return mailTemplate{
		name:    name,
		subject: texttemplate.Must(texttemplate.New(name + ".subject").Parse(subject)),
		html:    htmltemplate.Must(htmltemplate.New(name + ".html").Parse(mailLayoutHTML + html)),
		text:    texttemplate.Must(texttemplate.New(name + ".text").Parse(text)),
	}
}

// mailLayoutHTML is the frame of every HTML mail: tables and inline
// styles, as mail clients ignore style sheets.
const mailLayoutHTML = `{{define "button"}}<table role="presentation" cellspacing="0" cellpadding="0"><tr>
<td style="border-radius:6px;background:{{.Primary}}"><a href="{{.Link}}" style="display:inline-block;padding:12px 20px;color:#ffffff;text-decoration:none;font-weight:600">{{template "action" .}}</a></td>
</tr></table>{{end}}`

const verifyEmailHTML = `{{define "action"}}Verify email address{{end}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Verify your email address</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328">
<table role="presentation" width="100%" cellspacing="0" cellpadding="0"><tr><td align="center">
<table role="presentation" width="560" cellspacing="0" cellpadding="24" style="max-width:560px;background:#ffffff;border-radius:8px">
<tr><td>
<h1 style="font-size:20px;margin:0 0 16px">{{.Realm}}</h1>
<p>Hello {{.Name}},</p>
<p>Please confirm that this is your email address for your {{.Realm}} account.</p>
{{template "button" .}}
<p style="font-size:13px;color:#57606a">The link works once, for {{.Hours}} hours. If the button does not work, copy this address into your browser:<br>
<a href="{{.Link}}" style="color:#57606a;word-break:break-all">{{.Link}}</a></p>
<p style="font-size:13px;color:#57606a">If you did not expect this message, you can ignore it.</p>
</td></tr></table></td></tr></table>
</body></html>
`

const verifyEmailText = `Hello {{.Name}},

Please confirm that this is your email address for your {{.Realm}} account by opening this link:

{{.Link}}

The link works once, for {{.Hours}} hours. If you did not expect this message, you can ignore it.

-- 
{{.Realm}}
`

var verifyEmailMail = newMailTemplate("verify-email", "Verify your email address for {{.Realm}}", verifyEmailHTML, verifyEmailText)

// render fills the template for to with d: a mailData, or a struct that
// embeds one.
func (t mailTemplate) render(to string, d any) (mailMessage, error) {
	var subject, html, text bytes.Buffer
	if err := t.subject.Execute(&subject, d); err != nil {
		return mailMessage{}, fmt.Errorf("render mail subject: %w", err)
	}
	if err := t.html.Execute(&html, d); err != nil {
		return mailMessage{}, fmt.Errorf("render mail html: %w", err)
	}
	if err := t.text.Execute(&text, d); err != nil {
		return mailMessage{}, fmt.Errorf("render mail text: %w", err)
	}
	return mailMessage{To: to, Template: t.name, Subject: subject.String(), HTML: html.String(), Text: text.String()}, nil
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
