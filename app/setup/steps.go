package setup

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// The steps, each shared by the API and the hosted page: the caller has
// opened the wizard (rec and steps), and the step saves into steps.

// AdminAccountInput is the body of POST /setup-wizard/admin-account.
type AdminAccountInput struct {
	Username  string `json:"username"`
	Email     string `json:"email"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Password  string `json:"password"`
}

// adminAccount creates the first administrator, holding every permission.
// Once any administrator exists this step is refused: it makes the first,
// never another.
func (s *Service) adminAccount(ctx context.Context, rec *store.SetupWizard, steps *Steps, in AdminAccountInput) error {
	if strings.TrimSpace(in.Username) == "" {
		return apperr.Field("username", "is required").WithKey("setup.required")
	}
	if in.Password == "" {
		return apperr.Field("password", "is required").WithKey("setup.required")
	}
	admins, err := s.deps.Store.ListAdminAccounts(ctx)
	if err != nil {
		return err
	}
	if len(admins) > 0 {
		return apperr.Conflict("username", "an administrator exists already: sign in to the admin console with it").
			WithKey("setup.admin.exists")
	}
	if err := checkAdminPassword(in.Username, in.Email, in.Password); err != nil {
		return err
	}
	id, err := s.deps.CreateAdmin(ctx, NewAdmin(in))
	if err != nil {
		return err
	}
	s.deps.Log.InfoContext(ctx, "setup wizard created the first administrator", "username", in.Username)
	steps.AdminAccount = &AdminAccountStep{ID: id, Username: in.Username, Email: in.Email,
		CreatedTimestamp: s.deps.Now().UnixMilli()}
	return s.save(ctx, rec, steps)
}

// RealmSettingsInput is the body of POST /setup-wizard/realm-settings:
// name is required; a field left out keeps the realm's value (a new
// realm's default).
type RealmSettingsInput struct {
	Name                     string  `json:"name"`
	DisplayName              *string `json:"displayName"`
	RegistrationAllowed      *bool   `json:"registrationAllowed"`
	RequireEmailVerification *bool   `json:"requireEmailVerification"`
	MFARequired              *bool   `json:"mfaRequired"`
	DefaultLocale            *string `json:"defaultLocale"`
}

func (in *RealmSettingsInput) apply(r *store.Realm) {
	set(&r.DisplayName, in.DisplayName)
	set(&r.RegistrationAllowed, in.RegistrationAllowed)
	set(&r.RequireEmailVerification, in.RequireEmailVerification)
	set(&r.MFARequired, in.MFARequired)
	set(&r.DefaultLocale, in.DefaultLocale)
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// realmSettings creates the realm of that name, or changes it when it
// exists, as POST and PUT /admin/realms would. Naming another realm than
// the one saved moves the wizard to it: the mail and client steps, which
// were the other realm's, are forgotten (what they made stays).
func (s *Service) realmSettings(ctx context.Context, rec *store.SetupWizard, steps *Steps, in RealmSettingsInput) error {
	if in.Name == "" {
		return apperr.Field("name", "is required").WithKey("setup.required")
	}
	realm, err := s.deps.Store.GetRealm(ctx, in.Name)
	created := false
	switch {
	case errors.Is(err, store.ErrNotFound):
		r := s.deps.Realms.Defaults()
		r.Name = in.Name
		in.apply(&r)
		if err := s.deps.Realms.Create(ctx, &r); err != nil {
			return err
		}
		realm, created = &r, true
	case err != nil:
		return err
	default:
		sysID, err := s.deps.Store.SystemRealmID(ctx)
		if err != nil {
			return err
		}
		if realm.ID == sysID {
			return apperr.Field("name", "%s is the system realm, which holds the administrators: choose another name", in.Name).
				WithKey("setup.realm.system")
		}
		before := *realm
		in.apply(realm)
		if err := s.deps.Realms.Update(ctx, realm, &before); err != nil {
			return err
		}
	}
	if prev := steps.RealmSettings; prev != nil && prev.Name == realm.Name {
		created = created || prev.Created
	} else if prev != nil {
		steps.SMTPConfig, steps.SMTPTest, steps.Client, steps.SDKGenerated = nil, nil, nil, nil
	}
	steps.RealmSettings = &RealmSettingsStep{Name: realm.Name, DisplayName: realm.DisplayName,
		RegistrationAllowed: realm.RegistrationAllowed, RequireEmailVerification: realm.RequireEmailVerification,
		MFARequired: realm.MFARequired, DefaultLocale: realm.DefaultLocale, Created: created,
		SavedTimestamp: s.deps.Now().UnixMilli()}
	return s.save(ctx, rec, steps)
}

// wizardRealm is the realm the realm-settings step saved, for the steps
// that need it.
func (s *Service) wizardRealm(ctx context.Context, steps *Steps, step Step) (*store.Realm, error) {
	if steps.RealmSettings == nil {
		return nil, needs(step, StepRealmSettings)
	}
	realm, err := s.deps.Store.GetRealm(ctx, steps.RealmSettings.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(http.StatusConflict, apperr.CodeInvalidState,
			"the realm %s was deleted since the step %s: save that step again", steps.RealmSettings.Name, StepRealmSettings)
	}
	return realm, err
}

// SMTP security: STARTTLS on a plain connection (used whenever the server
// offers it; the password never crosses without it, but to a relay on
// this machine), or TLS from the first byte.
const (
	SecuritySTARTTLS = "starttls"
	SecurityTLS      = "tls"
)

// SMTPConfigInput is the body of POST /setup-wizard/smtp-config. Password
// left out, or sent back as the redaction it is shown as, keeps the saved
// one; "" removes it.
type SMTPConfigInput struct {
	Host     string  `json:"host"`
	Port     int     `json:"port"` // 0: 587, or 465 with tls
	From     string  `json:"from"`
	User     string  `json:"user"`
	Password *string `json:"password"`
	Security string  `json:"security"` // starttls (the default) or tls
}

// smtpConfig sets the realm's SMTP server, as its admin API settings
// would: the realm keeps the password sealed.
func (s *Service) smtpConfig(ctx context.Context, rec *store.SetupWizard, steps *Steps, in SMTPConfigInput) error {
	realm, err := s.wizardRealm(ctx, steps, StepSMTPConfig)
	if err != nil {
		return err
	}
	switch {
	case in.Host == "":
		return apperr.Field("host", "is required").WithKey("setup.required")
	case in.From == "":
		return apperr.Field("from", "is required").WithKey("setup.required")
	case in.Security == "":
		in.Security = SecuritySTARTTLS
	case in.Security != SecuritySTARTTLS && in.Security != SecurityTLS:
		return apperr.Field("security", "must be %s or %s", SecuritySTARTTLS, SecurityTLS)
	}
	if in.Port == 0 {
		in.Port = 587
		if in.Security == SecurityTLS {
			in.Port = 465
		}
	}
	before := *realm
	realm.SMTPHost, realm.SMTPPort, realm.SMTPFrom, realm.SMTPUser = in.Host, in.Port, in.From, in.User
	realm.SMTPSecure, realm.EmailProvider = in.Security == SecurityTLS, "smtp"
	if in.Password != nil && *in.Password != redacted {
		realm.SMTPPassword = *in.Password
	}
	if err := s.deps.Realms.Update(ctx, realm, &before); err != nil {
		return renameFields(err, map[string]string{"smtpHost": "host", "smtpPort": "port", "smtpFrom": "from",
			"smtpUser": "user", "smtpPassword": "password"})
	}
	shown := ""
	if realm.SMTPPassword != "" {
		shown = redacted
	}
	steps.SMTPConfig = &SMTPConfigStep{Host: realm.SMTPHost, Port: realm.SMTPPort, From: realm.SMTPFrom, User: realm.SMTPUser,
		Password: shown, Security: in.Security, SavedTimestamp: s.deps.Now().UnixMilli()}
	steps.SMTPTest = nil // a test of other settings proves nothing of these
	return s.save(ctx, rec, steps)
}

// renameFields names the realm's fields at fault by the step's names.
func renameFields(err error, names map[string]string) error {
	var e *apperr.Error
	if !errors.As(err, &e) || names[e.Field] == "" {
		return err
	}
	c := *e
	c.Field = names[e.Field]
	c.Message = c.Field + strings.TrimPrefix(c.Message, e.Field)
	return &c
}

// SMTPTestInput is the body of POST /setup-wizard/smtp/test.
type SMTPTestInput struct {
	To string `json:"to"`
}

// SMTPTestResult is the answer of a test message that went through.
type SMTPTestResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

// smtpTest sends a message through the realm's SMTP server now, through
// the server's own mail sender and its outbound guard.
func (s *Service) smtpTest(r *http.Request, rec *store.SetupWizard, steps *Steps, in SMTPTestInput) (*SMTPTestResult, error) {
	if steps.SMTPConfig == nil {
		return nil, needs(StepSMTPTest, StepSMTPConfig)
	}
	realm, err := s.wizardRealm(r.Context(), steps, StepSMTPTest)
	if err != nil {
		return nil, err
	}
	if in.To == "" {
		return nil, apperr.Field("to", "is required").WithKey("setup.required")
	}
	if err := s.deps.SendTestMail(r, realm, in.To); err != nil {
		return nil, err
	}
	steps.SMTPTest = &SMTPTestStep{To: in.To, SentTimestamp: s.deps.Now().UnixMilli()}
	if err := s.save(r.Context(), rec, steps); err != nil {
		return nil, err
	}
	return &SMTPTestResult{Success: true, Message: "test email sent to " + in.To + " through " + realm.SMTPHost}, nil
}

// The kinds of application the client step registers.
const (
	// ClientSPA is a single-page application: a public client, which
	// signs in with PKCE (S256) and holds no secret.
	ClientSPA = "spa"
	// ClientWeb is a web application with a server: a confidential
	// client, with a secret, and PKCE too.
	ClientWeb = "web"
)

// ClientInput is the body of POST /setup-wizard/client.
type ClientInput struct {
	ClientID     string   `json:"clientId"`
	Type         string   `json:"type"` // spa or web
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirectUris"`
	// WebOrigins are the origins allowed to call the token endpoint from
	// a browser; left out, a spa's are its redirect URIs' ("+").
	WebOrigins []string `json:"webOrigins"`
}

