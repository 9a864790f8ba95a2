package console

import (
	"net/http"
	"net/url"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// requiredActions are what the user must do at their next sign-in, as
// far as the API keeps them: a new password (requirePasswordReset), an
// address to verify (emailVerified), and a second factor when the realm
// asks everyone for one and the user has none, which is the realm's
// policy and no setting of the user.
func requiredActions(rep map[string]any, mfa *pages.MFAStatus) pages.RequiredActions {
	a := pages.RequiredActions{HasEmail: str(rep["email"]) != ""}
	a.UpdatePassword, _ = rep["requirePasswordReset"].(bool)
	verified, _ := rep["emailVerified"].(bool)
	a.VerifyEmail = a.HasEmail && !verified
	a.ConfigureTOTP = mfa != nil && mfa.Required && len(mfa.Factors) == 0
	return a
}

// SetRequiredActions sets what the user must do at their next sign-in,
// with PATCH: UPDATE_PASSWORD is requirePasswordReset, VERIFY_EMAIL an
// address not verified.
func (s *Service) SetRequiredActions(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	var before map[string]any
	if err := c.call(r, http.MethodGet, adminUser(realm, id, ""), nil, &before); err != nil {
		return err
	}
	body := map[string]any{"requirePasswordReset": r.PostForm.Get("UPDATE_PASSWORD") == "true",
		"emailVerified": r.PostForm.Get("VERIFY_EMAIL") != "true"}
	var after map[string]any
	err := c.call(r, http.MethodPatch, adminUser(realm, id, ""), body, &after)
	if err == nil {
		redirect(w, r, userPath(realm, id, ""), changed(before, after, []string{"requirePasswordReset", "emailVerified"})...)
		return nil
	}
	f, ok := formFailure(err)
	if !ok {
		return err
	}
	return s.renderUser(w, r, c, http.StatusUnprocessableEntity, pages.Form{}, nil, func(p *pages.UserPage) { p.ActionsForm = f })
}

// SendPasswordMail mails the user a link to choose a new password, with
// PUT .../reset-password-email.
func (s *Service) SendPasswordMail(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	err := c.call(r, http.MethodPut, adminUser(realm, id, "/reset-password-email"), nil, nil)
	if err == nil {
		redirect(w, r, userPath(realm, id, ""), "console.done.resetMailSent")
		return nil
	}
	f, ok := formFailure(err)
	if !ok {
		return err
	}
	return s.renderUser(w, r, c, http.StatusUnprocessableEntity, pages.Form{}, nil, func(p *pages.UserPage) { p.MailForm = f })
}

// confirmForUser asks before a change to the user of the path: message
// takes the username first, then args.
func (s *Service) confirmForUser(w http.ResponseWriter, r *http.Request, c *Ctx, message, action, button string, args ...any) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminUser(realm, id, ""), nil, &rep); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, pages.SectionUsers, "console.confirm.title"), pages.Confirm{
		Message: message, Args: append([]any{str(rep["username"])}, args...), Action: userPath(realm, id, action),
		Cancel: userPath(realm, id, ""), Button: button}))
}

// userChange makes one API call about the user of the path and leads
// back to their page, saying what it did.
func (s *Service) userChange(w http.ResponseWriter, r *http.Request, c *Ctx, method, rest, done string) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	if err := c.call(r, method, adminUser(realm, id, rest), nil, nil); err != nil {
		return err
	}
	redirect(w, r, userPath(realm, id, ""), done)
	return nil
}

// ConfirmRemoveTOTP asks before a user's authenticator app is removed.
func (s *Service) ConfirmRemoveTOTP(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.confirmForUser(w, r, c, "console.user.removeTOTPConfirm", "/totp/remove", "console.user.removeTOTP")
}

// RemoveTOTP removes a user's authenticator app alone (and signs them
// out, as the API does).
func (s *Service) RemoveTOTP(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.userChange(w, r, c, http.MethodDelete, "/mfa/totp", "console.done.totpRemoved")
}

// ConfirmRemovePasskey asks before one of a user's passkeys is removed,
// naming it.
func (s *Service) ConfirmRemovePasskey(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id, key := pathVar(r, "realm"), pathVar(r, "userId"), pathVar(r, "credentialId")
	name := key
	var mfa pages.MFAStatus
	if err := c.call(r, http.MethodGet, adminUser(realm, id, "/mfa/status"), nil, &mfa); err != nil {
		return err
	}
	for _, k := range mfa.WebAuthn {
		if k.ID == key && k.Name != "" {
			name = k.Name
		}
	}
	return s.confirmForUser(w, r, c, "console.user.removePasskeyConfirm", "/passkeys/"+url.PathEscape(key)+"/remove",
		"console.user.removePasskey", name)
}

// RemovePasskey removes one of a user's passkeys or security keys.
func (s *Service) RemovePasskey(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.userChange(w, r, c, http.MethodDelete, "/mfa/webauthn/"+url.PathEscape(pathVar(r, "credentialId")),
		"console.done.passkeyRemoved")
}

// ConfirmUnlinkIdentity asks before a user's account at an identity
// provider is unlinked.
func (s *Service) ConfirmUnlinkIdentity(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	alias := pathVar(r, "alias")
	return s.confirmForUser(w, r, c, "console.user.unlinkConfirm", "/identities/"+url.PathEscape(alias)+"/unlink",
		"console.user.unlink", alias)
}

// UnlinkIdentity unlinks a user's account at an identity provider: they
// no longer sign in with it until it is linked again.
func (s *Service) UnlinkIdentity(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.userChange(w, r, c, http.MethodDelete, "/federated-identity/"+url.PathEscape(pathVar(r, "alias")),
		"console.done.identityUnlinked")
}

// identities reads a user's linked identities, for an administrator who
// may read users.
func (s *Service) identities(r *http.Request, c *Ctx, realm, id string, p *pages.UserPage) error {
	if !c.can(authz.UsersRead) {
		return nil
	}
	p.Identities = []pages.IdentityRow{}
	return c.call(r, http.MethodGet, adminUser(realm, id, "/federated-identity"), nil, &p.Identities)
}
