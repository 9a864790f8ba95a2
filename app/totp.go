package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/store"
)

// TOTP second factor (RFC 6238) with Keycloak's defaults: HMAC-SHA1, six
// digits, 30-second steps, a code accepted one step either side of now.
// Each time step is accepted once per credential: the store keeps the
// last step used and refuses any code at or before it.

const (
	totpPeriod     = 30
	totpDigits     = otp.DigitsSix
	totpSkew       = 1
	totpSecretSize = 20 // bytes: 160 bits, as RFC 4226 recommends for SHA-1
	// totpEnrolmentTTL is how long an unconfirmed secret waits for its
	// first code; a later enrolment starts afresh.
	totpEnrolmentTTL = 15 * time.Minute
	// recoveryCodeCount codes, of recoveryCodeChars base32 characters (80
	// bits each), are given at enrolment.
	recoveryCodeCount = 10
	recoveryCodeChars = 16
	// amrOTP is how a TOTP or recovery code authenticates (RFC 8176).
	amrOTP = "otp"
)

var (
	// errInvalidTOTP: a TOTP code that is malformed, wrong, outside the
	// accepted window or already used, or a recovery code not usable.
	errInvalidTOTP = errors.New("invalid TOTP or recovery code")
	// errNoEnrolment: a confirmation without an enrolment in progress.
	errNoEnrolment = errors.New("no TOTP enrolment in progress")
	// errTOTPEnrolled: an enrolment for a user who has TOTP already.
	errTOTPEnrolled = errors.New("TOTP is already set up")
)

var totpBase32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// totpStepAt is the time step of t.
func totpStepAt(t time.Time) int64 { return t.Unix() / totpPeriod }

