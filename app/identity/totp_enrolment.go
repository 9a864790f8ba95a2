package identity

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

	"github.com/idenplane/idenplane/store"
)

// Enrolment of the TOTP second factor: the secret, its otpauth key and QR
// code, the first code that confirms it and the recovery codes it gives.
// The account and a sign-in's enrolment step show it, each its own way.

const (
	TOTPSecretSize = 20 // bytes: 160 bits, as RFC 4226 recommends for SHA-1
	// TOTPEnrolmentTTL is how long an unconfirmed secret waits for its
	// first code; a later enrolment starts afresh.
	TOTPEnrolmentTTL = 15 * time.Minute
)

var (
	// ErrNoTOTPEnrolment: a confirmation without an enrolment in progress.
	ErrNoTOTPEnrolment = errors.New("no TOTP enrolment in progress")
	// ErrTOTPEnrolled: an enrolment for a user who has TOTP already.
	ErrTOTPEnrolled = errors.New("TOTP is already set up")
)

// RealmTitle is how a realm names itself to people: its display name, or
// its name.
func RealmTitle(realm *store.Realm) string {
	if realm.DisplayName != "" {
		return realm.DisplayName
	}
	return realm.Name
}

// TOTPKey is the otpauth:// key of a secret: what an authenticator app
// scans. The issuer is the realm as people know it, the account the
// username; a colon would split the label, so none is kept.
func TOTPKey(realm *store.Realm, username string, secret []byte) (*otp.Key, error) {
	return totp.Generate(totp.GenerateOpts{Issuer: strings.ReplaceAll(RealmTitle(realm), ":", ""), AccountName: strings.ReplaceAll(username, ":", ""),
		Period: TOTPPeriod, Secret: secret, Digits: TOTPDigits, Algorithm: otp.AlgorithmSHA1})
}

// QRPNG is the key as a QR code image.
func QRPNG(key *otp.Key) ([]byte, error) {
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

// TOTPEnrolment is an enrolment in progress: the unconfirmed credential
// and what to show for it.
type TOTPEnrolment struct {
	Cred      *store.Credential
	Key       *otp.Key
	PNG       []byte
	ExpiresAt time.Time
}

// Secret is the key's secret, in groups of four for reading aloud or
// typing.
func (e *TOTPEnrolment) Secret() string {
	s := e.Key.Secret()
	var parts []string
	for i := 0; i < len(s); i += 4 {
		parts = append(parts, s[i:min(i+4, len(s))])
	}
	return strings.Join(parts, " ")
}

func (e *TOTPEnrolment) QRDataURL() string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(e.PNG)
}

// totpExpiry is when an enrolment begun at createdAt (Unix milliseconds)
// stops taking its first code.
func totpExpiry(createdAt int64) time.Time {
	return time.UnixMilli(createdAt).Add(TOTPEnrolmentTTL)
}

// BeginTOTP starts, or resumes, an enrolment: the unconfirmed secret stays
// sealed in its row until its first code confirms it. Resuming keeps the
// secret of a QR code already scanned when the page is loaded again.
func (c *Core) BeginTOTP(ctx context.Context, realm *store.Realm, user *store.User) (*TOTPEnrolment, error) {
	if cred, err := c.UserTOTP(ctx, realm, user.ID); err != nil {
		return nil, err
	} else if cred != nil {
		return nil, ErrTOTPEnrolled
	}
	now := c.now()
	cred, err := c.store.PendingCredential(ctx, realm.ID, user.ID, store.CredentialTOTP)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if cred == nil || !now.Before(totpExpiry(cred.CreatedAt)) {
		secret := make([]byte, TOTPSecretSize)
		_, _ = rand.Read(secret)
		cred = &store.Credential{ID: uuid.NewString(), RealmID: realm.ID, UserID: user.ID, Type: store.CredentialTOTP,
			Label: "Authenticator app", Secret: secret, CreatedAt: now.UnixMilli()}
		if err := c.store.BeginCredential(ctx, cred); err != nil {
			return nil, err
		}
	}
	key, err := TOTPKey(realm, user.Username, cred.Secret)
	if err != nil {
		return nil, err
	}
	img, err := QRPNG(key)
	if err != nil {
		return nil, err
	}
	return &TOTPEnrolment{Cred: cred, Key: key, PNG: img, ExpiresAt: totpExpiry(cred.CreatedAt)}, nil
}

// ConfirmTOTP confirms the user's enrolment with its first code, which is
// then used up, and returns the new recovery codes: shown once, kept
// only as hashes. also, when set, runs in the confirming transaction.
func (c *Core) ConfirmTOTP(ctx context.Context, realm *store.Realm, user *store.User, code string, also func(tx *store.Store) error) ([]string, error) {
	if cred, err := c.UserTOTP(ctx, realm, user.ID); err != nil {
		return nil, err
	} else if cred != nil {
		return nil, ErrTOTPEnrolled
	}
	now := c.now()
	cred, err := c.store.PendingCredential(ctx, realm.ID, user.ID, store.CredentialTOTP)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNoTOTPEnrolment
	} else if err != nil {
		return nil, err
	}
	if !now.Before(totpExpiry(cred.CreatedAt)) {
		return nil, ErrNoTOTPEnrolment
	}
	step, ok := TOTPMatch(cred.Secret, code, now, -1)
	if !ok {
		return nil, ErrInvalidTOTP
	}
	codes := NewRecoveryCodes()
	hashes := make([][]byte, len(codes))
	for i, rc := range codes {
		hashes[i] = RecoveryCodeHash(rc)
	}
	err = c.store.Tx(ctx, func(tx *store.Store) error {
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
		return nil, ErrTOTPEnrolled
	case errors.Is(err, store.ErrNotFound): // replaced, confirmed or its sign-in step moved on meanwhile
		return nil, ErrNoTOTPEnrolment
	case err != nil:
		return nil, err
	}
	return codes, nil
}
