package account

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The account home: the user's profile as JSON for a Bearer caller, the
// account page for a browser; and the profile form it posts.

// AccountRep is the account as its owner reads it.
type AccountRep struct {
	ID            string            `json:"id"`
	Username      string            `json:"username"`
	Email         string            `json:"email"`
	EmailVerified bool              `json:"emailVerified"`
	FirstName     string            `json:"firstName"`
	LastName      string            `json:"lastName"`
	Attributes    map[string]string `json:"attributes"`
	// CustomAttributes are the user's values of the realm's custom
	// attributes (attributes.go).
	CustomAttributes map[string][]string `json:"customAttributes"`
	CreatedTimestamp int64               `json:"createdTimestamp"`
	Factors          []string            `json:"factors"` // enrolled credential types: password, otp…
	Deletion         AccountDeletionRep  `json:"deletion"`
}

// AccountDeletionRep is the state of the account's deletion: scheduled
// or not, and when it was asked for and happens (Unix milliseconds).
type AccountDeletionRep struct {
	Scheduled   bool  `json:"scheduled"`
	RequestedAt int64 `json:"requestedAt,omitempty"`
	DeleteAt    int64 `json:"deleteAt,omitempty"`
}

func toAccountDeletionRep(d *store.AccountDeletion) AccountDeletionRep {
	if d == nil {
		return AccountDeletionRep{}
	}
	return AccountDeletionRep{Scheduled: true, RequestedAt: d.RequestedAt, DeleteAt: d.DeleteAt}
}

