package setup

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The hosted page: GET /setup-wizard shows a step, POST /setup-wizard
// runs the one its form names (action) through the same functions as the
// API, and answers with the next step (303) or the same form with its
// errors. The token, typed or taken from the printed address's fragment
// by setup.js, is kept in a cookie of the wizard's path alone.

const (
	// tokenCookie holds the bootstrap token for the page's requests:
	// HttpOnly, SameSite=Strict, scoped to the wizard.
	tokenCookie = "idenplane_setup"
	// csrfCookie is the browser's secret its forms' CSRF tokens are MACs
	// of (signin.Pages.CSRFMAC), as on the sign-in pages.
	csrfCookie = "idenplane_setup_csrf"
	csrfForm   = "setup-wizard"
)

type pageStep struct {
	step  Step
	label string
}

// pageSteps are the steps the page lists, with their message keys: the
// test email is part of the mail step's page.
var pageSteps = []pageStep{
	{StepAdminAccount, "setup.step.adminAccount"}, {StepRealmSettings, "setup.step.realmSettings"},
	{StepSMTPConfig, "setup.step.smtpConfig"}, {StepClient, "setup.step.client"},
	{StepSDKGenerated, "setup.step.sdk"}, {"complete", "setup.step.complete"},
}

// Page shows the step the query names (?step=), else the first not done.
func (s *Service) Page(w http.ResponseWriter, r *http.Request) {
	rec, steps, err := s.record(r.Context())
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	if Status(rec.Status) != StatusPending {
		s.renderClosed(w, r, http.StatusGone, errGone(rec))
		return
	}
	f := s.form(w, r, "token")
	if err := s.pageToken(r, rec); err != nil {
		if c, _ := r.Cookie(tokenCookie); c != nil {
			s.forgetToken(w)
			s.renderError(w, r, f, err)
			return
		}
		s.render(w, r, http.StatusOK, f)
		return
	}
	step := Step(r.URL.Query().Get("step"))
	if !slices.ContainsFunc(pageSteps, func(p pageStep) bool { return p.step == step }) {
		if step = steps.next(); step == StepSMTPTest {
			step = StepClient
		} else if step == "" {
			step = "complete"
		}
	}
	s.render(w, r, http.StatusOK, s.stepForm(r, f, steps, step))
}

