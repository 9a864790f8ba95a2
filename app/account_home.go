package app

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The account home: the user's profile as JSON for a Bearer caller, the
// account page for a browser; and the profile form it posts.

// accountRep is the account as its owner reads it.
type accountRep struct {
	ID            string            `json:"id"`
	Username      string            `json:"username"`
	Email         string            `json:"email"`
	EmailVerified bool              `json:"emailVerified"`
	FirstName     string            `json:"firstName"`
	LastName      string            `json:"lastName"`
	Attributes    map[string]string `json:"attributes"`
	// CustomAttributes are the user's values of the realm's custom
	// attributes (account_attributes.go).
	CustomAttributes map[string][]string `json:"customAttributes"`
	CreatedTimestamp int64               `json:"createdTimestamp"`
	Factors          []string            `json:"factors"` // enrolled credential types: password, otp…
	Deletion         accountDeletionRep  `json:"deletion"`
}

// accountDeletionRep is the state of the account's deletion: scheduled
// or not, and when it was asked for and happens (Unix milliseconds).
type accountDeletionRep struct {
	Scheduled   bool  `json:"scheduled"`
	RequestedAt int64 `json:"requestedAt,omitempty"`
	DeleteAt    int64 `json:"deleteAt,omitempty"`
}

func toAccountDeletionRep(d *store.AccountDeletion) accountDeletionRep {
	if d == nil {
		return accountDeletionRep{}
	}
	return accountDeletionRep{Scheduled: true, RequestedAt: d.RequestedAt, DeleteAt: d.DeleteAt}
}

