// Package app is Idenplane's HTTP server: the admin API, the protocol
// endpoints and the hosted pages, as methods on one App.
package app

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"go.opentelemetry.io/otel/trace"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/adminaccounts"
	"github.com/idenplane/idenplane/app/adminkeys"
	"github.com/idenplane/idenplane/app/attributes"
	"github.com/idenplane/idenplane/app/auditstreams"
	"github.com/idenplane/idenplane/app/authflows"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/console"
	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/app/groups"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/app/impersonation"
	"github.com/idenplane/idenplane/app/ldapfed"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/migration"
	"github.com/idenplane/idenplane/app/nhi"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/app/plugins"
	"github.com/idenplane/idenplane/app/policies"
	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/app/registration"
	"github.com/idenplane/idenplane/app/risk"
	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/app/saml"
	"github.com/idenplane/idenplane/app/scim"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/app/sessions"
	"github.com/idenplane/idenplane/app/setup"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/signingkeys"
	"github.com/idenplane/idenplane/app/system"
	"github.com/idenplane/idenplane/app/telemetry"
	"github.com/idenplane/idenplane/app/themes"
	"github.com/idenplane/idenplane/app/upgrade"
	"github.com/idenplane/idenplane/app/webhooks"
	"github.com/idenplane/idenplane/assets"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// Config is what the server needs beyond its store.
type Config struct {
	BaseURL string // external address, no trailing slash
	// Version, Commit and BuildDate are what the build stamped (main.go's
	// -ldflags), shown by GET /admin/system/version.
	Version       string
	Commit        string
	BuildDate     string
	MasterKey     []byte // also derives the admin token signing key
	MetricsPublic bool   // serve /admin/metrics without credentials
	// TrustedProxies are the peers whose X-Forwarded-For and Forwarded
	// headers are believed (clientIP); none, and they never are.
	TrustedProxies []netip.Prefix
	// DNSResolver is the host:port of the DNS server that verifying an
	// organization's domain asks; empty, the system's resolver.
	DNSResolver string
	// AdminAPIKey, when set, becomes the admin API key (replacing a stored
	// one that differs). When empty and none is stored, one is generated
	// and printed to Stdout.
	AdminAPIKey string
	// AdminUser and AdminPassword create the first admin user.
	AdminUser     string
	AdminPassword string
	Stdout        io.Writer
	Logger        *slog.Logger
	Now           func() time.Time // nil means time.Now
	// OutboundAllowed are the non-public addresses (loopback, private,
	// link-local) that calls to addresses an administrator configured may
	// still reach, such as an identity provider inside the network; none,
	// and they never are.
	OutboundAllowed []netip.Prefix
	// AuditDir is the directory audit streams of type file write in
	// (--audit-dir); empty, and file streams are refused: the admin API
	// names a file in it, never a path.
	AuditDir string
	// OutboundTimeout bounds each of those calls; 0 means 10 seconds.
	OutboundTimeout time.Duration
	// GeoIPDB is a MaxMind-format City database that places sign-ins
	// (--geoip-db); "" and the risk assessments' place signals are
	// unknown.
	GeoIPDB string
	// IPDenyFile lists addresses and CIDR ranges whose sign-ins carry
	// the risk signal ip_denylisted (--ip-deny-file), read again when it
	// changes; "" none.
	IPDenyFile string
	// AccessLog, when set, gets a line per request (access_log.go).
	AccessLog io.Writer
	// Tracer, when set, traces requests, the store and outbound calls
	// (app/telemetry); nil, and nothing is traced.
	Tracer trace.TracerProvider
	// PluginsDir is the directory of the WebAssembly plugins
	// (app/plugins, docs/plugins.md); empty, none.
	PluginsDir string
	// SigningKeys, when set, makes the private keys of new signing keys
	// (tests hand out keys made beforehand: an RSA key takes a tenth of
	// a second to find); nil, NewPrivateKey.
	SigningKeys KeyMaker
	// Upgrade is --upgrade's mode (app/upgrade); empty is auto. With
	// upgrade.ModeManual the store is opened with DeferMigrations, and
	// Start serves the upgrade endpoints alone while it is behind.
	Upgrade upgrade.Mode
	// Shutdown stops the server: a rollback calls it once it has put the
	// snapshot back and closed the store. nil: rollbacks are refused.
	Shutdown func()
	// upgrades is Start's module, which the App built after an upgrade
	// shares with the server that waited; nil: New makes one.
	upgrades *upgrade.Service
}

