package identity

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"

	"github.com/idenplane/idenplane/store"
)

// TOTP second factor (RFC 6238) with Keycloak's defaults: HMAC-SHA1, six
// digits, 30-second steps, a code accepted one step either side of now.
// Each time step is accepted once per credential: the store keeps the
// last step used and refuses any code at or before it. Enrolment is in
// totp_enrolment.go.

// The parameters of every TOTP credential: TOTPPeriod seconds a step,
// TOTPDigits digits, a code accepted totpSkew steps either side of now.
const (
	TOTPPeriod = 30
	TOTPDigits = otp.DigitsSix
	totpSkew   = 1
	// RecoveryCodeCount codes, of recoveryCodeChars base32 characters (80
	// bits each), are given at enrolment.
	RecoveryCodeCount = 10
	recoveryCodeChars = 16
)

// ErrInvalidTOTP is a TOTP code that is malformed, wrong, outside the
// accepted window or already used, or a recovery code not usable.
var ErrInvalidTOTP = errors.New("invalid TOTP or recovery code")

var totpBase32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// totpStepAt is the time step of t.
func totpStepAt(t time.Time) int64 { return t.Unix() / TOTPPeriod }

// TOTPMatch finds the time step, within the skew around now and later
// than after, whose code is code. Every candidate is computed and
// compared in constant time, so timing tells nothing of which matched.
func TOTPMatch(secret []byte, code string, now time.Time, after int64) (int64, bool) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != TOTPDigits.Length() || strings.Trim(code, "0123456789") != "" {
		return 0, false
	}
	current := totpStepAt(now)
	found, ok := int64(0), false
	for step := current - totpSkew; step <= current+totpSkew; step++ {
		match, err := hotp.ValidateCustom(code, uint64(step), totpBase32.EncodeToString(secret),
			hotp.ValidateOpts{Digits: TOTPDigits, Algorithm: otp.AlgorithmSHA1})
		if err == nil && match && step > after && !ok {
			found, ok = step, true
		}
	}
	return found, ok
}

// NewRecoveryCodes makes a set of recovery codes, grouped by four for
// reading: "abcd-efgh-ijkl-mnop".
func NewRecoveryCodes() []string {
	codes := make([]string, RecoveryCodeCount)
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

// RecoveryCodeHash is what the store keeps of a recovery code: the hash of
// its canonical form, so spacing, dashes and case typed don't matter.
func RecoveryCodeHash(code string) []byte {
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

// UserTOTP is the user's confirmed TOTP credential, nil when none.
func (c *Core) UserTOTP(ctx context.Context, realm *store.Realm, userID string) (*store.Credential, error) {
	creds, err := c.store.Credentials(ctx, realm.ID, userID)
	if err != nil {
		return nil, err
	}
	for _, cred := range creds {
		if cred.Type == store.CredentialTOTP {
			return cred, nil
		}
	}
	return nil, nil
}

// verifyTOTP checks a code of the user's authenticator and uses up its
// time step. Any refusal, a replay included, is ErrInvalidTOTP.
func (c *Core) verifyTOTP(ctx context.Context, realm *store.Realm, userID, code string) error {
	cred, err := c.UserTOTP(ctx, realm, userID)
	if err != nil {
		return err
	}
	if cred == nil {
		return ErrInvalidTOTP
	}
	step, ok := TOTPMatch(cred.Secret, code, c.now(), cred.LastUsedStep)
	if !ok {
		return ErrInvalidTOTP
	}
	// The store decides, atomically: of two sign-ins with one code, one wins.
	if err := c.store.UseCredentialStep(ctx, realm.ID, cred.ID, step); errors.Is(err, store.ErrStepUsed) {
		return ErrInvalidTOTP
	} else if err != nil {
		return err
	}
	return nil
}

// useRecoveryCode spends one of the user's recovery codes in place of a
// TOTP code.
func (c *Core) useRecoveryCode(ctx context.Context, realm *store.Realm, userID, code string) error {
	if strings.TrimSpace(code) == "" {
		return ErrInvalidTOTP
	}
	err := c.store.UseRecoveryCode(ctx, realm.ID, userID, RecoveryCodeHash(code), c.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return ErrInvalidTOTP
	}
	return err
}

// NeedsSecondFactor says what a user who gave the right password still
// owes before signing in: a TOTP code when enrolled; else an assertion of
// a WebAuthn credential when the user has one; an enrolment when the
// realm requires a second factor and the user has none; else nothing.
func (c *Core) NeedsSecondFactor(ctx context.Context, realm *store.Realm, userID string) (string, error) {
	types, err := c.store.CredentialTypes(ctx, realm.ID, userID)
	if err != nil {
		return "", err
	}
	switch {
	case slices.Contains(types, store.CredentialTOTP):
		return store.StepTOTP, nil
	case slices.Contains(types, store.CredentialWebAuthn):
		return store.StepWebAuthn, nil
	}
	if realm.MFARequired && len(types) == 0 {
		return store.StepTOTPSetup, nil
	}
	return "", nil
}