// accountDeletion is the deletion scheduled for the caller's account, nil
// for none.
func (a *App) accountDeletion(ctx context.Context, c *accountCaller) (*store.AccountDeletion, error) {
	d, err := a.store.GetAccountDeletion(ctx, c.realm.ID, c.user.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return d, err
}

func (a *App) accountRep(ctx context.Context, c *accountCaller) (*accountRep, error) {
	u := c.user
	attrs, err := a.store.UserAttributes(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	factors, err := a.accountFactors(ctx, c.realm, u)
	if err != nil {
		return nil, err
	}
	d, err := a.accountDeletion(ctx, c)
	if err != nil {
		return nil, err
	}
	custom, err := a.loadAccountAttributes(ctx, c)
	if err != nil {
		return nil, err
	}
	return &accountRep{ID: u.ID, Username: u.Username, Email: u.Email, EmailVerified: u.EmailVerified,
		FirstName: u.FirstName, LastName: u.LastName, Attributes: attrs, CustomAttributes: custom.held,
		CreatedTimestamp: u.CreatedAt, Factors: factors, Deletion: toAccountDeletionRep(d)}, nil
}

// accountHome is GET /account: the account in JSON, or the account page.
// A browser arriving back from signing in (with code and state) is sent
// on to the page it asked for.
func (a *App) accountHome(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	if c.api {
		rep, err := a.accountRep(r.Context(), c)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, rep)
		return nil
	}
	if q := r.URL.Query(); q.Has("code") || q.Has("state") || q.Has("error") {
		a.accountLanded(w, r, c.realm)
		return nil
	}
	v := accountView(c.user)
	v.Notice = accountNotice(r)
	return a.renderAccount(w, r, c, http.StatusOK, v)
}

// accountView is the account page with the profile form showing what is
// stored.
func accountView(u *store.User) ui.AccountView {
	return ui.AccountView{Profile: ui.AccountProfileForm{Email: u.Email, EmailVerified: u.EmailVerified,
		FirstName: u.FirstName, LastName: u.LastName}}
}

// renderAccount shows the account page: v's notice and forms, completed
// with their actions and CSRF tokens and the rest of the page.
func (a *App) renderAccount(w http.ResponseWriter, r *http.Request, c *accountCaller, status int, v ui.AccountView) error {
	ctx := r.Context()
	base := accountPath(c.realm)
	var err error
	v.Profile.CSRFToken = a.pages.CSRFToken(w, r, c.realm, accountFormProfile, c.session.ID)
	v.Password.CSRFToken = a.pages.CSRFToken(w, r, c.realm, accountFormPassword, c.session.ID)
	if v.Factors, err = a.accountFactors(ctx, c.realm, c.user); err != nil {
		return err
	}
	d, err := a.accountDeletion(ctx, c)
	if err != nil {
		return err
	}
	if d != nil {
		date := accountDate(d.DeleteAt)
		v.Deletion = &date
	}
	if v.Profile.Attributes == nil && v.Profile.ReadOnly == nil {
		custom, err := a.loadAccountAttributes(ctx, c)
		if err != nil {
			return err
		}
		custom.fill(&v.Profile, custom.held, nil)
	}
	if v.Impersonations, err = accountImpersonations(ctx, a.store, c.realm.ID, c.user.ID, a.now().UnixMilli()); err != nil {
		return err
	}
	v.Username = c.user.Username
	v.Profile.Action, v.Password.Action = base+"/profile", base+"/password"
	v.ExportURL, v.TOTPURL, v.DeleteURL = base+"/data-export", base+"/totp-setup", base+"/delete-account"
	v.LogoutURL = a.issuer(c.realm) + "/" + pathLogout
	v.WebAuthnURL = a.accountWebAuthnURL(c) // account_webauthn.go
	return a.pages.Render(w, r, status, ui.Account(a.pages.Page("account.title"), v))
}

// accountProfileBody is what POST /account/profile takes; a field left
// out keeps its value.
type accountProfileBody struct {
	Username  *string `json:"username"`
	Email     *string `json:"email"`
	FirstName *string `json:"firstName"`
	LastName  *string `json:"lastName"`
	// attrs, from the page's form, are the values of the custom attributes
	// the user edits, checked; nil leaves them.
	attrs *attributeWrite
}

// attributeWrite is the values of the attributes of schema to store.
type attributeWrite struct {
	schema []*store.CustomAttribute
	values map[string][]string
}

// accountProfile changes the caller's name and email. The username cannot
// change, as in Keycloak by default (editUsernameAllowed off). A new email
// is unverified until the link mailed to it is followed.
func (a *App) accountProfile(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	var body accountProfileBody
	var custom *accountAttributes
	if c.api {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	} else {
		if err := a.accountForm(r, c, accountFormProfile); err != nil {
			return err
		}
		body = accountProfileBody{Username: formValue(r, "username"), Email: formValue(r, "email"),
			FirstName: formValue(r, "firstName"), LastName: formValue(r, "lastName")}
		var err error
		if custom, err = a.loadAccountAttributes(r.Context(), c); err != nil {
			return err
		}
		body.attrs = &attributeWrite{schema: custom.editable(), values: custom.posted(r)}
	}
	// The attributes are checked first, all of them, so that the form
	// comes back with every one at fault marked.
	err := error(nil)
	if body.attrs != nil {
		err = custom.check(body.attrs.values)
	}
	var u *store.User
	mailed := false
	if err == nil {
		u, mailed, err = a.changeProfile(r, c, body)
	}
	if err != nil {
		return withPage(err, func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
			v := accountView(c.user)
			set(&v.Profile.Email, body.Email)
			set(&v.Profile.FirstName, body.FirstName)
			set(&v.Profile.LastName, body.LastName)
			if custom != nil {
				custom.fill(&v.Profile, body.attrs.values, attributeErrors(e))
			}
			if len(e.Fields) > 0 { // the attributes' faults, each beside its field
				v.Profile.Error = "register.error.form"
				return a.renderAccount(w, r, c, e.Status, v)
			}
			text := a.fieldText(r, c.realm, e)
			switch e.Field {
			case "email":
				v.Profile.EmailError = text
			case "firstName":
				v.Profile.FirstNameError = text
			case "lastName":
				v.Profile.LastNameError = text
			default:
				v.Profile.Error = text
			}
			return a.renderAccount(w, r, c, e.Status, v)
		})
	}
	if c.api {
		c.user = u
		rep, err := a.accountRep(r.Context(), c)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, rep)
		return nil
	}
	done := "profile"
	if u.Email != c.user.Email && u.Email != "" {
		done = "email"
		if !mailed {
			done = "email-unsent"
		}
	}
	return accountRedirect(w, r, c.realm, "/", done)
}

