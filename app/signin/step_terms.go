package signin

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// reasonTermsDeclined is the LOGIN_ERROR of a user who declined the
// terms, as Keycloak names it.
const reasonTermsDeclined = "rejected_by_user"

// errTermsDeclined ends a sign-in whose user declined the terms: a page
// saying so, and the flow gone.
var errTermsDeclined = apperr.New(http.StatusForbidden, apperr.CodeForbidden, "").WithKey("terms.error.declined")

// termsStep shows the realm's terms to the known user, who accepts them
// once per version (termsVersion) or ends the sign-in. It proves nothing.
type termsStep struct {
	pages *Pages
	emit  Emitter
	deps  StepDeps
}

func (termsStep) Kind() StepKind      { return KindTerms }
func (termsStep) AMR() []string       { return nil }
func (termsStep) Events() []EventType { return []EventType{EventLoginError} }

// Skip: the user accepted the realm's current version already.
func (s termsStep) Skip(ctx context.Context, f *Flow) (bool, error) {
	if f.Realm.TermsVersion == "" {
		return false, nil
	}
	_, err := s.deps.Store.TermsAcceptedAt(ctx, f.Realm.ID, f.User.ID, f.Realm.TermsVersion)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s termsStep) page(w http.ResponseWriter, r *http.Request, f *Flow, v View, status int, alert string) error {
	form := ui.TermsForm{Action: v.Action + stepQuery(v), CSRFToken: v.CSRF, ClientName: f.Wants.ClientName,
		Version: f.Realm.TermsVersion, Paragraphs: paragraphs(f.Realm.TermsText), Alert: alert}
	return s.pages.Render(w, r, status, ui.Terms(s.pages.Page("terms.title"), form))
}

func (s termsStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	return s.page(w, r, f, v, http.StatusOK, "")
}

func (s termsStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	ctx := r.Context()
	switch r.PostForm.Get("decision") {
	case "accept":
		// The terms changed while they were read: what is accepted is
		// what was shown.
		if r.PostForm.Get("version") != f.Realm.TermsVersion {
			return nil, s.page(w, r, f, v, http.StatusConflict, "terms.changed")
		}
		if err := s.deps.Store.AcceptTerms(ctx, f.Realm.ID, f.User.ID, f.Realm.TermsVersion, s.deps.Now().UnixMilli()); err != nil {
			return nil, err
		}
		return f.User, nil
	case "decline":
		s.emit(ctx, f.Realm, store.LoginEvent{Type: EventLoginError, UserID: f.User.ID, ClientID: f.Wants.Client,
			IPAddress: v.ClientIP, Error: reasonTermsDeclined})
		if err := s.deps.Store.DeleteSignInFlow(ctx, f.Realm.ID, f.ID()); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, errTermsDeclined
	}
	return nil, s.page(w, r, f, v, http.StatusBadRequest, "terms.error.choose")
}

// paragraphs splits plain text at its blank lines.
func paragraphs(text string) []string {
	var out []string
	for p := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// The longest terms and version a realm may have.
const (
	maxTermsLen        = 20000
	maxTermsVersionLen = 64
)

// CheckTerms refuses a realm's terms (termsText, plain text) and their
// version (termsVersion) unless both are set or neither: terms without a
// version could never be accepted, a version without terms has nothing
// to accept.
func CheckTerms(text, version string) error {
	if err := validate.Text("termsText", text, maxTermsLen); err != nil {
		return err
	}
	if err := validate.Identifier("termsVersion", version, maxTermsVersionLen); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(text) == "" && version != "":
		return apperr.Field("termsText", "is required with a termsVersion: there are no terms to accept")
	case strings.TrimSpace(text) != "" && version == "":
		return apperr.Field("termsVersion", "is required with a termsText: users accept each version once")
	}
	return nil
}
