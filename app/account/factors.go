package account

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// Credential types, as Keycloak names them.
const (
	credentialPassword = "password"
	credentialOTP      = "otp"
)

// AccountCredential is what the account shows of one of the user's
// credentials: its type and when it was set, never the secret or a hash.
type AccountCredential struct {
	Type        string `json:"type"`
	CreatedDate int64  `json:"createdDate,omitempty"` // Unix milliseconds; 0 when unknown
}

// Credentials lists the credentials a user has enrolled. Each kind
// of credential adds itself here.
func (s *Service) Credentials(ctx context.Context, realm *store.Realm, user *store.User) ([]AccountCredential, error) {
	creds := []AccountCredential{}
	if user.PasswordHash != "" {
		creds = append(creds, AccountCredential{Type: credentialPassword, CreatedDate: user.PasswordChangedAt})
	}
	factors, err := s.deps.Store.Credentials(ctx, realm.ID, user.ID)
	if err != nil {
		return nil, err
	}
	for _, f := range factors {
		if f.Type == store.CredentialTOTP {
			creds = append(creds, AccountCredential{Type: credentialOTP, CreatedDate: f.CreatedAt})
		}
	}
	// Security keys and passkeys are one method, however many the user has.
	if c, err := s.accountWebAuthnCredential(ctx, realm, user); err != nil {
		return nil, err
	} else if c != nil {
		creds = append(creds, *c)
	}
	return creds, nil
}

// accountFactors names the authentication factors a user has enrolled,
// in the order of Credentials.
func (s *Service) accountFactors(ctx context.Context, realm *store.Realm, user *store.User) ([]string, error) {
	creds, err := s.Credentials(ctx, realm, user)
	if err != nil {
		return nil, err
	}
	factors := make([]string, len(creds))
	for i, c := range creds {
		factors[i] = c.Type
	}
	return factors, nil
}