// Submit runs the step the form names.
func (s *Service) Submit(w http.ResponseWriter, r *http.Request) {
	rec, steps, err := s.record(r.Context())
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	if Status(rec.Status) != StatusPending {
		s.renderClosed(w, r, http.StatusGone, errGone(rec))
		return
	}
	f := s.form(w, r, "token")
	if err := r.ParseForm(); err != nil {
		s.renderError(w, r, f, apperr.Invalid("the form could not be read").WithKey("error.formUnreadable"))
		return
	}
	if !s.csrfOK(r) {
		s.renderError(w, r, f, signin.ErrCSRF.WithKey("setup.csrf"))
		return
	}
	action := r.PostForm.Get("action")
	if action == "token" {
		token := strings.TrimSpace(r.PostForm.Get("token"))
		if token == "" {
			s.renderError(w, r, f, apperr.Field("token", "is required").WithKey("setup.required"))
			return
		}
		if err := s.checkToken(r, rec, token); err != nil {
			s.renderError(w, r, f, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: Path, HttpOnly: true,
			Secure: s.deps.SecureCookies, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, Path, http.StatusSeeOther)
		return
	}
	if err := s.pageToken(r, rec); err != nil {
		s.forgetToken(w)
		s.renderError(w, r, f, err)
		return
	}
	s.runStep(w, r, rec, steps, f, Step(action))
}

// runStep runs a step of an opened wizard and answers its page.
func (s *Service) runStep(w http.ResponseWriter, r *http.Request, rec *store.SetupWizard, steps *Steps, f ui.SetupForm, action Step) {
	ctx, form := r.Context(), r.PostForm
	next := func(step Step) { http.Redirect(w, r, Path+"?step="+string(step), http.StatusSeeOther) }
	fail := func(step Step, err error) {
		f = s.stepForm(r, f, steps, step)
		for k := range form {
			if k != "password" && k != "confirm" && k != "csrf" {
				f.Values[k] = form.Get(k)
			}
		}
		s.renderError(w, r, f, err)
	}
	switch action {
	case StepAdminAccount:
		if form.Get("password") != form.Get("confirm") {
			fail(action, apperr.Field("confirm", "does not match the password").WithKey("setup.admin.mismatch"))
			return
		}
		in := AdminAccountInput{Username: strings.TrimSpace(form.Get("username")), Email: strings.TrimSpace(form.Get("email")),
			Password: form.Get("password")}
		if err := s.adminAccount(ctx, rec, steps, in); err != nil {
			fail(action, err)
			return
		}
		next(StepRealmSettings)
	case StepRealmSettings:
		display := form.Get("displayName")
		registration, verification := form.Get("registrationAllowed") == "true", form.Get("requireEmailVerification") == "true"
		in := RealmSettingsInput{Name: strings.TrimSpace(form.Get("name")), DisplayName: &display,
			RegistrationAllowed: &registration, RequireEmailVerification: &verification}
		if err := s.realmSettings(ctx, rec, steps, in); err != nil {
			fail(action, err)
			return
		}
		next(StepSMTPConfig)
	case StepSMTPConfig:
		in := SMTPConfigInput{Host: strings.TrimSpace(form.Get("host")), From: strings.TrimSpace(form.Get("from")),
			User: form.Get("user"), Security: form.Get("security")}
		if p := strings.TrimSpace(form.Get("port")); p != "" {
			port, err := strconv.Atoi(p)
			if err != nil {
				fail(action, apperr.Field("port", "must be a number between 1 and 65535"))
				return
			}
			in.Port = port
		}
		// The page never shows the saved password: left empty, it stays.
		if pw := form.Get("password"); pw != "" {
			in.Password = &pw
		}
		if err := s.smtpConfig(ctx, rec, steps, in); err != nil {
			fail(action, err)
			return
		}
		next(StepSMTPConfig)
	case StepSMTPTest:
		if _, err := s.smtpTest(r, rec, steps, SMTPTestInput{To: strings.TrimSpace(form.Get("to"))}); err != nil {
			fail(StepSMTPConfig, err)
			return
		}
		f = s.stepForm(r, f, steps, StepSMTPConfig)
		ctx, _ := s.deps.Pages.Context(r)
		f.Notice = ui.T(ctx, "setup.smtp.test.sent", steps.SMTPTest.To)
		s.render(w, r, http.StatusOK, f)
	case StepClient:
		in := ClientInput{ClientID: strings.TrimSpace(form.Get("clientId")), Type: form.Get("type"),
			RedirectURIs: strings.FieldsFunc(form.Get("redirectUris"), func(c rune) bool { return c == ' ' || c == ',' || c == '\n' })}
		res, err := s.client(ctx, rec, steps, in)
		if err != nil {
			fail(action, err)
			return
		}
		if res.Secret == "" {
			next(StepSDKGenerated)
			return
		}
		f = s.stepForm(r, f, steps, StepSDKGenerated)
		f.ClientSecret = res.Secret
		s.render(w, r, http.StatusOK, f)
	case StepSDKGenerated:
		out, err := s.sdk(ctx, rec, steps)
		if err != nil {
			fail(action, err)
			return
		}
		f = s.stepForm(r, f, steps, StepSDKGenerated)
		for _, sn := range out.Snippets {
			f.Snippets = append(f.Snippets, ui.SetupSnippet{ID: sn.Language, Language: sn.Language, Library: sn.Library,
				Install: sn.Install, Code: sn.Code})
		}
		s.render(w, r, http.StatusOK, f)
	case "complete":
		if _, err := s.complete(ctx, rec, steps); err != nil {
			fail("complete", err)
			return
		}
		s.forgetToken(w)
		s.renderClosed(w, r, http.StatusOK, errGone(rec))
	case "skip":
		if _, err := s.finish(ctx, rec, steps, StatusSkipped); err != nil {
			fail("complete", err)
			return
		}
		s.forgetToken(w)
		s.renderClosed(w, r, http.StatusOK, errGone(rec))
	case "reset":
		if _, err := s.reset(ctx, rec); err != nil {
			fail("complete", err)
			return
		}
		http.Redirect(w, r, Path, http.StatusSeeOther)
	default:
		fail("complete", apperr.Invalid("the form names no step of the wizard").WithKey("error.formUnreadable"))
	}
}

// pageToken checks the token the browser's cookie holds.
func (s *Service) pageToken(r *http.Request, rec *store.SetupWizard) error {
	c, err := r.Cookie(tokenCookie)
	if err != nil || c.Value == "" {
		return errNoToken
	}
	return s.checkToken(r, rec, c.Value)
}

func (s *Service) forgetToken(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: Path, MaxAge: -1, HttpOnly: true,
		Secure: s.deps.SecureCookies, SameSite: http.SameSiteStrictMode})
}

