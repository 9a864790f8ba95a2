package signin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/ui"
)

// Keys is what the steps of WebAuthn credentials need: the realms as
// relying parties, and the pages' script that runs the ceremonies
// (assets/static/webauthn.js).
type Keys struct {
	RP     *webauthnrp.Service
	Script string
}

// keyPage is the page of a step asking for a WebAuthn credential, with a
// ceremony begun for it: the page brings its options, so the script
// needs no endpoint of its own, and the assertion comes back as the
// step's form (its credential field the JSON of the PublicKeyCredential).
// u is the user whose keys are asked for; nil asks for any passkey of the
// realm.
func (k Keys) page(w http.ResponseWriter, r *http.Request, pages *Pages, f *Flow, v View, u *webauthnrp.User,
	secondFactor bool, status int, errKey string) error {
	opts, err := k.RP.BeginAssertion(r.Context(), f.Realm, u, secondFactor)
	if err != nil {
		return err
	}
	publicKey, err := json.Marshal(opts.PublicKey)
	if err != nil {
		return fmt.Errorf("encode WebAuthn options: %w", err)
	}
	form := ui.WebAuthnStepForm{Script: k.Script, Action: v.Action + stepQuery(v), CSRFToken: v.CSRF,
		ClientName: f.Wants.ClientName, CeremonyID: opts.CeremonyID, PublicKey: string(publicKey), Passkey: !secondFactor,
		Error: errKey, Others: v.Ways}
	if secondFactor {
		form.TOTPURL = v.Other(KindTOTP)
	}
	title := "webauthn.step.title"
	if !secondFactor {
		title = "login.title"
	}
	return pages.Render(w, r, status, ui.WebAuthnStep(pages.Page(title), form))
}

// verify checks the assertion the step's form posted. A refusal answers
// the page again, with a new ceremony, and nil: a request that is no
// assertion at all (no credential, not JSON) a 400, a refused assertion
// a 401, a ceremony used or expired a 400 saying so, a guarded address a
// 429. The refusals' LOGIN_ERROR events are the relying party's
// (webauthnrp's reasons).
func (k Keys) verify(w http.ResponseWriter, r *http.Request, pages *Pages, f *Flow, v View, u *webauthnrp.User,
	req webauthnrp.AssertionRequest) (*webauthnrp.Assertion, error) {
	req.CeremonyID, req.Credential = r.PostForm.Get("ceremonyId"), []byte(r.PostForm.Get("credential"))
	req.ClientID, req.IP, req.StepUp = f.Wants.Client, v.ClientIP, f.Requester() == RequesterStepUp
	as, err := k.RP.VerifyAssertion(r.Context(), f.Realm, req)
	if err == nil {
		return as, nil
	}
	status, key := http.StatusUnauthorized, "webauthn.error.failed"
	var throttled *identity.ThrottledError
	var refused *webauthnrp.Failure
	switch {
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		status, key = http.StatusTooManyRequests, "login.error.throttled"
	case errors.Is(err, webauthnrp.ErrCeremony):
		status, key = http.StatusBadRequest, "webauthn.error.expired"
	case errors.As(err, &refused):
		if refused.Reason == webauthnrp.ReasonInvalidResponse {
			status = http.StatusBadRequest
		}
	case webauthnrp.IsRefusal(err):
		status = http.StatusBadRequest
	default:
		return nil, err
	}
	return nil, k.page(w, r, pages, f, v, u, req.SecondFactor, status, key)
}
