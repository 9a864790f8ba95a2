package app

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The invitation to join an organization: its mail, the endpoint a user's
// application calls to accept it, and the hosted page the mail links to.

// orgInvitationTemplate is the template name the outbox records for an
// invitation.
const orgInvitationTemplate = "organization-invitation"

// orgInvitationDate is how an invitation mail writes its expiry: the
// same in every language.
const orgInvitationDate = "2006-01-02 15:04 MST"

// orgInvitationForm names the invitation page's form in its CSRF token.
const orgInvitationForm = "organization-invitation"

// errNoMailSender refuses an invitation the realm could not mail.
var errNoMailSender = apperr.Invalid("the realm cannot send mail: set its SMTP server or email provider first")

// sendOrgInvitation puts an invitation's mail in the realm's outbox through
// tx (orgs.Deps.SendInvitation).
func (a *App) sendOrgInvitation(ctx context.Context, tx *store.Store, realm *store.Realm, m orgs.InvitationMail) error {
	if _, err := mail.Sender(realm, false); err != nil {
		return errNoMailSender
	}
	l, err := a.mailLangs.Invitee(ctx, tx, realm, m.To)
	if err != nil {
		return err
	}
	msg, err := orgInvitationMail(l, realm, m)
	if err != nil {
		return err
	}
	return a.mail.Enqueue(ctx, tx, realm, msg)
}

// orgInvitationMail is the invitation m in l's language.
func orgInvitationMail(l *ui.Localizer, realm *store.Realm, m orgs.InvitationMail) (mail.Message, error) {
	c := mail.NewContent(l, realm)
	c.Subject = l.T("mail.orgInvitation.subject", m.Organization, c.Realm)
	c.Greeting = l.T("mail.orgInvitation.greeting")
	c.Body = []string{l.T("mail.orgInvitation.intro", m.Organization, m.Role)}
	c.Action, c.Link = l.T("mail.orgInvitation.action"), m.Link
	c.Notes = []string{l.T("mail.orgInvitation.expiry", m.Expires.UTC().Format(orgInvitationDate)),
		l.T("mail.orgInvitation.ignore")}
	c.Vars = map[string]string{"Link": m.Link, "Greeting": c.Greeting, "Intro": c.Body[0], "Action": c.Action,
		"Expiry": c.Notes[0], "Ignore": c.Notes[1], "CopyLink": c.CopyLink, "Organization": m.Organization, "Role": m.Role,
		"Expires": m.Expires.UTC().Format(orgInvitationDate)}
	return c.Render(orgInvitationTemplate, m.To)
}

// userHandler serves a JSON route for the user whose access token the
// request carries.
type userHandler func(w http.ResponseWriter, r *http.Request, realm *store.Realm, u *store.User) error

// userEndpoint authenticates a JSON route by the user's Bearer access
// token: none or a bad one is a 401 with a Bearer challenge.
func (a *App) userEndpoint(h userHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		realm, err := a.account.Realm(r)
		if err == nil {
			token := httpx.BearerToken(r)
			var c *account.Caller
			switch {
			case token == "":
				err = account.ErrNoToken
			default:
				if c, err = a.account.Bearer(r, realm, token); err == nil {
					err = h(w, r, realm, c.User)
				}
			}
		}
		if err != nil {
			account.SetBearerChallenge(w, realm, err)
			a.writeError(w, r, err)
		}
	})
}

// orgInvitationRep is what the invitation page answers an API caller.
type orgInvitationRep struct {
	Organization string `json:"organization"` // the slug
	Name         string `json:"name"`
	Email        string `json:"email"`
	Role         string `json:"role"`
}

// orgInvitationPage is GET /account/organizations/{slug}/invitations/{token}: the
// live invitation, with the form that accepts it. A browser that is not
// signed in was sent to sign in (or register) first by the account routes,
// and comes back here.
func (a *App) orgInvitationPage(w http.ResponseWriter, r *http.Request, c *account.Caller) error {
	slug, token := mux.Vars(r)["slug"], mux.Vars(r)["token"]
	o, inv, err := a.orgs.Invitation(r.Context(), c.Realm, slug, token)
	if err != nil {
		return err
	}
	if c.API {
		return httpx.OK(w, orgInvitationRep{Organization: o.Slug, Name: o.Name, Email: inv.Email, Role: inv.Role})
	}
	csrf := a.pages.CSRFToken(w, r, c.Realm, orgInvitationForm, c.Session.ID)
	return a.pages.Render(w, r, http.StatusOK, ui.OrgInvitation(a.pages.Page("org.invitation.title"), ui.OrgInvitationView{
		Organization: o.Name, Role: inv.Role, CSRFToken: csrf, Action: r.URL.Path}))
}

// orgInvitationAccept is POST /account/organizations/{slug}/invitations/{token}: the
// signed-in person joins the organization.
func (a *App) orgInvitationAccept(w http.ResponseWriter, r *http.Request, c *account.Caller) error {
	if !c.API {
		if err := a.account.Form(r, c, orgInvitationForm); err != nil {
			return err
		}
	}
	slug, token := mux.Vars(r)["slug"], mux.Vars(r)["token"]
	o, m, err := a.orgs.Accept(r.Context(), c.Realm, c.User, slug, token)
	if err != nil {
		return err
	}
	if c.API {
		return httpx.OK(w, orgInvitationRep{Organization: o.Slug, Name: o.Name, Email: c.User.Email, Role: m.Role})
	}
	return a.pages.Render(w, r, http.StatusOK, ui.Info(a.pages.Page("org.invitation.joined.title"), ui.InfoPage{
		Heading: "org.invitation.joined.title", Message: "org.invitation.joined.message",
		LinkURL: account.Path(c.Realm) + "/", LinkText: "account.back"}))
}
