package broker_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/identity"
)

var secretPattern = regexp.MustCompile(`<code>([A-Z2-7 ]{16,})</code>`)

// The realm's mfaRequired applies to a sign-in through a provider: the
// second factor's enrolment comes after the upstream's sign-in, and the
// session's amr says fed and otp, not pwd.
func TestBrokerSignInKeepsTheRealmsSecondFactor(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, nil)
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme", map[string]any{"mfaRequired": true}), http.StatusOK)
	b := apptest.NewBrowser(t)
	setup := e.fakeSignIn(b)
	m := secretPattern.FindSubmatch(setup.Body)
	if setup.Status != http.StatusOK || m == nil {
		t.Fatalf("expected the TOTP enrolment page, got %d at %s: %s", setup.Status, setup.URL, setup.Body)
	}
	code, err := totp.GenerateCodeCustom(strings.ReplaceAll(string(m[1]), " ", ""), time.Now(),
		totp.ValidateOpts{Period: identity.TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	p := b.Follow(b.Submit(setup.Forms(t)[0], map[string]string{"code": code}), e.base)
	for i := 0; p.Status == http.StatusOK && i < 3; i++ { // the recovery codes, shown once, then on
		p = b.Follow(b.Submit(p.Forms(t)[0], nil), e.base)
	}
	claims := e.mustReachApp(p)
	amr, _ := claims["amr"].([]any)
	if !slices.Contains(amr, any("fed")) || !slices.Contains(amr, any("otp")) || slices.Contains(amr, any("pwd")) {
		t.Fatalf("amr %v, want fed and otp", amr)
	}
}
