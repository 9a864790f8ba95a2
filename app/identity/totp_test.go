package identity

import (
	"bytes"
	"encoding/base32"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// Codes in these tests come from pquerna/otp's own generator at times the
// test chooses.

const totpTestStep = TOTPPeriod * time.Second

// totpTestCode is the code of a base32 secret at time at.
func totpTestCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: TOTPPeriod, Digits: otp.DigitsSix,
		Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// totpTestWrongCode is a well-formed code that is not code.
func totpTestWrongCode(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

func TestTOTPMatch(t *testing.T) {
	secret := []byte("12345678901234567890")
	b32 := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret)
	// RFC 6238 appendix B: SHA-1 at T = 59 s is 94287082; six digits keep 287082.
	if step, ok := TOTPMatch(secret, "287082", time.Unix(59, 0), 0); !ok || step != 1 {
		t.Fatalf("RFC 6238 vector 287082 at 59 s: step %d, %v; want step 1", step, ok)
	}
	now := time.Unix(1_800_000_015, 0) // mid-step
	step := totpStepAt(now)
	at := func(k int) string { return totpTestCode(t, b32, now.Add(time.Duration(k)*totpTestStep)) }
	for _, tc := range []struct {
		name     string
		code     string
		after    int64
		wantStep int64
		ok       bool
	}{
		{"current step", at(0), 0, step, true},
		{"one step back", at(-1), 0, step - 1, true},
		{"one step ahead", at(1), 0, step + 1, true},
		{"two steps back", at(-2), 0, 0, false},
		{"two steps ahead", at(2), 0, 0, false},
		{"current step already used", at(0), step, 0, false},
		{"an earlier step than the last used", at(-1), step, 0, false},
		{"a later step than the last used", at(1), step, step + 1, true},
		{"spaces typed", at(0)[:3] + " " + at(0)[3:] + " ", 0, step, true},
		{"wrong code", totpTestWrongCode(at(0)), 0, 0, false},
		{"five digits", at(0)[:5], 0, 0, false},
		{"seven digits", at(0) + "1", 0, 0, false},
		{"letters", "abcdef", 0, 0, false},
		{"empty", "", 0, 0, false},
	} {
		got, ok := TOTPMatch(secret, tc.code, now, tc.after)
		if ok != tc.ok || got != tc.wantStep {
			t.Errorf("%s: step %d ok %v, want %d %v", tc.name, got, ok, tc.wantStep, tc.ok)
		}
	}
}

func TestRecoveryCodes(t *testing.T) {
	codes := NewRecoveryCodes()
	format := regexp.MustCompile(`^[a-z2-7]{4}(-[a-z2-7]{4}){3}$`)
	if len(codes) != RecoveryCodeCount {
		t.Fatalf("%d codes, want %d", len(codes), RecoveryCodeCount)
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if !format.MatchString(c) || seen[c] {
			t.Errorf("code %q, want four groups of four base32 characters, each code once", c)
		}
		seen[c] = true
	}
	// What people type differently is the same code; another code is not.
	want := RecoveryCodeHash(codes[0])
	for _, typed := range []string{" " + codes[0] + " ", strings.ReplaceAll(codes[0], "-", " "), strings.ToUpper(codes[0]),
		strings.ReplaceAll(codes[0], "-", "")} {
		if !bytes.Equal(RecoveryCodeHash(typed), want) {
			t.Errorf("%q hashes differently from %q", typed, codes[0])
		}
	}
	if bytes.Equal(RecoveryCodeHash(codes[1]), want) {
		t.Fatal("two codes hash alike")
	}
}
