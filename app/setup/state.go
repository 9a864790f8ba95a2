package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// Status is where the wizard is.
type Status string

const (
	StatusPending   Status = "pending"
	StatusCompleted Status = "completed"
	StatusSkipped   Status = "skipped"
)

// Step names a step of the wizard, as its endpoint does.
type Step string

const (
	StepAdminAccount  Step = "admin-account"
	StepRealmSettings Step = "realm-settings"
	StepSMTPConfig    Step = "smtp-config"
	StepSMTPTest      Step = "smtp-test"
	StepClient        Step = "client"
	StepSDKGenerated  Step = "sdk-generated"
)

// stepOrder is the order the hosted page walks the steps in.
var stepOrder = []Step{StepAdminAccount, StepRealmSettings, StepSMTPConfig, StepSMTPTest, StepClient, StepSDKGenerated}

// finishedBy names who closed the wizard.
const (
	byWizard        = "setup-wizard"
	byExistingAdmin = "existing-administrator"
)

// redacted stands in for a saved secret, as in the admin API.
const redacted = "**********"

// Steps is what each step saved: what the wizard's record keeps and its
// state shows. It holds no secret: the SMTP password is the realm's,
// sealed there, and shows here as redacted.
type Steps struct {
	AdminAccount  *AdminAccountStep  `json:"adminAccount,omitempty"`
	RealmSettings *RealmSettingsStep `json:"realmSettings,omitempty"`
	SMTPConfig    *SMTPConfigStep    `json:"smtpConfig,omitempty"`
	SMTPTest      *SMTPTestStep      `json:"smtpTest,omitempty"`
	Client        *ClientStep        `json:"client,omitempty"`
	SDKGenerated  *SDKStep           `json:"sdkGenerated,omitempty"`
}