// ClientResult is the client registered: what the state shows, the
// realm's issuer, and a new confidential client's secret, shown this
// once (only its hash is kept).
type ClientResult struct {
	ClientStep
	Issuer string `json:"issuer"`
	Secret string `json:"secret,omitempty"`
}

// client registers the realm's first application, checked by the rules
// every client obeys (identity.ValidateClient, as the admin API's).
// Saving the same clientId again changes the client the wizard made.
func (s *Service) client(ctx context.Context, rec *store.SetupWizard, steps *Steps, in ClientInput) (*ClientResult, error) {
	realm, err := s.wizardRealm(ctx, steps, StepClient)
	if err != nil {
		return nil, err
	}
	clientType := identity.ClientConfidential
	switch in.Type {
	case ClientSPA:
		clientType = identity.ClientPublic
	case ClientWeb:
	default:
		return nil, apperr.Field("type", "must be %s (a single-page app: public, PKCE) or %s (a web app with a server: confidential)",
			ClientSPA, ClientWeb)
	}
	if in.ClientID == "" {
		return nil, apperr.Field("clientId", "is required").WithKey("setup.required")
	}
	if len(in.RedirectURIs) == 0 {
		return nil, apperr.Field("redirectUris", "needs at least one: where the application receives the sign-in").
			WithKey("setup.client.redirectRequired")
	}
	if in.WebOrigins == nil && clientType == identity.ClientPublic {
		in.WebOrigins = []string{identity.WebOriginsOfRedirects}
	}
	name := in.Name
	if name == "" {
		name = in.ClientID
	}
	var c *store.Client
	mine := steps.Client != nil && steps.Client.ClientID == in.ClientID
	if mine {
		if c, err = s.deps.Store.GetClientByClientID(ctx, realm.ID, in.ClientID); errors.Is(err, store.ErrNotFound) {
			mine = false
		} else if err != nil {
			return nil, err
		}
	}
	if !mine {
		c = &store.Client{ID: uuid.NewString(), RealmID: realm.ID, Enabled: true, GrantTypes: identity.DefaultGrantTypes(),
			BackchannelLogoutSessionRequired: true, CreatedAt: s.deps.Now().UnixMilli()}
	}
	wasType := c.ClientType
	c.ClientID, c.Name, c.ClientType, c.RedirectURIs, c.WebOrigins = in.ClientID, name, clientType, in.RedirectURIs, in.WebOrigins
	if c.WebOrigins == nil {
		c.WebOrigins = []string{}
	}
	if err := identity.ValidateClient(c); err != nil {
		return nil, err
	}
	var secret string
	switch {
	case clientType == identity.ClientPublic:
		c.SecretHash = nil
	case wasType != identity.ClientConfidential:
		secret, c.SecretHash = identity.NewClientSecret()
	}
	if mine {
		err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
			if err := tx.UpdateClient(ctx, c); err != nil || c.ClientType == wasType {
				return err
			}
			return tx.SetClientSecretHash(ctx, realm.ID, c.ID, c.SecretHash)
		})
	} else {
		err = s.deps.Store.Tx(ctx, func(tx *store.Store) error { return s.deps.NewClient(ctx, tx, realm, c) })
	}
	if err != nil {
		return nil, err
	}
	steps.Client = &ClientStep{ClientID: c.ClientID, Type: in.Type, ClientType: c.ClientType,
		RedirectURIs: c.RedirectURIs, WebOrigins: c.WebOrigins, SavedTimestamp: s.deps.Now().UnixMilli()}
	steps.SDKGenerated = nil
	if err := s.save(ctx, rec, steps); err != nil {
		return nil, err
	}
	return &ClientResult{ClientStep: *steps.Client, Issuer: s.deps.Issuer(realm), Secret: secret}, nil
}