// defaultOutboundTimeout bounds each call to an address an administrator
// configured (an identity provider's endpoints).
const defaultOutboundTimeout = 10 * time.Second

// App serves every route.
type App struct {
	store        *store.Store
	cfg          Config
	log          *slog.Logger
	now          func() time.Time
	adminKeyHash []byte
	tokenKey     []byte
	id           *identity.Core      // the rules of users, credentials and clients
	webauthn     *webauthnrp.Service // the realms as WebAuthn relying parties
	// loginThrottle is the realms' sign-in flood guard's count, which the
	// other rate limits (registration, recovery, device codes) share.
	loginThrottle *identity.Throttle
	metrics       *metrics
	signingKeys   *signingkeys.Service // the realms' token signing keys
	makeKey       KeyMaker             // new signing keys' private keys
	// signSlots bounds the token signatures under way to the cores (see
	// signWith).
	signSlots chan struct{}
	cache     *caches // the token endpoints' lookups
	events    *events.Service
	saml      *saml.Service
	broker    *broker.Service
	ldap      *ldapfed.Service // LDAP user federation
	scim      *scim.Service
	webhooks  *webhooks.Service
	plugins   *plugins.Service // the WebAssembly plugins: observers, claims, a sign-in step
	risk      *risk.Service
	policies  *policies.Service // authorization policies, the AuthZEN decision point, token exchange's rules
	bus       *bus.Bus
	nhi       *nhi.Service
	clients   *clients.Service   // the admin API of OpenID Connect clients
	adminKeys *adminkeys.Service // the named admin API keys
	// adminAccounts are the administrators; accountAuth admits their
	// tokens; systemRealmID is the realm they are users of.
	adminAccounts *adminaccounts.Service
	accountAuth   *accountAuth
	systemRealmID string
	orgs          *orgs.Service
	attributes    *attributes.Service
	migration     *migration.Service // imports of Keycloak, Auth0 and user lists
	authFlows     *authflows.Service
	mail          *mail.Service
	// mailLangs picks the language of mails, with the texts of the
	// realm's email theme.
	mailLangs     mail.Languages
	themes        *themes.Service // the realms' themes of their pages and mails
	registration  *registration.Service
	recovery      *recovery.Service // the forgot-password, reset and verification pages
	groups        *groups.Service
	impersonation *impersonation.Service
	roles         *roles.Service
	scopes        *scopes.Service
	sessions      *sessions.Service
	account       *account.Service // the user's account: its API and pages
	console       *console.Service // the admin console (/console)
	backchannel   backchannelSender
	assets        *assets.Assets
	messages      *ui.Catalogues
	pages         *signin.Pages  // the hosted pages' kit
	signin        *signin.Engine // sign-ins through authentication flows
	router        *mux.Router
	table         []route            // every route with the access it asks (routes.go)
	apiDoc        *apiDocument       // the OpenAPI document (api_document.go)
	tracing       *telemetry.Tracing // nil: tracing off
	accessLog     *slog.Logger       // nil: no access log
	// auditStreams send the realms' events to syslog receivers, HTTP
	// collectors and files.
	auditStreams *auditstreams.Service
	system       *system.Service  // the build, database and uptime of the server
	setup        *setup.Service   // the first-run setup wizard
	upgrade      *upgrade.Service // the database's upgrade and rollback
}

