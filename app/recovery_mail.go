package app

// The password reset mail, in the frame of the verification mail.

const resetPasswordHTML = `{{define "title"}}{{t "mail.reset.title"}}{{end}}{{define "action"}}{{t "mail.reset.action"}}{{end}}{{define "body"}}
<p>{{t "mail.greeting" .Name}}</p>
<p>{{t "mail.reset.intro" .Realm}}</p>
{{template "button" .}}
<p style="font-size:13px;color:#57606a">{{t "mail.reset.expiry" .Hours}} {{t "mail.linkFallback"}}<br>
<a href="{{.Link}}" style="color:#57606a;word-break:break-all" dir="ltr">{{.Link}}</a></p>
<p style="font-size:13px;color:#57606a">{{t "mail.reset.ignore"}}</p>
{{end}}`

const resetPasswordText = `{{t "mail.greeting" .Name}}

{{t "mail.reset.introLink" .Realm}}

{{.Link}}

{{t "mail.reset.expiry" .Hours}} {{t "mail.reset.ignore"}}

-- 
{{.Realm}}
`

var resetPasswordMail = newMailTemplate("reset-password", `{{t "mail.reset.subject" .Realm}}`, resetPasswordHTML, resetPasswordText)