// sdk generates the snippets of the client the wizard registered.
func (s *Service) sdk(ctx context.Context, rec *store.SetupWizard, steps *Steps) (*SDK, error) {
	if steps.Client == nil {
		return nil, needs(StepSDKGenerated, StepClient)
	}
	realm, err := s.wizardRealm(ctx, steps, StepSDKGenerated)
	if err != nil {
		return nil, err
	}
	out, err := generateSDK(s.deps.Issuer(realm), *steps.Client)
	if err != nil {
		return nil, err
	}
	langs := make([]string, len(out.Snippets))
	for i, sn := range out.Snippets {
		langs[i] = sn.Language
	}
	steps.SDKGenerated = &SDKStep{Languages: langs, GeneratedTimestamp: s.deps.Now().UnixMilli()}
	if err := s.save(ctx, rec, steps); err != nil {
		return nil, err
	}
	return out, nil
}

// Finished is the answer of complete and skip: the wizard is closed, and
// the administrator goes on in the console.
type Finished struct {
	Status            Status `json:"status"`
	ConsoleURL        string `json:"consoleUrl"`
	Realm             string `json:"realm,omitempty"`
	Issuer            string `json:"issuer,omitempty"`
	FinishedTimestamp int64  `json:"finishedTimestamp"`
}

