package setup

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The JSON API under /setup-wizard (docs/setup.md). Every endpoint
// answers 410 once the wizard is closed; every one but status needs the
// bootstrap token, and status needs it to say more than "pending".

// StatusRep is the answer of GET /setup-wizard/status. Without a token it
// says only that setup is pending; with the token, the steps too.
type StatusRep struct {
	Status         Status `json:"status"`
	CompletedSteps []Step `json:"completedSteps,omitempty"`
	NextStep       Step   `json:"nextStep,omitempty"`
}

// Status answers whether setup is pending (410 once it is not).
func (s *Service) Status(w http.ResponseWriter, r *http.Request) error {
	token := requestToken(r)
	if token == "" {
		rec, _, err := s.record(r.Context())
		if err != nil {
			return err
		}
		if Status(rec.Status) != StatusPending {
			return errGone(rec)
		}
		return httpx.OK(w, StatusRep{Status: StatusPending})
	}
	_, steps, err := s.openAPI(w, r)
	if err != nil {
		return err
	}
	return httpx.OK(w, StatusRep{Status: StatusPending, CompletedSteps: steps.done(), NextStep: steps.next()})
}

// State answers the steps done and what each saved, secrets redacted.
func (s *Service) State(w http.ResponseWriter, r *http.Request) error {
	rec, steps, err := s.openAPI(w, r)
	if err != nil {
		return err
	}
	return httpx.OK(w, stateOf(rec, steps))
}

// AdminAccount creates the first administrator and answers the state.
func (s *Service) AdminAccount(w http.ResponseWriter, r *http.Request) error {
	return stepAPI(s, w, r, func(rec *store.SetupWizard, steps *Steps, in AdminAccountInput) error {
		return s.adminAccount(r.Context(), rec, steps, in)
	})
}

// RealmSettings creates or changes the realm and answers the state.
func (s *Service) RealmSettings(w http.ResponseWriter, r *http.Request) error {
	return stepAPI(s, w, r, func(rec *store.SetupWizard, steps *Steps, in RealmSettingsInput) error {
		return s.realmSettings(r.Context(), rec, steps, in)
	})
}

// SMTPConfig sets the realm's SMTP server and answers the state.
func (s *Service) SMTPConfig(w http.ResponseWriter, r *http.Request) error {
	return stepAPI(s, w, r, func(rec *store.SetupWizard, steps *Steps, in SMTPConfigInput) error {
		return s.smtpConfig(r.Context(), rec, steps, in)
	})
}

// SMTPTest sends a test message through the realm's SMTP server: 200 with
// {success, message}, 502 with the server's refusal.
func (s *Service) SMTPTest(w http.ResponseWriter, r *http.Request) error {
	rec, steps, in, err := openWith[SMTPTestInput](s, w, r)
	if err != nil {
		return err
	}
	res, err := s.smtpTest(r, rec, steps, in)
	if err != nil {
		return err
	}
	return httpx.OK(w, res)
}

// Client registers the realm's first application and answers it, with a
// confidential client's secret, shown once.
func (s *Service) Client(w http.ResponseWriter, r *http.Request) error {
	rec, steps, in, err := openWith[ClientInput](s, w, r)
	if err != nil {
		return err
	}
	res, err := s.client(r.Context(), rec, steps, in)
	if err != nil {
		return err
	}
	return httpx.OK(w, res)
}

// SDKGenerated answers the application's sign-in code in JavaScript, Go
// and Python.
func (s *Service) SDKGenerated(w http.ResponseWriter, r *http.Request) error {
	rec, steps, err := s.openAPI(w, r)
	if err != nil {
		return err
	}
	out, err := s.sdk(r.Context(), rec, steps)
	if err != nil {
		return err
	}
	return httpx.OK(w, out)
}

// Complete closes the wizard as completed.
func (s *Service) Complete(w http.ResponseWriter, r *http.Request) error {
	rec, steps, err := s.openAPI(w, r)
	if err != nil {
		return err
	}
	f, err := s.complete(r.Context(), rec, steps)
	if err != nil {
		return err
	}
	return httpx.OK(w, f)
}

// Skip closes the wizard as skipped: the admin API key and
// IDENPLANE_ADMIN_USER are the ways in then.
func (s *Service) Skip(w http.ResponseWriter, r *http.Request) error {
	rec, steps, err := s.openAPI(w, r)
	if err != nil {
		return err
	}
	f, err := s.finish(r.Context(), rec, steps, StatusSkipped)
	if err != nil {
		return err
	}
	return httpx.OK(w, f)
}

// Reset forgets the steps saved and answers the fresh state.
func (s *Service) Reset(w http.ResponseWriter, r *http.Request) error {
	rec, _, err := s.openAPI(w, r)
	if err != nil {
		return err
	}
	st, err := s.reset(r.Context(), rec)
	if err != nil {
		return err
	}
	return httpx.OK(w, st)
}

// openAPI opens the wizard with the request's token; a 401 comes with a
// Bearer challenge.
func (s *Service) openAPI(w http.ResponseWriter, r *http.Request) (*store.SetupWizard, *Steps, error) {
	rec, steps, err := s.open(r, requestToken(r))
	if errors.Is(err, errNoToken) || errors.Is(err, errWrongToken) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="setup-wizard"`)
	}
	return rec, steps, err
}

// openWith opens the wizard, then reads the body: a closed wizard or a
// missing token is told before a bad body.
func openWith[T any](s *Service, w http.ResponseWriter, r *http.Request) (*store.SetupWizard, *Steps, T, error) {
	var in T
	rec, steps, err := s.openAPI(w, r)
	if err != nil {
		return nil, nil, in, err
	}
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return nil, nil, in, err
	}
	return rec, steps, in, nil
}

// stepAPI runs a step that answers the wizard's state.
func stepAPI[T any](s *Service, w http.ResponseWriter, r *http.Request, step func(*store.SetupWizard, *Steps, T) error) error {
	rec, steps, in, err := openWith[T](s, w, r)
	if err != nil {
		return err
	}
	if err := step(rec, steps, in); err != nil {
		return err
	}
	return httpx.OK(w, stateOf(rec, steps))
}