// AdminAccountStep is the administrator the wizard created.
type AdminAccountStep struct {
	ID               string `json:"id"`
	Username         string `json:"username"`
	Email            string `json:"email,omitempty"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
}

// RealmSettingsStep is the realm the wizard set up. Created says whether
// the wizard made it, or changed one that existed.
type RealmSettingsStep struct {
	Name                     string `json:"name"`
	DisplayName              string `json:"displayName"`
	RegistrationAllowed      bool   `json:"registrationAllowed"`
	RequireEmailVerification bool   `json:"requireEmailVerification"`
	MFARequired              bool   `json:"mfaRequired"`
	DefaultLocale            string `json:"defaultLocale"`
	Created                  bool   `json:"created"`
	SavedTimestamp           int64  `json:"savedTimestamp"`
}

// SMTPConfigStep is the realm's SMTP server as the wizard set it; Password
// is redacted when one is set, "" when none is.
type SMTPConfigStep struct {
	Host           string `json:"host"`
	Port           int    `json:"port"`
	From           string `json:"from"`
	User           string `json:"user"`
	Password       string `json:"password"`
	Security       string `json:"security"` // starttls or tls
	SavedTimestamp int64  `json:"savedTimestamp"`
}

// SMTPTestStep is the last test message that went through.
type SMTPTestStep struct {
	To            string `json:"to"`
	SentTimestamp int64  `json:"sentTimestamp"`
}

// ClientStep is the application the wizard registered.
type ClientStep struct {
	ClientID       string   `json:"clientId"`
	Type           string   `json:"type"` // spa or web
	ClientType     string   `json:"clientType"`
	RedirectURIs   []string `json:"redirectUris"`
	WebOrigins     []string `json:"webOrigins"`
	SavedTimestamp int64    `json:"savedTimestamp"`
}

// SDKStep records that the snippets were generated.
type SDKStep struct {
	Languages          []string `json:"languages"`
	GeneratedTimestamp int64    `json:"generatedTimestamp"`
}

// done lists the steps saved, in order.
func (s *Steps) done() []Step {
	out := []Step{}
	for _, st := range stepOrder {
		if s.has(st) {
			out = append(out, st)
		}
	}
	return out
}

func (s *Steps) has(st Step) bool {
	switch st {
	case StepAdminAccount:
		return s.AdminAccount != nil
	case StepRealmSettings:
		return s.RealmSettings != nil
	case StepSMTPConfig:
		return s.SMTPConfig != nil
	case StepSMTPTest:
		return s.SMTPTest != nil
	case StepClient:
		return s.Client != nil
	case StepSDKGenerated:
		return s.SDKGenerated != nil
	}
	return false
}

// next is the first step not saved yet; "" when every one is.
func (s *Steps) next() Step {
	for _, st := range stepOrder {
		if !s.has(st) {
			return st
		}
	}
	return ""
}

func (s *Steps) empty() bool { return len(s.done()) == 0 }

// State is the wizard as GET /setup-wizard/state shows it: where it is,
// the steps done, the one to do next, and what each saved.
type State struct {
	Status         Status `json:"status"`
	CompletedSteps []Step `json:"completedSteps"`
	// NextStep is the first step not done; "" once every one is (then
	// complete is what is left).
	NextStep         Step  `json:"nextStep"`
	Steps                  // what each step saved
	UpdatedTimestamp int64 `json:"updatedTimestamp"`
}

func stateOf(rec *store.SetupWizard, steps *Steps) State {
	return State{Status: Status(rec.Status), CompletedSteps: steps.done(), NextStep: steps.next(), Steps: *steps,
		UpdatedTimestamp: rec.UpdatedAt}
}

// record reads the wizard's record and its steps. A wizard that was never
// opened (the server found an administrator at its first start, and no
// record was made) reads as one that was skipped.
func (s *Service) record(ctx context.Context) (*store.SetupWizard, *Steps, error) {
	rec, err := s.deps.Store.GetSetupWizard(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return &store.SetupWizard{Status: string(StatusSkipped), Steps: "{}", FinishedBy: byExistingAdmin}, &Steps{}, nil
	} else if err != nil {
		return nil, nil, err
	}
	var steps Steps
	if err := json.Unmarshal([]byte(rec.Steps), &steps); err != nil {
		return nil, nil, fmt.Errorf("setup wizard steps: %w", err)
	}
	return rec, &steps, nil
}

// save writes steps into rec, unless another request changed the record
// since it was read.
func (s *Service) save(ctx context.Context, rec *store.SetupWizard, steps *Steps) error {
	b, err := json.Marshal(steps)
	if err != nil {
		return err
	}
	rec.Steps, rec.UpdatedAt = string(b), s.deps.Now().UnixMilli()
	if err := s.deps.Store.UpdateSetupWizard(ctx, rec); errors.Is(err, store.ErrConflict) {
		return apperr.New(http.StatusConflict, apperr.CodeConflict,
			"the setup wizard changed meanwhile (another request): read its state and try again")
	} else if err != nil {
		return err
	}
	return nil
}

// errGone is the answer of every endpoint of a closed wizard.
func errGone(rec *store.SetupWizard) error {
	when := time.UnixMilli(rec.FinishedAt).UTC().Format(time.RFC3339)
	switch {
	case rec.FinishedBy == byExistingAdmin:
		return apperr.Gone("setup was skipped: an administrator existed when the server started; sign in to the admin console").
			WithKey("setup.finished.existing")
	case Status(rec.Status) == StatusCompleted:
		return apperr.Gone("setup was completed at %s: the setup wizard is closed; sign in to the admin console", when).
			WithKey("setup.finished.completed")
	}
	return apperr.Gone("setup was skipped at %s: the setup wizard is closed; sign in to the admin console or use the admin API key", when).
		WithKey("setup.finished.skipped")
}

// needs is the error of a step that another must come before.
func needs(step, first Step) error {
	return apperr.New(http.StatusConflict, apperr.CodeInvalidState, "%s needs the step %s first", step, first)
}
