package app

import (
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The admin API of a user's second factors. Removal is recorded by the
// admin events middleware (resource USER, operation DELETE) and, when a
// TOTP credential went, as a REMOVE_TOTP event of the user; each WebAuthn
// credential that went, as a REMOVE_CREDENTIAL event.

// mfaStatusRep is a user's second factors. Recovery codes belong to the
// user, not to one factor: they go only with the last factor.
type mfaStatusRep struct {
	Enabled  bool           `json:"enabled"`
	Required bool           `json:"required"` // the realm's mfaRequired
	Factors  []string       `json:"factors"`
	TOTP     *totpStatusRep `json:"totp,omitempty"`
	// WebAuthn lists the security keys and passkeys, oldest first;
	// absent when the user has none.
	WebAuthn               []webauthnStatusRep `json:"webauthn,omitempty"`
	RecoveryCodesRemaining int                 `json:"recoveryCodesRemaining"`
}

// webauthnStatusRep is one WebAuthn credential as the admin sees it.
type webauthnStatusRep struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	CreatedDate  int64  `json:"createdDate"`
	LastUsedDate int64  `json:"lastUsedDate,omitempty"`
}

type totpStatusRep struct {
	UserLabel   string `json:"userLabel"`
	CreatedDate int64  `json:"createdDate"`
}

func (a *App) mfaStatus(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	creds, err := a.store.Credentials(r.Context(), realm.ID, u.ID)
	if err != nil {
		return err
	}
	rep := mfaStatusRep{Required: realm.MFARequired, Factors: []string{}}
	for _, c := range creds {
		if !slices.Contains(rep.Factors, c.Type) { // one entry for any number of keys
			rep.Factors = append(rep.Factors, c.Type)
		}
		if c.Type == store.CredentialTOTP {
			rep.TOTP = &totpStatusRep{UserLabel: c.Label, CreatedDate: c.CreatedAt}
		}
	}
	keys, err := a.store.WebAuthnCredentials(r.Context(), realm.ID, u.ID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		rep.WebAuthn = append(rep.WebAuthn, webauthnStatusRep{ID: k.ID, Name: k.Name, CreatedDate: k.CreatedAt,
			LastUsedDate: k.LastUsedAt})
	}
	rep.Enabled = len(rep.Factors) > 0
	if rep.RecoveryCodesRemaining, err = a.store.RecoveryCodesLeft(r.Context(), realm.ID, u.ID); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, rep)
	return nil
}

// resetMFA removes every second factor of the user, whatever its type,
// and the recovery codes with them.
func (a *App) resetMFA(w http.ResponseWriter, r *http.Request) error {
	return a.deleteFactors(w, r)
}

// removeTOTP removes the user's TOTP credential only.
func (a *App) removeTOTP(w http.ResponseWriter, r *http.Request) error {
	return a.deleteFactors(w, r, store.CredentialTOTP)
}

func (a *App) deleteFactors(w http.ResponseWriter, r *http.Request, types ...string) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	totpBefore, err := a.id.UserTOTP(r.Context(), realm, u.ID)
	if err != nil {
		return err
	}
	var keysBefore []*store.WebAuthnCredential
	if len(types) == 0 || slices.Contains(types, store.CredentialWebAuthn) {
		if keysBefore, err = a.store.WebAuthnCredentials(r.Context(), realm.ID, u.ID); err != nil {
			return err
		}
	}
	// Removing a user's factors logs them out everywhere, as an admin's
	// password reset does: a session signed in with a lost or stolen factor
	// does not outlive it. Removing none ends nothing.
	var ended []*store.Session
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		removed, err := tx.DeleteCredentials(r.Context(), realm.ID, u.ID, types...)
		if err != nil || removed == 0 {
			return err
		}
		ended, err = a.id.EndUserAccess(r.Context(), tx, realm.ID, u.ID)
		return err
	})
	if err != nil {
		return err
	}
	a.backchannelLogout(r.Context(), realm, ended)
	if totpBefore != nil {
		a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventRemoveTOTP, UserID: u.ID, IPAddress: a.clientIP(r),
			Details: map[string]string{"username": u.Username, "by": "admin"}})
	}
	for _, k := range keysBefore {
		a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventRemoveCredential, UserID: u.ID, IPAddress: a.clientIP(r),
			Details: map[string]string{"username": u.Username, "by": "admin", "credential_type": credentialTypeWebAuthn,
				"credential_id": k.ID, "credential_user_label": k.Name}})
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