// changeProfile stores the profile body asks for and records the events.
// It returns the user as stored, and whether a verification mail went to
// a new address.
func (a *App) changeProfile(r *http.Request, c *accountCaller, body accountProfileBody) (*store.User, bool, error) {
	ctx := r.Context()
	old := c.user
	if body.Username != nil && strings.ToLower(strings.TrimSpace(*body.Username)) != old.Username {
		return nil, false, invalid("username", "account.error.usernameReadOnly")
	}
	u := *old
	if body.Email != nil {
		u.Email = strings.TrimSpace(*body.Email)
	}
	set(&u.FirstName, body.FirstName)
	set(&u.LastName, body.LastName)
	if u.Email != "" {
		email, err := validate.NormalizeEmail(u.Email)
		if err != nil {
			return nil, false, invalid("email", "account.error.emailInvalid")
		}
		u.Email = email
	} else if old.Email != "" && c.realm.RequireEmailVerification {
		// Without an address to verify, the user could not sign in again.
		return nil, false, invalid("email", "account.error.emailRequired")
	}
	for _, f := range []struct{ field, value string }{{"firstName", u.FirstName}, {"lastName", u.LastName}} {
		if validate.PersonName(f.field, f.value, 255) != nil {
			return nil, false, invalid(f.field, "account.error.nameInvalid", 255)
		}
	}
	emailChanged := u.Email != old.Email
	if emailChanged {
		u.EmailVerified = false
	}
	err := a.store.Tx(ctx, func(tx *store.Store) error {
		if _, err := a.id.UpdateUser(ctx, tx, &u); err != nil {
			return err
		}
		if body.attrs != nil {
			return a.id.SetUserAttributes(ctx, tx, &u, body.attrs.schema, body.attrs.values)
		}
		return nil
	})
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) && ae.Status == http.StatusConflict && ae.Field == "email" {
			return nil, false, errEmailTaken
		}
		return nil, false, err
	}
	ip := a.clientIP(r)
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: store.EventUpdateProfile, UserID: u.ID, ClientID: c.clientID,
		SessionID: c.sessionID(), IPAddress: ip})
	mailed := false
	if emailChanged {
		a.loginEvent(ctx, c.realm, store.LoginEvent{Type: store.EventUpdateEmail, UserID: u.ID, ClientID: c.clientID,
			SessionID: c.sessionID(), IPAddress: ip, Details: map[string]string{"previous_email": old.Email, "updated_email": u.Email}})
		if u.Email != "" {
			mailed = a.mailVerification(r, c, &u)
		}
	}
	return &u, mailed, nil
}

// mailVerification mails the verification link to the user's new
// address. The change is stored by then, so a failure to queue the mail
// is logged, not returned: the user can ask for a new link when signing in.
func (a *App) mailVerification(r *http.Request, c *accountCaller, u *store.User) bool {
	ctx := r.Context()
	err := a.queueActionMail(r.Context(), r, c.realm, u, store.ActionVerifyEmail, pathVerifyEmail, nil, mail.VerifyEmail)
	if errors.Is(err, errMailUnavailable) {
		return false
	} else if err != nil {
		a.log.ErrorContext(ctx, "verification mail not queued", "realm", c.realm.Name, "user", u.ID, "err", err)
		return false
	}
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: store.EventSendVerifyEmail, UserID: u.ID, ClientID: c.clientID,
		SessionID: c.sessionID(), IPAddress: a.clientIP(r), Details: map[string]string{"email": u.Email}})
	return true
}

// sessionID is the caller's session for events, "" for none.
func (c *accountCaller) sessionID() string {
	if c.session == nil {
		return ""
	}
	return c.session.ID
}