// totpMatch finds the time step, within the skew around now and later
// than after, whose code is code. Every candidate is computed and
// compared in constant time, so timing tells nothing of which matched.
func totpMatch(secret []byte, code string, now time.Time, after int64) (int64, bool) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != totpDigits.Length() || strings.Trim(code, "0123456789") != "" {
		return 0, false
	}
	current := totpStepAt(now)
	found, ok := int64(0), false
	for step := current - totpSkew; step <= current+totpSkew; step++ {
		match, err := hotp.ValidateCustom(code, uint64(step), totpBase32.EncodeToString(secret),
			hotp.ValidateOpts{Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
		if err == nil && match && step > after && !ok {
			found, ok = step, true
		}
	}
	return found, ok
}

// totpKey is the otpauth:// key of a secret: what an authenticator app
// scans. The issuer is the realm as people know it, the account the
// username; a colon would split the label, so none is kept.
func totpKey(realm *store.Realm, username string, secret []byte) (*otp.Key, error) {
	issuer := strings.ReplaceAll(realmTitle(realm), ":", "")
	return totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: strings.ReplaceAll(username, ":", ""),
		Period: totpPeriod, Secret: secret, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
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

// newRecoveryCodes makes a set of recovery codes, grouped by four for
// reading: "abcd-efgh-ijkl-mnop".
func newRecoveryCodes() []string {
	codes := make([]string, recoveryCodeCount)
	for i := range codes {
		b := make([]byte, recoveryCodeChars*5/8)
		_, _ = rand.Read(b)
		raw := strings.ToLower(totpBase32.EncodeToString(b))
		var parts []string
		for j := 0; j < len(raw); j += 4 {
			parts = append(parts, raw[j:j+4])
		}
		codes[i] = strings.Join(parts, "-")
	}
	return codes
}

// recoveryCodeHash is what the store keeps of a recovery code: the hash of
// its canonical form, so spacing, dashes and case typed don't matter.
func recoveryCodeHash(code string) []byte {
	canon := strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ' || r == '\t':
			return -1
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return r
	}, code)
	return store.HashToken("recovery:" + canon)
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

// userTOTP is the user's confirmed TOTP credential, nil when none.
func (a *App) userTOTP(ctx context.Context, realm *store.Realm, userID string) (*store.Credential, error) {
	creds, err := a.store.Credentials(ctx, realm.ID, userID)
	if err != nil {
		return nil, err
	}
	for _, c := range creds {
		if c.Type == store.CredentialTOTP {
			return c, nil
		}
	}
	return nil, nil
}

// beginTOTP starts, or resumes, an enrolment: the unconfirmed secret stays
// sealed in its row until its first code confirms it. Resuming keeps the
// secret of a QR code already scanned when the page is loaded again.
func (a *App) beginTOTP(ctx context.Context, realm *store.Realm, user *store.User) (*totpEnrolment, error) {
	if c, err := a.userTOTP(ctx, realm, user.ID); err != nil {
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
	if c, err := a.userTOTP(ctx, realm, user.ID); err != nil {
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
	step, ok := totpMatch(cred.Secret, code, now, -1)
	if !ok {
		return nil, errInvalidTOTP
	}
	codes := newRecoveryCodes()
	hashes := make([][]byte, len(codes))
	for i, c := range codes {
		hashes[i] = recoveryCodeHash(c)
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

// verifyTOTP checks a code of the user's authenticator and uses up its
// time step. Any refusal, a replay included, is errInvalidTOTP.
func (a *App) verifyTOTP(ctx context.Context, realm *store.Realm, userID, code string) error {
	cred, err := a.userTOTP(ctx, realm, userID)
	if err != nil {
		return err
	}
	if cred == nil {
		return errInvalidTOTP
	}
	step, ok := totpMatch(cred.Secret, code, a.now(), cred.LastUsedStep)
	if !ok {
		return errInvalidTOTP
	}
	// The store decides, atomically: of two sign-ins with one code, one wins.
	if err := a.store.UseCredentialStep(ctx, realm.ID, cred.ID, step); errors.Is(err, store.ErrStepUsed) {
		return errInvalidTOTP
	} else if err != nil {
		return err
	}
	return nil
}

// looksLikeTOTP says whether a code typed in a field that takes either
// kind is a TOTP code (six digits, spaces aside) rather than a recovery
// code (sixteen characters).
func looksLikeTOTP(code string) bool {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	return len(code) == totpDigits.Length() && strings.Trim(code, "0123456789") == ""
}

// useRecoveryCode spends one of the user's recovery codes in place of a
// TOTP code.
func (a *App) useRecoveryCode(ctx context.Context, realm *store.Realm, userID, code string) error {
	if strings.TrimSpace(code) == "" {
		return errInvalidTOTP
	}
	err := a.store.UseRecoveryCode(ctx, realm.ID, userID, recoveryCodeHash(code), a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return errInvalidTOTP
	}
	return err
}

// needsSecondFactor says what a user who gave the right password still
// owes before signing in: a TOTP code when enrolled; else an assertion of
// a WebAuthn credential when the user has one; an enrolment when the
// realm requires a second factor and the user has none; else nothing.
func (a *App) needsSecondFactor(ctx context.Context, realm *store.Realm, userID string) (string, error) {
	types, err := a.store.CredentialTypes(ctx, realm.ID, userID)
	if err != nil {
		return "", err
	}
	switch {
	case slices.Contains(types, store.CredentialTOTP):
		return store.StepTOTP, nil
	case slices.Contains(types, store.CredentialWebAuthn): // webauthn_login.go
		return store.StepWebAuthn, nil
	}
	if realm.MFARequired && len(types) == 0 {
		return store.StepTOTPSetup, nil
	}
	return "", nil
}

// passwordGrantSecondFactor refuses the password grant to a user who owes
// a second factor: the grant has no field for it (Keycloak's totp
// parameter is not offered), so the user signs in through the browser.
func (a *App) passwordGrantSecondFactor(ctx context.Context, realm *store.Realm, client *store.Client, user *store.User, ip string) error {
	pending, err := a.needsSecondFactor(ctx, realm, user.ID)
	if err != nil || pending == "" {
		return err
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: "LOGIN_ERROR", UserID: user.ID, ClientID: client.ClientID, IPAddress: ip,
		Error: "invalid_user_credentials", Details: map[string]string{"username": user.Username, "grant_type": grantPassword,
			"reason": "second factor required"}})
	return oidc.ErrInvalidGrant().WithDescription("second factor required: sign in through the browser")
}