// deletion is the deletion scheduled for the caller's account, nil
// for none.
func (s *Service) deletion(ctx context.Context, c *Caller) (*store.AccountDeletion, error) {
	d, err := s.deps.Store.GetAccountDeletion(ctx, c.Realm.ID, c.User.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return d, err
}

// Rep is the caller's account as its owner reads it.
func (s *Service) Rep(ctx context.Context, c *Caller) (*AccountRep, error) {
	u := c.User
	attrs, err := s.deps.Store.UserAttributes(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	factors, err := s.accountFactors(ctx, c.Realm, u)
	if err != nil {
		return nil, err
	}
	d, err := s.deletion(ctx, c)
	if err != nil {
		return nil, err
	}
	custom, err := s.loadAccountAttributes(ctx, c)
	if err != nil {
		return nil, err
	}
	return &AccountRep{ID: u.ID, Username: u.Username, Email: u.Email, EmailVerified: u.EmailVerified,
		FirstName: u.FirstName, LastName: u.LastName, Attributes: attrs, CustomAttributes: custom.held,
		CreatedTimestamp: u.CreatedAt, Factors: factors, Deletion: toAccountDeletionRep(d)}, nil
}

// Home is GET /account: the account in JSON, or the account page.
// A browser arriving back from signing in (with code and state) is sent
// on to the page it asked for.
func (s *Service) Home(w http.ResponseWriter, r *http.Request, c *Caller) error {
	if c.API {
		rep, err := s.Rep(r.Context(), c)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, rep)
		return nil
	}
	if q := r.URL.Query(); q.Has("code") || q.Has("state") || q.Has("error") {
		s.landed(w, r, c.Realm)
		return nil
	}
	v := accountView(c.User)
	v.Notice = accountNotice(r)
	return s.renderAccount(w, r, c, http.StatusOK, v)
}

// accountView is the account page with the profile form showing what is
// stored.
func accountView(u *store.User) ui.AccountView {
	return ui.AccountView{Profile: ui.AccountProfileForm{Email: u.Email, EmailVerified: u.EmailVerified,
		FirstName: u.FirstName, LastName: u.LastName}}
}

// renderAccount shows the account page: v's notice and forms, completed
// with their actions and CSRF tokens and the rest of the page.
func (s *Service) renderAccount(w http.ResponseWriter, r *http.Request, c *Caller, status int, v ui.AccountView) error {
	ctx := r.Context()
	base := Path(c.Realm)
	var err error
	v.Profile.CSRFToken = s.deps.Pages.CSRFToken(w, r, c.Realm, accountFormProfile, c.Session.ID)
	v.Password.CSRFToken = s.deps.Pages.CSRFToken(w, r, c.Realm, accountFormPassword, c.Session.ID)
	if v.Factors, err = s.accountFactors(ctx, c.Realm, c.User); err != nil {
		return err
	}
	d, err := s.deletion(ctx, c)
	if err != nil {
		return err
	}
	if d != nil {
		date := accountDate(d.DeleteAt)
		v.Deletion = &date
	}
	if v.Profile.Attributes == nil && v.Profile.ReadOnly == nil {
		custom, err := s.loadAccountAttributes(ctx, c)
		if err != nil {
			return err
		}
		custom.fill(&v.Profile, custom.held, nil)
	}
	if v.Impersonations, err = accountImpersonations(ctx, s.deps.Store, c.Realm.ID, c.User.ID, s.deps.Now().UnixMilli()); err != nil {
		return err
	}
	v.Username = c.User.Username
	v.Profile.Action, v.Password.Action = base+"/profile", base+"/password"
	v.ExportURL, v.TOTPURL, v.DeleteURL = base+"/data-export", base+"/totp-setup", base+"/delete-account"
	v.LogoutURL = s.issuer(c.Realm) + "/" + pathLogout
	v.WebAuthnURL = s.accountWebAuthnURL(c) // webauthn.go
	return s.deps.Pages.Render(w, r, status, ui.Account(s.deps.Pages.Page("account.title"), v))
}

// AccountProfileBody is what POST /account/profile takes; a field left
// out keeps its value.
type AccountProfileBody struct {
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

// Profile changes the caller's name and email. The username cannot
// change, as in Keycloak by default (editUsernameAllowed off). A new email
// is unverified until the link mailed to it is followed.
func (s *Service) Profile(w http.ResponseWriter, r *http.Request, c *Caller) error {
	var body AccountProfileBody
	var custom *accountAttributes
	if c.API {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	} else {
		if err := s.Form(r, c, accountFormProfile); err != nil {
			return err
		}
		body = AccountProfileBody{Username: formValue(r, "username"), Email: formValue(r, "email"),
			FirstName: formValue(r, "firstName"), LastName: formValue(r, "lastName")}
		var err error
		if custom, err = s.loadAccountAttributes(r.Context(), c); err != nil {
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
		u, mailed, err = s.changeProfile(r, c, body)
	}
	if err != nil {
		return signin.WithPage(err, func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
			v := accountView(c.User)
			set(&v.Profile.Email, body.Email)
			set(&v.Profile.FirstName, body.FirstName)
			set(&v.Profile.LastName, body.LastName)
			if custom != nil {
				custom.fill(&v.Profile, body.attrs.values, attributeErrors(e))
			}
			if len(e.Fields) > 0 { // the attributes' faults, each beside its field
				v.Profile.Error = "register.error.form"
				return s.renderAccount(w, r, c, e.Status, v)
			}
			text := s.fieldText(r, c.Realm, e)
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
			return s.renderAccount(w, r, c, e.Status, v)
		})
	}
	if c.API {
		c.User = u
		rep, err := s.Rep(r.Context(), c)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, rep)
		return nil
	}
	done := "profile"
	if u.Email != c.User.Email && u.Email != "" {
		done = "email"
		if !mailed {
			done = "email-unsent"
		}
	}
	return accountRedirect(w, r, c.Realm, "/", done)
}

// changeProfile stores the profile body asks for and records the events.
// It returns the user as stored, and whether a verification mail went to
// a new address.
func (s *Service) changeProfile(r *http.Request, c *Caller, body AccountProfileBody) (*store.User, bool, error) {
	ctx := r.Context()
	old := c.User
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
	} else if old.Email != "" && c.Realm.RequireEmailVerification {
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
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if _, err := s.deps.Identity.UpdateUser(ctx, tx, &u); err != nil {
			return err
		}
		if body.attrs != nil {
			return s.deps.Identity.SetUserAttributes(ctx, tx, &u, body.attrs.schema, body.attrs.values)
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
	ip := s.deps.ClientIP(r)
	s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventUpdateProfile, UserID: u.ID, ClientID: c.ClientID,
		SessionID: c.SessionID(), IPAddress: ip})
	mailed := false
	if emailChanged {
		s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventUpdateEmail, UserID: u.ID, ClientID: c.ClientID,
			SessionID: c.SessionID(), IPAddress: ip, Details: map[string]string{"previous_email": old.Email, "updated_email": u.Email}})
		if u.Email != "" {
			mailed = s.mailVerification(r, c, &u)
		}
	}
	return &u, mailed, nil
}

// mailVerification mails the verification link to the user's new
// address. The change is stored by then, so a failure to queue the mail
// is logged, not returned: the user can ask for a new link when signing in.
func (s *Service) mailVerification(r *http.Request, c *Caller, u *store.User) bool {
	ctx := r.Context()
	err := s.deps.QueueVerifyEmail(r, c.Realm, u)
	if errors.Is(err, ErrMailUnavailable) {
		return false
	} else if err != nil {
		s.deps.Log.ErrorContext(ctx, "verification mail not queued", "realm", c.Realm.Name, "user", u.ID, "err", err)
		return false
	}
	s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventSendVerifyEmail, UserID: u.ID, ClientID: c.ClientID,
		SessionID: c.SessionID(), IPAddress: s.deps.ClientIP(r), Details: map[string]string{"email": u.Email}})
	return true
}
