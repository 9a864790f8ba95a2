// Package webauthnrp holds the rules of WebAuthn (go-webauthn) for every
// realm as a relying party: the relying party of a realm, a user's
// credentials, the ceremonies kept server-side, the registration of a
// credential and the check of an assertion (its ceremony, its user, the
// signature counter against cloning, the realm's brute-force policy and
// the flood guard through identity.AssertionCheck). It has no HTTP of its
// own: the handlers of app, the sign-in's steps (app/signin) and the
// step-up call it, each answering in its own protocol. It sits below
// app/identity's core, apart from it, because go-webauthn brings
// net/http with it, which the core never depends on.
//
// Every realm is its own relying party: RP ID the base URL's host, origin
// the base URL's scheme, host and port, name the realm's display name.
// docs/decisions.md, "WebAuthn and passkeys", records the choices.
package webauthnrp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

const (
	// CeremonyTTL is how long a ceremony waits for the authenticator's
	// response; the browser is told the same timeout.
	CeremonyTTL = 5 * time.Minute
	// handleSize is the size of a user handle: the maximum, all random,
	// so it says nothing about the user.
	handleSize = 64

	// How a WebAuthn credential authenticates (RFC 8176): a key held by a
	// device (hwk), or one that may be copied between devices, as a synced
	// passkey is (swk, when the authenticator says the key is backup
	// eligible); mfa when the authenticator verified the user too (PIN or
	// biometrics), so the key alone is two factors.
	AMRHardwareKey = "hwk"
	AMRSoftwareKey = "swk"
	AMRMFA         = "mfa"
)

var (
	// ErrUnavailable: WebAuthn binds credentials to a domain, so a base
	// URL that is an IP address cannot serve it.
	ErrUnavailable = apperr.New(http.StatusServiceUnavailable, apperr.CodeWebAuthnUnavailable, "WebAuthn needs the server's base URL to name a domain (such as localhost), not an IP address: set --base-url (IDENPLANE_BASE_URL)")
	// ErrCeremony is a ceremony unknown, of another kind or user, used
	// already or expired.
	ErrCeremony = apperr.New(http.StatusBadRequest, apperr.CodeInvalidCeremony, "the ceremony is unknown, already answered or expired: ask for new options")
)

// Deps is what the relying parties work with.
type Deps struct {
	Store   *store.Store
	Core    *identity.Core // the books of every assertion's check
	BaseURL string
	Now     func() time.Time // nil means time.Now
	Log     *slog.Logger     // nil discards
}

// Service is the realms as WebAuthn relying parties. Its methods are safe
// for concurrent use.
type Service struct {
	store   *store.Store
	core    *identity.Core
	baseURL string
	now     func() time.Time
	log     *slog.Logger
}

