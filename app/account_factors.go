package app

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// Credential types, as Keycloak names them.
const (
	credentialPassword = "password"
	credentialOTP      = "otp"
)

// accountCredential is what the account shows of one of the user's
// credentials: its type and when it was set, never the secret or a hash.
type accountCredential struct {
	Type        string `json:"type"`
	CreatedDate int64  `json:"createdDate,omitempty"` // Unix milliseconds; 0 when unknown
}

// accountCredentials lists the credentials a user has enrolled. Each kind
// of credential adds itself here.
func (a *App) accountCredentials(ctx context.Context, realm *store.Realm, user *store.User) ([]accountCredential, error) {
	creds := []accountCredential{}
	if user.PasswordHash != "" {
		creds = append(creds, accountCredential{Type: credentialPassword, CreatedDate: user.PasswordChangedAt})
	}
	factors, err := a.store.Credentials(ctx, realm.ID, user.ID)
	if err != nil {
		return nil, err
	}
	for _, f := range factors {
		if f.Type == store.CredentialTOTP {
			creds = append(creds, accountCredential{Type: credentialOTP, CreatedDate: f.CreatedAt})
		}
	}
	// Security keys and passkeys are one method, however many the user has.
	if c, err := a.accountWebAuthnCredential(ctx, realm, user); err != nil {
		return nil, err
	} else if c != nil {
		creds = append(creds, *c)
	}
	return creds, nil
}

// accountFactors names the authentication factors a user has enrolled,
// in the order of accountCredentials.
func (a *App) accountFactors(ctx context.Context, realm *store.Realm, user *store.User) ([]string, error) {
	creds, err := a.accountCredentials(ctx, realm, user)
	if err != nil {
		return nil, err
	}
	factors := make([]string, len(creds))
	for i, c := range creds {
		factors[i] = c.Type
	}
	return factors, nil
}
