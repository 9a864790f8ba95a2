package app

import (
	"bytes"
	"encoding/base32"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/idenplane/idenplane/store"
)

// Codes in these tests come from pquerna/otp's own generator at times the
// test chooses, against the server's controllable clock.

const totpTestStep = totpPeriod * time.Second

// totpTestCode is the code of a base32 secret at time at.
func totpTestCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix,
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

// totpAlign moves the server's clock one second into the next time step,
// so that codes computed for now stay valid until the test moves on.
func (e *codeflowEnv) totpAlign() {
	now := e.clock.now()
	next := time.Unix((now.Unix()/totpPeriod+1)*totpPeriod+1, 0)
	e.clock.advance(next.Sub(now))
}

// totpEnrol gives a user of acme a TOTP credential through the app, its
// first code that of the current time step, and returns the base32
// secret and the recovery codes.
func (e *codeflowEnv) totpEnrol(userID string) (string, []string) {
	e.t.Helper()
	ctx := e.t.Context()
	realm, err := e.store.GetRealm(ctx, "acme")
	if err != nil {
		e.t.Fatal(err)
	}
	user, err := e.store.GetUser(ctx, realm.ID, userID)
	if err != nil {
		e.t.Fatal(err)
	}
	en, err := e.app.beginTOTP(ctx, realm, user)
	if err != nil {
		e.t.Fatal(err)
	}
	secret := en.key.Secret()
	codes, err := e.app.confirmTOTP(ctx, realm, user, totpTestCode(e.t, secret, e.clock.now()), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return secret, codes
}

// eventsOn records login and admin events in acme.
func (e *codeflowEnv) eventsOn() {
	e.t.Helper()
	mustStatus(e.t, e.admin(http.MethodPut, "/admin/realms/acme/events/config",
		map[string]any{"eventsEnabled": true, "adminEventsEnabled": true}), http.StatusOK)
}

// loginEvents lists acme's login events of a type, newest first.
func (e *codeflowEnv) loginEvents(typ string) []loginEventRep {
	e.t.Helper()
	var reps []loginEventRep
	r := e.admin(http.MethodGet, "/admin/realms/acme/events?type="+typ, nil)
	mustStatus(e.t, r, http.StatusOK)
	r.decode(e.t, &reps)
	return reps
}

func TestTOTPMatch(t *testing.T) {
	secret := []byte("12345678901234567890")
	b32 := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret)
	// RFC 6238 appendix B: SHA-1 at T = 59 s is 94287082; six digits keep 287082.
	if step, ok := totpMatch(secret, "287082", time.Unix(59, 0), 0); !ok || step != 1 {
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
		got, ok := totpMatch(secret, tc.code, now, tc.after)
		if ok != tc.ok || got != tc.wantStep {
			t.Errorf("%s: step %d ok %v, want %d %v", tc.name, got, ok, tc.wantStep, tc.ok)
		}
	}
}

func TestTOTPKey(t *testing.T) {
	secret := bytes.Repeat([]byte{0xA5}, totpSecretSize)
	realm := &store.Realm{Name: "acme", DisplayName: "Acme: Corp"}
	key, err := totpKey(realm, "alice", secret)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(key.URL())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "otpauth" || u.Host != "totp" || u.Path != "/Acme Corp:alice" || q.Get("issuer") != "Acme Corp" ||
		q.Get("algorithm") != "SHA1" || q.Get("digits") != "6" || q.Get("period") != "30" ||
		q.Get("secret") != base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret) {
		t.Fatalf("otpauth URI %s", key.URL())
	}
	// Without a display name the realm goes by its name.
	if key, _ = totpKey(&store.Realm{Name: "acme"}, "bob", secret); key.Issuer() != "acme" || key.AccountName() != "bob" {
		t.Fatalf("issuer %q account %q", key.Issuer(), key.AccountName())
	}
	img, err := qrPNG(key)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := png.Decode(bytes.NewReader(img))
	if err != nil || decoded.Bounds().Dx() != 256 {
		t.Fatalf("QR code PNG: %v, %v", decoded, err)
	}
}

func TestRecoveryCodes(t *testing.T) {
	codes := newRecoveryCodes()
	format := regexp.MustCompile(`^[a-z2-7]{4}(-[a-z2-7]{4}){3}$`)
	if len(codes) != recoveryCodeCount {
		t.Fatalf("%d codes, want %d", len(codes), recoveryCodeCount)
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if !format.MatchString(c) || seen[c] {
			t.Errorf("code %q, want four groups of four base32 characters, each code once", c)
		}
		seen[c] = true
	}
	// What people type differently is the same code; another code is not.
	want := recoveryCodeHash(codes[0])
	for _, typed := range []string{" " + codes[0] + " ", strings.ReplaceAll(codes[0], "-", " "), strings.ToUpper(codes[0]),
		strings.ReplaceAll(codes[0], "-", "")} {
		if !bytes.Equal(recoveryCodeHash(typed), want) {
			t.Errorf("%q hashes differently from %q", typed, codes[0])
		}
	}
	if bytes.Equal(recoveryCodeHash(codes[1]), want) {
		t.Fatal("two codes hash alike")
	}
}