// New builds the server and makes sure the admin credentials exist.
func New(ctx context.Context, st *store.Store, cfg Config) (*App, error) {
	a := &App{store: st, cfg: cfg, log: cfg.Logger, now: cfg.Now, signSlots: make(chan struct{}, runtime.GOMAXPROCS(0))}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.makeKey = cfg.SigningKeys; a.makeKey == nil {
		a.makeKey = NewPrivateKey
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.bus = bus.New(a.now)
	a.system = system.New(system.Deps{Store: st, Now: a.now, Started: a.now(),
		Build: system.Build{Version: cfg.Version, Commit: cfg.Commit, Date: cfg.BuildDate}})
	if a.cfg.Stdout == nil {
		a.cfg.Stdout = io.Discard
	}
	key, err := hkdf.Key(sha256.New, cfg.MasterKey, nil, "idenplane admin token signing", 32)
	if err != nil {
		return nil, fmt.Errorf("derive admin token key: %w", err)
	}
	a.tokenKey = key
	if a.tracing = telemetry.New(cfg.Tracer); a.tracing != nil {
		st.SetTracer(a.tracing.Store)
	}
	if cfg.AccessLog != nil {
		a.accessLog = newAccessLog(cfg.AccessLog)
	}
	// The pages and mails ask a.themes for the realm's theme once it is
	// made, below: they render nothing before the routes exist.
	emailTheme := mail.ThemeFunc(func(ctx context.Context, realm *store.Realm) *mailtheme.Theme {
		return a.themes.EmailTheme(ctx, realm)
	})
	a.mail = mail.New(mail.Deps{Store: st, Log: a.log, Now: a.now, BaseURL: cfg.BaseURL,
		Client: a.tracing.Client(mail.NewClient(cfg.OutboundAllowed)), OutboundAllowed: cfg.OutboundAllowed, Themes: emailTheme})
	a.backchannel.allowed, a.backchannel.traced = cfg.OutboundAllowed, a.tracing.Client
	a.loginThrottle = identity.NewThrottle(a.now, identity.ThrottleWindow)
	var adminThrottle identity.FailureCounter
	if st.InFleet() {
		// The servers of a fleet count each other's failures.
		a.loginThrottle = identity.NewSharedThrottle(st, a.now, identity.ThrottleWindow, a.log)
		adminThrottle = identity.NewSharedThrottle(st, a.now, identity.ThrottleWindow, a.log)
	} else if adminThrottle, err = identity.NewStoredThrottle(ctx, st, a.now); err != nil {
		return nil, err
	}
	a.ldap = ldapfed.New(ldapfed.Deps{Store: st, Identity: func() *identity.Core { return a.id }, Log: a.log, Now: a.now,
		Realm: a.realm, BaseURL: cfg.BaseURL, SessionsEnded: a.backchannelLogout, Bus: a.bus})
	if a.assets, err = assets.Load(); err != nil {
		return nil, fmt.Errorf("load assets: %w", err)
	}
	if a.messages, err = ui.LoadCatalogues(); err != nil {
		return nil, fmt.Errorf("load message catalogues: %w", err)
	}
	// A form's CSRF token is a MAC under a key of its own.
	csrfKey, err := hkdf.Key(sha256.New, cfg.MasterKey, nil, "idenplane page csrf", 32)
	if err != nil {
		return nil, fmt.Errorf("derive the pages' CSRF key: %w", err)
	}
	a.mailLangs = mail.Languages{Store: st, Messages: a.messages, Themes: emailTheme}
	a.pages = signin.NewPages(signin.PagesConfig{Messages: a.messages, Stylesheet: a.assets.URL("idenplane.css"),
		Secure: strings.HasPrefix(cfg.BaseURL, "https://"), CSRFKey: csrfKey, DefaultTheme: themes.DefaultPreset,
		Themes: signin.ThemeFunc(func(ctx context.Context, realm *store.Realm, kind signin.ThemeKind) *signin.Theme {
			return a.themes.PageTheme(ctx, realm, kind)
		})})
	a.themes = themes.New(themes.Deps{Store: st, Log: a.log, Now: a.now, BaseURL: cfg.BaseURL, Realm: a.realm,
		PublicRealm: protocolRealmOf(a), Messages: a.messages, Pages: a.pages, PreviewMail: previewMail(a.messages, cfg.BaseURL)})
	a.id = identity.New(a.identityDeps(adminThrottle))
	a.webauthn = webauthnrp.New(webauthnrp.Deps{Store: st, Core: a.id, BaseURL: cfg.BaseURL, Now: a.now, Log: a.log})
	a.metrics = newMetrics(st, a.now)
	a.saml = a.newSAML()
	a.broker = broker.New(a.brokerDeps())
	a.orgs = orgs.New(orgs.Deps{Store: st, Bus: a.bus, Log: a.log, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL, Issuer: a.issuer,
		SendInvitation: a.sendOrgInvitation, MailQueued: a.mail.Wake, LookupTXT: dnsResolver(cfg.DNSResolver).LookupTXT,
		CallerRole: callerOrgRole, CallerPermissions: callerPermissions})
	a.plugins = plugins.New(plugins.Deps{Store: st, Log: a.log, Now: a.now, Dir: cfg.PluginsDir, Bus: a.bus})
	if err := a.plugins.Load(ctx); err != nil {
		return nil, err
	}
	if a.risk, err = risk.New(risk.Deps{Store: st, Log: a.log, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL, ClientIP: a.clientIP,
		Bus: a.bus, GeoIPPath: cfg.GeoIPDB, ListPath: cfg.IPDenyFile, Core: a.id, SessionsEnded: a.backchannelLogout,
		Throttle: a.loginThrottle}); err != nil {
		return nil, err
	}
	a.bus.Subscribe(a.risk)
	a.policies = policies.New(policies.Deps{Store: st, Log: a.log, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL,
		CallerPermissions: callerPermissions, ClientIP: a.clientIP, Issuer: a.issuer, Caller: authzenCaller(a),
		ProtocolRealm: protocolRealmOf(a)})
	coreSteps := signin.CoreSteps(a.id, signin.Keys{RP: a.webauthn, Script: a.assets.URL("webauthn.js")},
		a.pages, a.loginEvent, signin.StepDeps{Store: st, Now: a.now, MailCode: a.mailSignInCode,
			ForgotURL: func(realm *store.Realm, flowID string) string {
				return flowLink(a.issuer(realm), recovery.PathForgotPassword, flowID)
			},
			RegisterURL: func(realm *store.Realm, flowID string) string { return flowLink(a.issuer(realm), pathRegister, flowID) }})
	stepOf := func(kind signin.StepKind) signin.Step {
		return coreSteps[slices.IndexFunc(coreSteps, func(s signin.Step) bool { return s.Kind() == kind })]
	}
	a.signin = signin.New(signin.Deps{Store: st, Pages: a.pages, Now: a.now, BaseURL: cfg.BaseURL,
		Definition: signin.StoredDefinition(st), Steps: append(coreSteps, a.broker.Step(a.assets.ProviderIcon),
			// The plugin step asks its second factor on the TOTP step's page.
			a.orgs.Step(a.pages, a.broker.FlowLoginURL), a.plugins.Step(stepOf(signin.KindTOTP))),
		Requesters: []signin.Requester{oidcRequester{a}, a.saml.Requester(), deviceRequester{a}, stepUpRequester{a}}, ClientIP: a.clientIP,
		Owed: append(signin.OwedSteps(a.id, st, a.pages, a.loginEvent, a.now, a.backchannelLogout),
			a.risk.Step(stepOf(signin.KindTOTP), stepOf(signin.KindSecurityKey))),
		Assessor: a.risk})
	a.signingKeys = signingkeys.New(signingkeys.Deps{Store: st, Log: a.log, Now: a.now, Realm: a.realm, MakeKey: a.makeKey})
	a.cache = newCaches()
	a.webhooks = webhooks.New(webhooks.Deps{Store: st, Log: a.log, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL,
		Client: a.tracing.Client(webhooks.NewClient(cfg.OutboundAllowed)), OutboundAllowed: cfg.OutboundAllowed, Bus: a.bus})
	a.bus.Subscribe(a.webhooks)
	a.bus.Subscribe(a.plugins)
	a.auditStreams = auditstreams.New(auditstreams.Deps{Store: st, Log: a.log, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL,
		Client: a.tracing.Client(auditstreams.NewClient(cfg.OutboundAllowed)), OutboundAllowed: cfg.OutboundAllowed, Dir: cfg.AuditDir})
	a.bus.Subscribe(a.auditStreams)
	a.events = events.New(events.Deps{Store: st, Log: a.log, Now: a.now, Realm: a.realm,
		ValidateRealm: validateRealm, DefaultRealm: defaultRealm(),
		SystemRealm: func(r *store.Realm) bool { return r != nil && r.ID == a.systemRealmID }, Bus: a.bus})
	a.scim = scim.New(scim.Deps{Store: st, Identity: a.id, Log: a.log, Now: a.now, BaseURL: cfg.BaseURL, Realm: a.realm,
		ClientIP: a.clientIP, SessionsEnded: a.backchannelLogout,
		CallerPermissions: callerPermissions, Bus: a.bus})
	a.clients = clients.New(clients.Deps{Store: st, Core: a.id, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL,
		OutboundAllowed: cfg.OutboundAllowed, UserRep: func(u *store.User) any { return toUserRep(u) },
		SessionsEnded: a.backchannelLogout})
	a.nhi = nhi.New(nhi.Deps{Store: st, Core: a.id, Log: a.log, Now: a.now, BaseURL: cfg.BaseURL, Realm: a.realm,
		NewClient: a.clients.StoreNew, Caller: a.adminActor, CallerPermissions: callerPermissions})
	a.adminKeys = adminkeys.New(adminkeys.Deps{Store: st, Log: a.log, Now: a.now, BaseURL: cfg.BaseURL,
		Caller: a.adminActor, CallerPermissions: callerPermissions})
	systemRealm := func(ctx context.Context) (*store.Realm, error) { return st.GetRealmByID(ctx, a.systemRealmID) }
	a.adminAccounts = adminaccounts.New(adminaccounts.Deps{Store: st, Core: a.id, Log: a.log, Now: a.now, BaseURL: cfg.BaseURL,
		SystemRealm: systemRealm, Caller: a.adminActor, CallerPermissions: callerPermissions, SessionsEnded: a.backchannelLogout})
	a.accountAuth = &accountAuth{store: st, systemRealm: systemRealm, realmNamed: a.cachedRealm, verifyAccessToken: a.verifyAccessToken}
	a.attributes = attributes.New(attributes.Deps{Store: st, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL,
		SetUserAttributes: a.id.SetUserAttributes})
	a.migration = NewMigration(st, MigrationConfig{Identity: a.id, Log: a.log, Now: a.now, Realm: a.realm,
		Import: migrationImportOptions(cfg.OutboundAllowed, a.makeKey, a.webauthn.Available())})
	a.authFlows = authflows.New(authflows.Deps{Store: st, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL,
		WebAuthn: a.webauthn.Available()})
	a.registration = registration.New(registration.Deps{Store: st, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL,
		Identity: a.id, Throttle: a.loginThrottle, Messages: a.messages, Mail: registrationMail{a}, LoginEvent: a.loginEvent,
		ClientIP: a.clientIP, UserRep: func(u *store.User) any { return toUserRep(u) }, PendingUserRep: toPendingUserRep})
	a.recovery = recovery.New(recovery.Deps{Store: st, Now: a.now, Log: a.log, Pages: a.pages, Identity: a.id,
		Throttle: a.loginThrottle, ResendLimitPerIP: registration.ResendLimitPerIP, Mail: recoveryMail{a}, Issuer: a.issuer, LoginEvent: a.loginEvent, ClientIP: a.clientIP,
		SessionsEnded: a.backchannelLogout, LiveAuthRequest: a.liveAuthRequestID, LoginURL: a.loginURL,
		AuthRequest: func(ctx context.Context, realm *store.Realm, id string) (*store.AuthRequest, *store.Client, error) {
			return a.pageAuthRequest(ctx, realm, id, false)
		}, RenderLogin: a.renderLoginWith})
	a.groups = groups.New(groups.Deps{Store: st, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL,
		UserRep: func(u *store.User) any { return toUserRep(u) }})
	a.roles = roles.New(roles.Deps{Store: st, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL})
	a.scopes = scopes.New(scopes.Deps{Store: st, Now: a.now, Realm: a.realm, BaseURL: cfg.BaseURL})
	a.sessions = sessions.New(sessions.Deps{Store: st, Now: a.now, Realm: a.realm, SessionsEnded: a.backchannelLogout})
	a.account = account.New(accountDeps(a))
	a.impersonation = impersonation.New(impersonation.Deps{Store: st, Log: a.log, Now: a.now, BaseURL: cfg.BaseURL,
		Realm: a.realm, AdminRealm: SystemRealmName, Caller: a.adminActor, CallerPermissions: callerPermissions,
		SSO: impersonationSSO{a}, Privileges: userPrivileges{st}, LoginEvent: a.loginEvent, SessionsEnded: a.backchannelLogout})
	a.setup = newSetup(a, adminThrottle)
	if err := a.bootstrapAdmin(ctx); err != nil {
		return nil, err
	}
	if err := a.setup.Bootstrap(ctx); err != nil {
		return nil, fmt.Errorf("open the setup wizard: %w", err)
	}
	// The console reaches the API through the router, in process, once
	// the routes exist; its cookies are sealed with a key of their own.
	consoleKey, err := hkdf.Key(sha256.New, cfg.MasterKey, nil, "idenplane console cookies", 32)
	if err != nil {
		return nil, fmt.Errorf("derive console cookie key: %w", err)
	}
	a.console, err = console.New(console.Deps{
		API:         http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.router.ServeHTTP(w, r) }),
		BaseURL:     cfg.BaseURL,
		SystemRealm: SystemRealmName, ClientID: ConsoleClientID,
		CookieKey: consoleKey, SecureCookies: strings.HasPrefix(cfg.BaseURL, "https://"),
		Log: a.log, Now: a.now, RenderPage: a.pages.Render, Asset: a.assets.URL,
	})
	if err != nil {
		return nil, err
	}
	if a.upgrade = cfg.upgrades; a.upgrade == nil {
		a.upgrade = newUpgrades(st, cfg, a.log, a.now, nil)
	}
	a.apiDoc = &apiDocument{version: cfg.Version, stylesheet: a.assets.URL("idenplane.css")}
	a.router = a.routes()
	a.apiDoc.table = a.table
	return a, nil
}

// identityDeps is what the identity core works with: the server's store,
// clock, log, login events and sign-in throttle, and the LDAP federation's
// credential source.
func (a *App) identityDeps(adminThrottle identity.FailureCounter) identity.Deps {
	return identity.Deps{Store: a.store, Now: a.now, Log: a.log, LoginEvent: a.loginEvent,
		Throttle: a.loginThrottle, AdminThrottle: adminThrottle, Sources: []identity.PasswordSource{a.ldap}, Federation: a.ldap}
}

// Handler is the whole server, middleware included.
func (a *App) Handler() http.Handler {
	return a.measure(a.recoverPanics(a.securityHeaders(limitBody(a.upgrade.Gate(a.router)))))
}

// Routes lists every registered route as "METHOD PATH", in registration order.
func (a *App) Routes() []string {
	var out []string
	_ = a.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			out = append(out, m+" "+path)
		}
		return nil
	})
	return out
}
