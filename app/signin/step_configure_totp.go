package signin

import (
	"context"
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// configureTOTPStep is the second factor a realm that requires one
// (mfaRequired) asks of a user who has none: an authenticator app set up
// on the spot, as Keycloak's CONFIGURE_TOTP required action. Its first
// code proves the user holds it; the recovery codes it gives are shown
// once, on the page that leads on.
type configureTOTPStep struct {
	core  *identity.Core
	store *store.Store
	pages *Pages
	emit  Emitter
}

func (configureTOTPStep) Kind() StepKind      { return KindConfigureTOTP }
func (configureTOTPStep) AMR() []string       { return []string{"otp"} }
func (configureTOTPStep) Events() []EventType { return []EventType{EventUpdateTOTP} }

func (s configureTOTPStep) Owed(ctx context.Context, f *Flow) (bool, error) {
	if !f.Realm.MFARequired {
		return false, nil
	}
	types, err := s.store.CredentialTypes(ctx, f.Realm.ID, f.User.ID)
	return len(types) == 0, err
}

func (s configureTOTPStep) page(w http.ResponseWriter, r *http.Request, f *Flow, v View, status int, errKey string) error {
	e, err := s.core.BeginTOTP(r.Context(), f.Realm, f.User)
	if err != nil {
		return err // ErrTOTPEnrolled: set up meanwhile, and then no longer owed
	}
	return s.pages.Render(w, r, status, ui.TOTPSetup(s.pages.Page("totp.setup.title"), ui.TOTPSetupForm{
		Action: v.FormAction(), CSRFToken: v.CSRF, ClientName: f.Wants.ClientName,
		Enrolment: ui.TOTPEnrolment{QRDataURL: e.QRDataURL(), Secret: e.Secret()}, Error: errKey}))
}

func (s configureTOTPStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	return s.page(w, r, f, v, http.StatusOK, "")
}

func (s configureTOTPStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	ctx, realm, user := r.Context(), f.Realm, f.User
	codes, err := s.core.ConfirmTOTP(ctx, realm, user, r.PostForm.Get("code"), nil)
	switch {
	case errors.Is(err, identity.ErrInvalidTOTP):
		return nil, s.page(w, r, f, v, http.StatusBadRequest, "totp.error.code")
	case errors.Is(err, identity.ErrNoTOTPEnrolment):
		return nil, s.page(w, r, f, v, http.StatusBadRequest, "totp.error.expired")
	case errors.Is(err, identity.ErrTOTPEnrolled): // in another tab: owed no more
		http.Redirect(w, r, v.Action, http.StatusSeeOther)
		return nil, nil
	case err != nil:
		return nil, err
	}
	s.emit(ctx, realm, store.LoginEvent{Type: EventUpdateTOTP, UserID: user.ID, ClientID: f.Wants.Client,
		IPAddress: v.ClientIP, Details: map[string]string{"username": user.Username}})
	// The codes exist only in this answer: shown once the flow moved on,
	// by a page that leads to its next page.
	return user, Shown(func() error {
		return s.pages.Render(w, r, http.StatusOK, ui.RecoveryCodes(s.pages.Page("recoveryCodes.title"),
			ui.RecoveryCodesForm{ContinueURL: v.Action, Codes: codes}))
	})
}
