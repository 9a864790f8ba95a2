package app

import (
	"bytes"
	"encoding/base32"
	"image/png"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Codes in these tests come from pquerna/otp's own generator at times the
// test chooses, against the server's controllable clock.

const totpTestStep = identity.TOTPPeriod * time.Second

// totpTestCode is the code of a base32 secret at time at.
func totpTestCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: identity.TOTPPeriod, Digits: otp.DigitsSix,
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
	next := time.Unix((now.Unix()/identity.TOTPPeriod+1)*identity.TOTPPeriod+1, 0)
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
	en, err := e.app.id.BeginTOTP(ctx, realm, user)
	if err != nil {
		e.t.Fatal(err)
	}
	secret := en.Key.Secret()
	codes, err := e.app.id.ConfirmTOTP(ctx, realm, user, totpTestCode(e.t, secret, e.clock.now()), nil)
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

func TestTOTPKey(t *testing.T) {
	secret := bytes.Repeat([]byte{0xA5}, identity.TOTPSecretSize)
	realm := &store.Realm{Name: "acme", DisplayName: "Acme: Corp"}
	key, err := identity.TOTPKey(realm, "alice", secret)
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
	if key, _ = identity.TOTPKey(&store.Realm{Name: "acme"}, "bob", secret); key.Issuer() != "acme" || key.AccountName() != "bob" {
		t.Fatalf("issuer %q account %q", key.Issuer(), key.AccountName())
	}
	img, err := identity.QRPNG(key)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := png.Decode(bytes.NewReader(img))
	if err != nil || decoded.Bounds().Dx() != 256 {
		t.Fatalf("QR code PNG: %v, %v", decoded, err)
	}
}
