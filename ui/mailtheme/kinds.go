// Package mailtheme is what a theme may change of the mails the server
// sends: the kinds of mail, the variables each offers a template, and the
// templates themselves. A template is checked when its theme is saved
// (app/themes) and run when a mail is sent (app/mail), so both sides read
// the variables from here and cannot drift apart.
package mailtheme

import "slices"

// Variable is a value a mail's template may print as {{.Name}}. Every
// value is a string.
type Variable struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Sample is what a check of a template runs it with.
	Sample string `json:"-"`
}

// Kind is a mail the server sends, by the name its outbox records.
type Kind struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Variables   []Variable `json:"variables"`
}

// Parts of a mail a theme may replace.
const (
	PartSubject = "subject"
	PartHTML    = "html"
	PartText    = "text"
)

// Subject is the variable of the HTML and text parts holding the mail's
// subject, the theme's or the catalogue's; the subject cannot use it.
const Subject = "Subject"

// common are the variables of every mail.
var common = []Variable{
	{"Realm", "The realm's display name, else its name.", "Acme"},
	{"Lang", "The mail's language tag (en, de, pt-BR…).", "en"},
	{"Dir", "The writing direction of that language: ltr or rtl.", "ltr"},
	{"Primary", "The theme's primary colour, for buttons.", "#2563eb"},
	{"PrimaryText", "The colour of text on the primary colour.", "#ffffff"},
	{"LogoURL", "The absolute address of the theme's logo; empty when it has none.", "https://id.example.com/logo.png"},
}

// The texts of the catalogues that mails with a link share.
var (
	name     = Variable{"Name", "How the mail addresses the user: the first name, else the username, else the address.", "Alex"}
	email    = Variable{"Email", "The user's email address.", "alex@example.com"}
	link     = Variable{"Link", "The single-use link.", "https://id.example.com/realms/acme/login-actions/x"}
	greeting = Variable{"Greeting", "The catalogue's greeting line, in the mail's language.", "Hello Alex,"}
	intro    = Variable{"Intro", "The catalogue's first paragraph.", "Please confirm your address."}
	action   = Variable{"Action", "The catalogue's text of the button.", "Verify email address"}
	expiry   = Variable{"Expiry", "The catalogue's line saying how long the link or code works.", "The link works once, for 12 hours."}
	ignore   = Variable{"Ignore", "The catalogue's line for a reader who did not ask for the mail.", "If you did not expect this message, you can ignore it."}
	copyLink = Variable{"CopyLink", "The catalogue's advice shown with the link spelled out.", "If the button does not work, copy this address:"}
)

// Kinds are the mails a theme may change, by name.
var Kinds = []Kind{
	{Name: "verify-email", Description: "The link that verifies a user's email address.",
		Variables: []Variable{name, email, link, greeting, intro, action, expiry, ignore, copyLink}},
	{Name: "reset-password", Description: "The link that sets a new password.",
		Variables: []Variable{name, email, link, greeting, intro, action, expiry, ignore, copyLink}},
	{Name: "email-code", Description: "The one-time code of a sign-in's email step.",
		Variables: []Variable{name, email, greeting, intro, expiry, ignore,
			{"Code", "The one-time code.", "493027"},
			{"CodeLine", "The catalogue's line giving the code.", "Your code: 493027"}}},
	{Name: "organization-invitation", Description: "An invitation to join an organization.",
		Variables: []Variable{link, greeting, intro, action, expiry, ignore, copyLink,
			{"Organization", "The organization's name.", "Acme Research"},
			{"Role", "The role the invitee is given.", "member"},
			{"Expires", "When the invitation ends, as a date.", "2026-01-31"}}},
	{Name: "test", Description: "The test mail of the realm's email settings.",
		Variables: []Variable{intro,
			{"Provider", "The provider the mail went through (smtp, sendgrid…).", "smtp"},
			{"Done", "The catalogue's line saying delivery works.", "Delivery works."}}},
}

// KindNamed is the kind of mail called name.
func KindNamed(name string) (Kind, bool) {
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return Kinds[i], true
}

// Names lists the kinds' names.
func Names() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.Name
	}
	return out
}

// AllVariables are the variables of k's templates, the common ones
// first; Subject among them unless part is the subject.
func (k Kind) AllVariables(part string) []Variable {
	out := slices.Concat(common, k.Variables)
	if part != PartSubject {
		out = append(out, Variable{Subject, "The mail's subject.", "Verify your email address for Acme"})
	}
	return out
}

// VariableNames are the names of AllVariables(part).
func (k Kind) VariableNames(part string) []string {
	vs := k.AllVariables(part)
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}
