package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Enrolment of the TOTP second factor: the secret, its otpauth key and QR
// code, the first code. Checking a code is the identity core's
// (identity.CheckOneTimeCode), with its rules of time steps.

const (
	totpSecretSize = 20 // bytes: 160 bits, as RFC 4226 recommends for SHA-1
	// totpEnrolmentTTL is how long an unconfirmed secret waits for its
	// first code; a later enrolment starts afresh.
	totpEnrolmentTTL = 15 * time.Minute
	// amrOTP is how a TOTP or recovery code authenticates (RFC 8176).
	amrOTP = "otp"
)

var (
	// errNoEnrolment: a confirmation without an enrolment in progress.
	errNoEnrolment = errors.New("no TOTP enrolment in progress")
	// errTOTPEnrolled: an enrolment for a user who has TOTP already.
	errTOTPEnrolled = errors.New("TOTP is already set up")
)

// totpKey is the otpauth:// key of a secret: what an authenticator app
// scans. The issuer is the realm as people know it, the account the
// username; a colon would split the label, so none is kept.
func totpKey(realm *store.Realm, username string, secret []byte) (*otp.Key, error) {
	issuer := strings.ReplaceAll(signin.RealmTitle(realm), ":", "")
	return totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: strings.ReplaceAll(username, ":", ""),
		Period: identity.TOTPPeriod, Secret: secret, Digits: identity.TOTPDigits, Algorithm: otp.AlgorithmSHA1})
}

// qrPNG is the key as a QR code image.
func qrPNG(key *otp.Key) ([]byte, error) {
	img, err := key.Image(256, 256)
	if err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	return b.Bytes(), nil
}

// totpEnrolment is an enrolment in progress: the unconfirmed credential
// and what to show for it.
type totpEnrolment struct {
	cred      *store.Credential
	key       *otp.Key
	png       []byte
	expiresAt time.Time
}

// secret is the key's secret, in groups of four for reading aloud or
// typing.
func (e *totpEnrolment) secret() string {
	s := e.key.Secret()
	var parts []string
	for i := 0; i < len(s); i += 4 {
		parts = append(parts, s[i:min(i+4, len(s))])
	}
	return strings.Join(parts, " ")
}

func (e *totpEnrolment) qrDataURL() string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(e.png)
}

// totpExpiry is when an enrolment begun at createdAt (Unix milliseconds)
// stops taking its first code.
func totpExpiry(createdAt int64) time.Time {
	return time.UnixMilli(createdAt).Add(totpEnrolmentTTL)
}

// beginTOTP starts, or resumes, an enrolment: the unconfirmed secret stays
// sealed in its row until its first code confirms it. Resuming keeps the
// secret of a QR code already scanned when the page is loaded again.
func (a *App) beginTOTP(ctx context.Context, realm *store.Realm, user *store.User) (*totpEnrolment, error) {
	if c, err := a.id.UserTOTP(ctx, realm, user.ID); err != nil {
		return nil, err
	} else if c != nil {
		return nil, errTOTPEnrolled
	}
	now := a.now()
	cred, err := a.store.PendingCredential(ctx, realm.ID, user.ID, store.CredentialTOTP)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if cred == nil || !now.Before(totpExpiry(cred.CreatedAt)) {
		secret := make([]byte, totpSecretSize)
		_, _ = rand.Read(secret)
		cred = &store.Credential{ID: uuid.NewString(), RealmID: realm.ID, UserID: user.ID, Type: store.CredentialTOTP,
			Label: "Authenticator app", Secret: secret, CreatedAt: now.UnixMilli()}
		if err := a.store.BeginCredential(ctx, cred); err != nil {
			return nil, err
		}
	}
	key, err := totpKey(realm, user.Username, cred.Secret)
	if err != nil {
		return nil, err
	}
	img, err := qrPNG(key)
	if err != nil {
		return nil, err
	}
	return &totpEnrolment{cred: cred, key: key, png: img, expiresAt: totpExpiry(cred.CreatedAt)}, nil
}

// confirmTOTP confirms the user's enrolment with its first code, which is
// then used up, and returns the new recovery codes: shown once, kept
// only as hashes. also, when set, runs in the confirming transaction.
func (a *App) confirmTOTP(ctx context.Context, realm *store.Realm, user *store.User, code string, also func(tx *store.Store) error) ([]string, error) {
	if c, err := a.id.UserTOTP(ctx, realm, user.ID); err != nil {
		return nil, err
	} else if c != nil {
		return nil, errTOTPEnrolled
	}
	now := a.now()
	cred, err := a.store.PendingCredential(ctx, realm.ID, user.ID, store.CredentialTOTP)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoEnrolment
	} else if err != nil {
		return nil, err
	}
	if !now.Before(totpExpiry(cred.CreatedAt)) {
		return nil, errNoEnrolment
	}
	step, ok := identity.TOTPMatch(cred.Secret, code, now, -1)
	if !ok {
		return nil, identity.ErrInvalidTOTP
	}
	codes := identity.NewRecoveryCodes()
	hashes := make([][]byte, len(codes))
	for i, c := range codes {
		hashes[i] = identity.RecoveryCodeHash(c)
	}
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.ConfirmCredential(ctx, realm.ID, cred.ID, step, hashes, now.UnixMilli()); err != nil {
			return err
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
	switch {
	case errors.Is(err, store.ErrConflict):
		return nil, errTOTPEnrolled
	case errors.Is(err, store.ErrNotFound): // replaced, confirmed or its sign-in step moved on meanwhile
		return nil, errNoEnrolment
	case err != nil:
		return nil, err
	}
	return codes, nil
}

// looksLikeTOTP says whether a code typed in a field that takes either
// kind is a TOTP code (six digits, spaces aside) rather than a recovery
// code (sixteen characters).
func looksLikeTOTP(code string) bool {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	return len(code) == identity.TOTPDigits.Length() && strings.Trim(code, "0123456789") == ""
}

// passwordGrantSecondFactor refuses the password grant to a user who owes
// a second factor: the grant has no field for it (Keycloak's totp
// parameter is not offered), so the user signs in through the browser.
func (a *App) passwordGrantSecondFactor(ctx context.Context, realm *store.Realm, client *store.Client, user *store.User, ip string) error {
	pending, err := a.id.NeedsSecondFactor(ctx, realm, user.ID)
	if err != nil || pending == "" {
		return err
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: "LOGIN_ERROR", UserID: user.ID, ClientID: client.ClientID, IPAddress: ip,
		Error: "invalid_user_credentials", Details: map[string]string{"username": user.Username, "grant_type": identity.GrantPassword,
			"reason": "second factor required"}})
	return oidc.ErrInvalidGrant().WithDescription("second factor required: sign in through the browser")
}