func New(d Deps) *Service {
	s := &Service{store: d.Store, core: d.Core, baseURL: d.BaseURL, now: d.Now, log: d.Log}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Host is the RP ID and origin of the base URL, or ErrUnavailable when
// its host is an IP address.
func (s *Service) Host() (rpID, origin string, err error) {
	u, err := url.Parse(s.baseURL)
	if err != nil || u.Hostname() == "" {
		return "", "", fmt.Errorf("base URL %q: %w", s.baseURL, ErrUnavailable)
	}
	if net.ParseIP(u.Hostname()) != nil {
		return "", "", ErrUnavailable
	}
	return strings.ToLower(u.Hostname()), u.Scheme + "://" + u.Host, nil
}

// Available tells whether the base URL lets the realms offer WebAuthn.
func (s *Service) Available() bool {
	_, _, err := s.Host()
	return err == nil
}

// relyingParty is the realm as a WebAuthn relying party.
func (s *Service) relyingParty(realm *store.Realm) (*webauthn.WebAuthn, error) {
	rpID, origin, err := s.Host()
	if err != nil {
		return nil, err
	}
	timeout := webauthn.TimeoutConfig{Timeout: CeremonyTTL, TimeoutUVD: CeremonyTTL}
	return webauthn.New(&webauthn.Config{
		RPID:          rpID,
		RPDisplayName: identity.RealmTitle(realm),
		RPOrigins:     []string{origin},
		// No attestation: the server trusts no authenticator maker over
		// another, and asking would show people a privacy prompt.
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred, // a passkey where the authenticator can keep one
			UserVerification: protocol.VerificationPreferred,
		},
		// The ceremony's expiry is the store's, on the server's clock.
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
}

// User is a user as go-webauthn sees one: the user handle and the
// registered credentials, their records decoded.
type User struct {
	user    *store.User
	handle  []byte
	creds   []*store.WebAuthnCredential
	records []webauthn.Credential
}

func (u *User) WebAuthnID() []byte                         { return u.handle }
func (u *User) WebAuthnName() string                       { return u.user.Username }
func (u *User) WebAuthnCredentials() []webauthn.Credential { return u.records }

func (u *User) WebAuthnDisplayName() string {
	if name := strings.TrimSpace(u.user.FirstName + " " + u.user.LastName); name != "" {
		return name
	}
	return u.user.Username
}

// stored is the stored credential of a record.
func (u *User) stored(credentialID []byte) *store.WebAuthnCredential {
	for _, c := range u.creds {
		if bytes.Equal(c.CredentialID, credentialID) {
			return c
		}
	}
	return nil
}

// loadUser reads the user's handle (made on first use) and credentials.
// The stored counter is the one that counts: the record's is set from it.
func (s *Service) loadUser(ctx context.Context, realm *store.Realm, user *store.User) (*User, error) {
	fresh := make([]byte, handleSize)
	_, _ = rand.Read(fresh)
	handle, err := s.store.WebAuthnUserHandle(ctx, realm.ID, user.ID, fresh)
	if err != nil {
		return nil, err
	}
	creds, err := s.store.WebAuthnCredentials(ctx, realm.ID, user.ID)
	if err != nil {
		return nil, err
	}
	u := &User{user: user, handle: handle, creds: creds}
	for _, c := range creds {
		rec, err := DecodeRecord(c)
		if err != nil {
			return nil, err
		}
		u.records = append(u.records, *rec)
	}
	return u, nil
}

// LoginUser is user with the credentials to assert, or nil for a user
// without any.
func (s *Service) LoginUser(ctx context.Context, realm *store.Realm, user *store.User) (*User, error) {
	creds, err := s.store.WebAuthnCredentials(ctx, realm.ID, user.ID)
	if err != nil || len(creds) == 0 {
		return nil, err
	}
	return s.loadUser(ctx, realm, user)
}

// DecodeRecord is a stored credential's go-webauthn record, with the
// stored signature counter.
func DecodeRecord(c *store.WebAuthnCredential) (*webauthn.Credential, error) {
	var rec webauthn.Credential
	if err := json.Unmarshal(c.Data, &rec); err != nil {
		return nil, fmt.Errorf("WebAuthn credential %s: decode record: %w", c.ID, err)
	}
	rec.Authenticator.SignCount = uint32(c.SignCount)
	return &rec, nil
}

// Options are a begun ceremony: its ID, for the answer to name, and the
// options for navigator.credentials.create() or get(), binary members in
// base64url.
type Options struct {
	CeremonyID string
	PublicKey  any
}

// beginCeremony keeps a ceremony's session data server-side and returns
// the ID the client names it by.
func (s *Service) beginCeremony(ctx context.Context, realm *store.Realm, userID, kind string, session *webauthn.SessionData) (string, error) {
	data, err := json.Marshal(session)
	if err != nil {
		return "", fmt.Errorf("encode WebAuthn session: %w", err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	id := base64.RawURLEncoding.EncodeToString(b)
	err = s.store.CreateWebAuthnCeremony(ctx, &store.WebAuthnCeremony{ID: id, RealmID: realm.ID, UserID: userID, Kind: kind,
		SessionData: data, ExpiresAt: s.now().Add(CeremonyTTL).UnixMilli()})
	if err != nil {
		return "", err
	}
	return id, nil
}

// takeCeremony uses up the realm's ceremony id of kind: right or wrong,
// its response is checked once.
func (s *Service) takeCeremony(ctx context.Context, realm *store.Realm, id, kind string) (*store.WebAuthnCeremony, *webauthn.SessionData, error) {
	if id == "" {
		return nil, nil, ErrCeremony
	}
	c, err := s.store.TakeWebAuthnCeremony(ctx, realm.ID, id, s.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, ErrCeremony
	} else if err != nil {
		return nil, nil, err
	}
	if c.Kind != kind {
		return nil, nil, ErrCeremony
	}
	var session webauthn.SessionData
	if err := json.Unmarshal(c.SessionData, &session); err != nil {
		return nil, nil, fmt.Errorf("decode WebAuthn session: %w", err)
	}
	return c, &session, nil
}
