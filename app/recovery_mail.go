package app

// The password reset mail, in the frame of the verification mail.

const resetPasswordHTML = `{{define "action"}}Choose a new password{{end}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Reset your password</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328">
<table role="presentation" width="100%" cellspacing="0" cellpadding="0"><tr><td align="center">
<table role="presentation" width="560" cellspacing="0" cellpadding="24" style="max-width:560px;background:#ffffff;border-radius:8px">
<tr><td>
<h1 style="font-size:20px;margin:0 0 16px">{{.Realm}}</h1>
<p>Hello {{.Name}},</p>
<p>Someone asked to reset the password of your {{.Realm}} account. If it was you, choose a new password:</p>
{{template "button" .}}
<p style="font-size:13px;color:#57606a">The link works once, for {{.Hours}} hour(s). If the button does not work, copy this address into your browser:<br>
<a href="{{.Link}}" style="color:#57606a;word-break:break-all">{{.Link}}</a></p>
<p style="font-size:13px;color:#57606a">If you did not ask for this, you can ignore this message: your password stays as it is.</p>
</td></tr></table></td></tr></table>
</body></html>
`

const resetPasswordText = `Hello {{.Name}},

Someone asked to reset the password of your {{.Realm}} account. If it was you, choose a new password by opening this link:

{{.Link}}

The link works once, for {{.Hours}} hour(s). If you did not ask for this, you can ignore this message: your password stays as it is.

-- 
{{.Realm}}
`

var resetPasswordMail = newMailTemplate("reset-password", "Reset your password for {{.Realm}}", resetPasswordHTML, resetPasswordText)