// form is the frame every step's form shares: where it posts, its CSRF
// token (the browser gets its CSRF cookie now if it has none), the script.
func (s *Service) form(w http.ResponseWriter, r *http.Request, step string) ui.SetupForm {
	browser := ""
	if c, err := r.Cookie(csrfCookie); err == nil && c.Value != "" {
		browser = c.Value
	} else {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		browser = base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: browser, Path: Path, HttpOnly: true,
			Secure: s.deps.SecureCookies, SameSite: http.SameSiteStrictMode})
	}
	return ui.SetupForm{Action: Path, CSRF: s.deps.Pages.CSRFMAC(browser, csrfForm, ""), Script: s.deps.Script, Step: step,
		Errors: map[string]string{}, Values: map[string]string{}}
}

// csrfOK compares the form's token with the one the browser's cookie
// yields, in constant time.
func (s *Service) csrfOK(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	token := r.PostForm.Get("csrf")
	if err != nil || c.Value == "" || token == "" {
		return false
	}
	return hmac.Equal([]byte(s.deps.Pages.CSRFMAC(c.Value, csrfForm, "")), []byte(token))
}

// stepForm fills f for step from what the steps saved.
func (s *Service) stepForm(r *http.Request, f ui.SetupForm, steps *Steps, step Step) ui.SetupForm {
	f.Step = string(step)
	f.Steps = nil
	for _, p := range pageSteps {
		f.Steps = append(f.Steps, ui.SetupStep{Label: p.label, URL: Path + "?step=" + string(p.step), Done: steps.has(p.step),
			Current: p.step == step})
	}
	v := f.Values
	if a := steps.AdminAccount; a != nil {
		v["username"], v["email"] = a.Username, a.Email
	}
	if rs := steps.RealmSettings; rs != nil {
		v["name"], v["displayName"] = rs.Name, rs.DisplayName
		v["registrationAllowed"], v["requireEmailVerification"] = strconv.FormatBool(rs.RegistrationAllowed),
			strconv.FormatBool(rs.RequireEmailVerification)
	}
	if c := steps.SMTPConfig; c != nil {
		v["host"], v["port"], v["from"], v["user"], v["security"] = c.Host, strconv.Itoa(c.Port), c.From, c.User, c.Security
		f.SMTPPasswordSet, f.SMTPConfigured = c.Password != "", true
	}
	if t := steps.SMTPTest; t != nil {
		v["to"] = t.To
	}
	if c := steps.Client; c != nil {
		v["clientId"], v["type"], v["redirectUris"] = c.ClientID, c.Type, strings.Join(c.RedirectURIs, " ")
	}
	if step == "complete" {
		f.Summary = summary(steps)
	}
	return f
}