// complete closes the wizard once there is an administrator to sign in
// with and a realm: mail and an application may come later, from the
// console.
func (s *Service) complete(ctx context.Context, rec *store.SetupWizard, steps *Steps) (*Finished, error) {
	admins, err := s.deps.Store.ListAdminAccounts(ctx)
	if err != nil {
		return nil, err
	}
	if len(admins) == 0 {
		return nil, needs("complete", StepAdminAccount)
	}
	realm, err := s.wizardRealm(ctx, steps, "complete")
	if err != nil {
		return nil, err
	}
	f, err := s.finish(ctx, rec, steps, StatusCompleted)
	if err != nil {
		return nil, err
	}
	f.Realm, f.Issuer = realm.Name, s.deps.Issuer(realm)
	return f, nil
}

// finish closes the wizard as status: the token dies with it.
func (s *Service) finish(ctx context.Context, rec *store.SetupWizard, steps *Steps, status Status) (*Finished, error) {
	now := s.deps.Now().UnixMilli()
	rec.Status, rec.TokenHash, rec.FinishedAt, rec.FinishedBy = string(status), nil, now, byWizard
	if err := s.save(ctx, rec, steps); err != nil {
		return nil, err
	}
	s.deps.Log.InfoContext(ctx, "setup wizard closed", "status", status)
	return &Finished{Status: status, ConsoleURL: s.deps.ConsoleURL, FinishedTimestamp: now}, nil
}

// reset forgets every step saved; what the steps made stays, and the
// token still opens the wizard.
func (s *Service) reset(ctx context.Context, rec *store.SetupWizard) (*State, error) {
	steps := &Steps{}
	if err := s.save(ctx, rec, steps); err != nil {
		return nil, err
	}
	st := stateOf(rec, steps)
	return &st, nil
}
