package webauthnrp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	// NameMax caps a credential's name, in characters.
	NameMax = 64
	// defaultName names a credential registered without one.
	defaultName = "Passkey"
)

// ErrRegistered is an authenticator registered already.
var ErrRegistered = apperr.New(http.StatusConflict, apperr.CodeConflict, "this authenticator is registered already")

// CredentialName checks a credential's name: trimmed, a display name of
// at most NameMax characters; "" gets the default.
func CredentialName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return defaultName, nil
	}
	return name, validate.DisplayName("name", name, NameMax)
}

// BeginRegistration begins a registration for user: a passkey where the
// authenticator can keep one, the user's credentials excluded so an
// authenticator is not registered twice.
func (s *Service) BeginRegistration(ctx context.Context, realm *store.Realm, user *store.User) (*Options, error) {
	rp, err := s.relyingParty(realm)
	if err != nil {
		return nil, err
	}
	u, err := s.loadUser(ctx, realm, user)
	if err != nil {
		return nil, err
	}
	exclude := make([]protocol.CredentialDescriptor, len(u.records))
	for i, rec := range u.records {
		exclude[i] = rec.Descriptor()
	}
	creation, session, err := rp.BeginRegistration(u, webauthn.WithExclusions(exclude))
	if err != nil {
		return nil, fmt.Errorf("begin WebAuthn registration: %w", err)
	}
	id, err := s.beginCeremony(ctx, realm, user.ID, store.CeremonyRegister, session)
	if err != nil {
		return nil, err
	}
	return &Options{CeremonyID: id, PublicKey: creation.Response}, nil
}

// FinishRegistration verifies the registration response credential (the
// JSON of navigator.credentials.create()'s answer) to user's ceremony and
// stores the credential under name. Its errors are API errors (a page
// shows their description).
func (s *Service) FinishRegistration(ctx context.Context, realm *store.Realm, user *store.User, ceremonyID, name string, credential []byte) (*store.WebAuthnCredential, error) {
	name, err := CredentialName(name)
	if err != nil {
		return nil, err
	}
	if len(credential) == 0 {
		return nil, apperr.Field("credential", "is required: the PublicKeyCredential navigator.credentials.create() returned, as JSON")
	}
	rp, err := s.relyingParty(realm)
	if err != nil {
		return nil, err
	}
	ceremony, session, err := s.takeCeremony(ctx, realm, ceremonyID, store.CeremonyRegister)
	if err != nil {
		return nil, err
	}
	if ceremony.UserID != user.ID {
		return nil, ErrCeremony
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(credential)
	if err != nil {
		return nil, Refusal("credential", err)
	}
	u, err := s.loadUser(ctx, realm, user)
	if err != nil {
		return nil, err
	}
	rec, err := rp.CreateCredential(u, *session, parsed)
	if err != nil {
		return nil, Refusal("credential", err)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode WebAuthn credential: %w", err)
	}
	cred := &store.WebAuthnCredential{ID: uuid.NewString(), RealmID: realm.ID, UserID: user.ID, Name: name,
		CredentialID: rec.ID, Data: data, SignCount: int64(rec.Authenticator.SignCount), CreatedAt: s.now().UnixMilli()}
	if err := s.store.AddWebAuthnCredential(ctx, cred); errors.Is(err, store.ErrConflict) {
		return nil, ErrRegistered
	} else if err != nil {
		return nil, err
	}
	return cred, nil
}

// Refusal is a response the library refused, described by its public
// details (never its debugging information).
func Refusal(field string, err error) *apperr.Error {
	detail := "the authenticator's response could not be verified"
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		detail = pe.Details
	}
	return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidField, Field: field, Message: field + ": " + detail, Cause: err}
}