// summary is what the wizard made, before completing it.
func summary(steps *Steps) []ui.SetupFact {
	var out []ui.SetupFact
	if a := steps.AdminAccount; a != nil {
		out = append(out, ui.SetupFact{Label: "setup.step.adminAccount", Value: a.Username})
	}
	if rs := steps.RealmSettings; rs != nil {
		out = append(out, ui.SetupFact{Label: "setup.step.realmSettings", Value: rs.Name})
	}
	if c := steps.SMTPConfig; c != nil {
		out = append(out, ui.SetupFact{Label: "setup.step.smtpConfig", Value: c.Host + ":" + strconv.Itoa(c.Port)})
	}
	if c := steps.Client; c != nil {
		out = append(out, ui.SetupFact{Label: "setup.step.client", Value: c.ClientID})
	}
	return out
}

// renderError shows f again with err: beside its field, or above the form.
func (s *Service) renderError(w http.ResponseWriter, r *http.Request, f ui.SetupForm, err error) {
	var e *apperr.Error
	if !errors.As(err, &e) || e.Status >= http.StatusInternalServerError && e.Code != apperr.CodeDeliveryFailed {
		s.pageFailed(w, r, err)
		return
	}
	// A key is shown in the reader's language; else the API's words.
	text := e.Message
	if e.Key != "" {
		text = e.Key
	}
	field, _, _ := strings.Cut(e.Field, "[")
	field, _, _ = strings.Cut(field, ".")
	if field != "" && slices.Contains(formFields[f.Step], field) {
		f.Errors[field] = text
		f.Error = "setup.fixErrors"
	} else {
		f.Error = text
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter.Seconds()+0.999)))
	}
	s.renderArgs(w, r, e.Status, f, e.Args)
}

// formFields are the fields each step's form shows, which an error may
// be placed beside.
var formFields = map[string][]string{
	"token":                   {"token"},
	string(StepAdminAccount):  {"username", "email", "password", "confirm"},
	string(StepRealmSettings): {"name", "displayName"},
	string(StepSMTPConfig):    {"host", "port", "from", "user", "password", "security", "to"},
	string(StepClient):        {"clientId", "type", "redirectUris"},
}

func (s *Service) render(w http.ResponseWriter, r *http.Request, status int, f ui.SetupForm) {
	s.renderArgs(w, r, status, f, nil)
}

// renderArgs renders f; args fill the placeholders of its messages (a
// password's required length).
func (s *Service) renderArgs(w http.ResponseWriter, r *http.Request, status int, f ui.SetupForm, args []any) {
	if len(args) > 0 {
		ctx, _ := s.deps.Pages.Context(r)
		for k, v := range f.Errors {
			f.Errors[k] = ui.T(ctx, v, args...)
		}
		f.Error = ui.T(ctx, f.Error, args...)
	}
	if err := s.deps.Pages.Render(w, r, status, ui.Setup(s.deps.Pages.Page("setup.title"), f)); err != nil {
		s.deps.Log.ErrorContext(r.Context(), "render the setup wizard's page", "err", err)
	}
}

// renderClosed is the page of a wizard completed or skipped.
func (s *Service) renderClosed(w http.ResponseWriter, r *http.Request, status int, gone error) {
	key := "setup.finished.completed"
	var e *apperr.Error
	if errors.As(gone, &e) && e.Key != "" {
		key = e.Key
	}
	if err := s.deps.Pages.Render(w, r, status, ui.SetupClosed(s.deps.Pages.Page("setup.title"), key, s.deps.ConsoleURL)); err != nil {
		s.deps.Log.ErrorContext(r.Context(), "render the setup wizard's page", "err", err)
	}
}

// pageFailed answers a fault of the server: the cause goes to the log.
func (s *Service) pageFailed(w http.ResponseWriter, r *http.Request, err error) {
	s.deps.Log.ErrorContext(r.Context(), "setup wizard page", "err", err)
	f := ui.SetupForm{Step: "failed", Errors: map[string]string{}, Values: map[string]string{}, Error: "error.internal"}
	if rerr := s.deps.Pages.Render(w, r, http.StatusInternalServerError, ui.Setup(s.deps.Pages.Page("setup.title"), f)); rerr != nil {
		s.deps.Log.ErrorContext(r.Context(), "render the setup wizard's page", "err", rerr)
	}
}
