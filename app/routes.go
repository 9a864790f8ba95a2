package app

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/console"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/nhi"
	"github.com/idenplane/idenplane/app/policies"
	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/app/setup"
	"github.com/idenplane/idenplane/app/upgrade"
	"github.com/idenplane/idenplane/assets"
	"github.com/idenplane/idenplane/store"
)

// access is what a route asks of its caller: nothing (public: the
// endpoint may still authenticate a client or check a form itself), an
// admin credential holding a permission, or a signed-in person of the
// realm (a Bearer token of theirs or the browser's SSO session).
type access struct {
	kind string // accessPublic, accessAdmin, accessUser, accessSCIM, accessConsole or accessSetup
	perm authz.Permission
}

const (
	accessPublic = "public"
	accessAdmin  = "admin"
	accessUser   = "user"
	// accessSCIM is a SCIM token of the path's realm (app/scim checks it).
	accessSCIM = "scim"
	// accessConsole is a signed-in console session (app/console): the
	// console holds no permission of its own, and each API call its page
	// makes asks the administrator's.
	accessConsole = "console"
	// accessSetup is the setup wizard's bootstrap token (app/setup checks
	// it), until the wizard is completed or skipped: 410 from then on.
	accessSetup = "setup"
)

// route is one entry of the table, for `idenplane routes`, the test
// that every route declares its access, and the OpenAPI document.
type route struct {
	method, path string
	access       access
	format       format
}

// format is what a route answers, and so whether the OpenAPI document
// describes it: the APIs do; pages, the SAML bindings and static files are
// a browser's, not an API.
type format int

const (
	formatAPI     format = iota // JSON, errors in the APIs' shape (apperr)
	formatEither                // JSON to a script, pages to a browser (the account, the WebAuthn ceremonies)
	formatOAuth                 // OpenID Connect and OAuth 2.0: OAuth errors
	formatSCIM                  // SCIM 2.0: SCIM errors
	formatBrowser               // pages, SAML bindings, static files: not in the document
)

// routes registers every route in one place, each in its group: the group
// says who may call it and in which shape its errors are answered (the
// JSON error of the APIs, an OAuth error, an HTML page).
func (a *App) routes() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = a.handle(func(w http.ResponseWriter, r *http.Request) error {
		return apperr.NotFound("route " + r.Method + " " + r.URL.Path)
	})
	r.MethodNotAllowedHandler = a.handle(func(w http.ResponseWriter, req *http.Request) error {
		w.Header().Set("Allow", strings.Join(allowedMethods(r, req), ", "))
		return apperr.New(http.StatusMethodNotAllowed, apperr.CodeMethodNotAllowed, "%s is not allowed on %s", req.Method, req.URL.Path)
	})
	r.Use(recordRoute)
	addAs := func(f format, method, path string, acc access, h http.Handler) {
		r.Handle(path, h).Methods(method)
		a.table = append(a.table, route{method: method, path: path, access: acc, format: f})
	}
	// add registers a route of the APIs' JSON, or a page when it is
	// public (the device page, the console's sign-in).
	add := func(method, path string, acc access, h http.Handler) {
		f := formatAPI
		if acc.kind == accessPublic || acc.kind == accessConsole {
			f = formatBrowser
		}
		addAs(f, method, path, acc, h)
	}
	public := access{kind: accessPublic}
	user := access{kind: accessUser}

	// JSON endpoints anyone may call; they answer in the APIs' error shape.
	api := func(method, path string, h httpx.HandlerFunc) { addAs(formatAPI, method, path, public, a.handle(h)) }
	// The admin API: a credential holding perm, or 401/403.
	admin := func(method, path string, perm authz.Permission, h httpx.HandlerFunc) {
		add(method, path, access{kind: accessAdmin, perm: perm}, a.handle(a.requireAdmin(perm, a.recordAdminEvent(h))))
	}
	// Hosted pages of a realm: errors are error pages.
	page := func(method, path string, h realmHandler) {
		addAs(formatBrowser, method, "/realms/{realm}"+path, public, a.realmPage(h))
	}
	// The account: JSON to a Bearer caller, pages to a signed-in browser.
	acct := a.account
	accountRoute := func(method, path string, h account.Handler) {
		addAs(formatEither, method, "/realms/{realm}/account"+path, user, acct.Handle(h))
	}
	// The OpenID Connect provider: OAuth errors; CORS per client.
	provider := a.providerEndpoint()
	protocol := func(method, path string, h http.Handler) {
		addAs(formatOAuth, method, "/realms/{realm}"+path, public, h)
	}
	form := func(h http.Handler) http.Handler { return a.readProtocolForm(a.cors(h)) }

	addAs(formatBrowser, http.MethodGet, "/", public, a.handle(a.welcome))
	r.PathPrefix(assets.Prefix).Handler(a.assets).Methods(http.MethodGet, http.MethodHead)
	a.table = append(a.table, route{http.MethodGet, assets.Prefix, public, formatBrowser}, route{http.MethodHead, assets.Prefix, public, formatBrowser})
	api(http.MethodGet, pathOpenAPIJSON, a.apiDoc.serveJSON)
	api(http.MethodGet, pathOpenAPIYAML, a.apiDoc.serveYAML)
	addAs(formatBrowser, http.MethodGet, pathOpenAPI, public, a.handle(a.apiDoc.servePage))
	api(http.MethodGet, "/health", health)
	api(http.MethodGet, "/health/live", health)
	api(http.MethodGet, "/health/ready", a.ready)
	if a.cfg.MetricsPublic {
		api(http.MethodGet, "/admin/metrics", a.serveMetrics)
	} else {
		admin(http.MethodGet, "/admin/metrics", authz.SystemRead, a.serveMetrics)
	}

	// OpenID Connect and OAuth 2.0.
	protocol(http.MethodGet, pathDiscovery, form(provider))
	protocol(http.MethodGet, "/"+pathCerts, form(provider))
	protocol(http.MethodPost, "/"+pathToken, form(provider))
	protocol(http.MethodPost, "/"+pathIntrospect, form(provider))
	protocol(http.MethodPost, "/"+pathRevoke, form(provider))
	protocol(http.MethodPost, "/"+pathDevice, form(provider))
	protocol(http.MethodGet, "/"+pathLogout, form(provider))
	protocol(http.MethodPost, "/"+pathLogout, form(provider))
	protocol(http.MethodPost, "/"+pathBackchannelLogout, form(provider))
	protocol(http.MethodGet, "/"+pathUserinfo, form(bearerChallenge(provider)))
	protocol(http.MethodPost, "/"+pathUserinfo, form(bearerChallenge(provider)))
	metadata := metadataAlias(a.cors(provider))
	protocol(http.MethodGet, pathOAuthMetadata, metadata)
	protocol(http.MethodOptions, pathOAuthMetadata, metadata)
	addAs(formatOAuth, http.MethodGet, pathOAuthMetadata+"/realms/{realm}", public, metadata)
	addAs(formatOAuth, http.MethodOptions, pathOAuthMetadata+"/realms/{realm}", public, metadata)
	// Preflights of the endpoints browsers may call from another origin
	// (corsEndpoints); an unknown realm is still a 404.
	for _, p := range []string{pathDiscovery, "/" + pathCerts, "/" + pathToken, "/" + pathIntrospect, "/" + pathRevoke, "/" + pathUserinfo} {
		protocol(http.MethodOptions, p, a.cors(provider))
	}

	// Sign-in, consent, second factors, device approval, recovery and
	// registration pages.
	page(http.MethodGet, "/"+pathAuth, a.authorize)
	page(http.MethodPost, "/"+pathAuth, a.authorize)
	page(http.MethodGet, pathLogin, a.loginPage)
	page(http.MethodPost, pathLogin, a.login)
	// The pages of a sign-in through an authentication flow (app/signin).
	page(http.MethodGet, pathSignInFlow, func(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
		return a.signin.Page(w, r, realm, mux.Vars(r)["flow"])
	})
	page(http.MethodPost, pathSignInFlow, func(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
		return a.signin.Submit(w, r, realm, mux.Vars(r)["flow"])
	})
	page(http.MethodGet, pathConsent, a.consentPage)
	page(http.MethodPost, pathConsent, a.consent)
	page(http.MethodGet, pathOrgSelect, a.orgSelectPage)
	page(http.MethodPost, pathOrgSelect, a.orgSelect)
	page(http.MethodGet, pathTOTP, a.totpPage)
	page(http.MethodPost, pathTOTP, a.totpSubmit)
	page(http.MethodGet, pathWebAuthn, a.webauthnStepPage)
	// The device page answers its errors on a device page of its own.
	add(http.MethodGet, "/realms/{realm}/device", public, http.HandlerFunc(a.devicePage))
	add(http.MethodPost, "/realms/{realm}/device", public, http.HandlerFunc(a.devicePage))
	rec := a.recovery
	page(http.MethodGet, recovery.PathVerifyEmail, rec.VerifyEmailPage)
	page(http.MethodGet, recovery.PathForgotPassword, rec.ForgotPasswordPage)
	page(http.MethodPost, recovery.PathForgotPassword, rec.ForgotPassword)
	page(http.MethodGet, recovery.PathResetPassword, rec.ResetPasswordPage)
	page(http.MethodPost, recovery.PathResetPassword, rec.ResetPasswordForm)
	page(http.MethodPost, recovery.PathResendVerification, rec.ResendVerification)
	page(http.MethodGet, pathChangePassword, a.changePasswordPage)
	page(http.MethodPost, pathChangePassword, a.changePassword)
	page(http.MethodGet, pathRegister, a.registerPage)
	page(http.MethodPost, pathRegister, a.registerForm)

	// WebAuthn ceremonies (JSON; the ceremony is the credential) and the
	// step-up API (a Bearer token of the person).
	for _, p := range []struct {
		path string
		h    realmHandler
	}{
		{"/register/options", a.webauthnRegisterOptions},
		{"/register/verify", a.webauthnRegisterVerify},
		{"/authenticate/options", a.webauthnAuthenticateOptions},
		{"/authenticate/verify", a.webauthnAuthenticateVerify},
	} {
		addAs(formatEither, http.MethodPost, "/realms/{realm}"+pathWebAuthn+p.path, public, a.webauthnEndpoint(p.h))
	}
	add(http.MethodGet, "/realms/{realm}"+pathStepUp+"/challenge", user, a.stepUpEndpoint(a.stepUpChallenge))
	add(http.MethodPost, "/realms/{realm}"+pathStepUp+"/verify", user, a.stepUpEndpoint(a.stepUpVerify))

	// Self-registration API (the module app/registration).
	api(http.MethodGet, "/realms/{realm}/registration/fields", a.registration.FormFields)
	api(http.MethodPost, "/realms/{realm}/registration/register", a.registration.Register)
	api(http.MethodPost, "/realms/{realm}/registration/verify-email", a.registration.VerifyEmail)
	api(http.MethodPost, "/realms/{realm}/registration/resend-verification", a.registration.Resend)

	// The account, as API and pages.
	accountRoute(http.MethodGet, "", acct.Home)
	accountRoute(http.MethodGet, "/", acct.Home)
	accountRoute(http.MethodPost, "/profile", acct.Profile)
	accountRoute(http.MethodPost, "/password", acct.Password)
	accountRoute(http.MethodGet, "/data-export", a.accountExport)
	accountRoute(http.MethodGet, "/delete-account", acct.DeletionStatus)
	accountRoute(http.MethodPost, "/delete-account", acct.DeleteRequest)
	accountRoute(http.MethodPost, "/cancel-delete-account", acct.CancelDelete)
	accountRoute(http.MethodGet, "/totp-setup", acct.TOTPSetup)
	accountRoute(http.MethodPost, "/totp-setup", acct.TOTPConfirm)
	accountRoute(http.MethodPost, "/totp-disable", acct.TOTPDisable)
	accountRoute(http.MethodGet, account.WebAuthnPath, acct.WebAuthnList)
	accountRoute(http.MethodDelete, account.WebAuthnPath+"/{credentialId}", acct.WebAuthnDelete)
	accountRoute(http.MethodPost, account.WebAuthnPath+"/{credentialId}/delete", acct.WebAuthnDelete)
	accountRoute(http.MethodGet, account.WebAuthnAddPath, account.PagesOnly(acct.WebAuthnAdd))
	accountRoute(http.MethodGet, account.LinkedPath, acct.Linked)
	accountRoute(http.MethodDelete, account.LinkedPath+"/{alias}", acct.Unlink)
	accountRoute(http.MethodPost, account.LinkedPath+"/{alias}/delete", acct.Unlink)
	accountRoute(http.MethodPost, account.LinkedPath+"/{alias}/link", account.PagesOnly(acct.LinkStart))

	// The first-run setup wizard (app/setup): its API asks the bootstrap
	// token, but status, which says whether setup is pending without it;
	// its page takes the token once and keeps it in a cookie.
	su := a.setup
	setupAPI := func(method, path string, h httpx.HandlerFunc) {
		addAs(formatAPI, method, setup.Path+path, access{kind: accessSetup}, a.handle(h))
	}
	addAs(formatBrowser, http.MethodGet, setup.Path, public, http.HandlerFunc(su.Page))
	addAs(formatBrowser, http.MethodPost, setup.Path, public, http.HandlerFunc(su.Submit))
	api(http.MethodGet, setup.Path+"/status", su.Status)
	setupAPI(http.MethodGet, "/state", su.State)
	setupAPI(http.MethodPost, "/admin-account", su.AdminAccount)
	setupAPI(http.MethodPost, "/realm-settings", su.RealmSettings)
	setupAPI(http.MethodPost, "/smtp-config", su.SMTPConfig)
	setupAPI(http.MethodPost, "/smtp/test", su.SMTPTest)
	setupAPI(http.MethodPost, "/client", su.Client)
	setupAPI(http.MethodPost, "/sdk-generated", su.SDKGenerated)
	setupAPI(http.MethodPost, "/complete", su.Complete)
	setupAPI(http.MethodPost, "/skip", su.Skip)
	setupAPI(http.MethodPost, "/reset", su.Reset)

	// Admin authentication.
	api(http.MethodPost, "/admin/auth/login", a.adminLogin)
	admin(http.MethodGet, "/admin/auth/me", authz.Authenticated, a.adminMe)
	admin(http.MethodPost, "/admin/auth/logout", authz.Authenticated, a.adminLogout)

	// Named admin API keys, for automation (app/adminkeys).
	ak := a.adminKeys
	ac := a.adminAccounts
	admin(http.MethodGet, "/admin/accounts", authz.SystemManage, ac.List)
	admin(http.MethodPost, "/admin/accounts", authz.SystemManage, ac.Create)
	admin(http.MethodGet, "/admin/accounts/{id}", authz.SystemManage, ac.Get)
	admin(http.MethodPut, "/admin/accounts/{id}", authz.SystemManage, ac.Update)
	admin(http.MethodDelete, "/admin/accounts/{id}", authz.SystemManage, ac.Delete)
	admin(http.MethodGet, "/admin/accounts/{id}/sessions", authz.SystemManage, ac.Sessions)
	admin(http.MethodDelete, "/admin/accounts/{id}/sessions", authz.SystemManage, ac.EndSessions)
	admin(http.MethodPost, "/admin/accounts/{id}/enrolment", authz.SystemManage, ac.Enrol)
	admin(http.MethodGet, "/admin/api-keys", authz.SystemManage, ak.List)
	admin(http.MethodPost, "/admin/api-keys", authz.SystemManage, ak.Create)
	admin(http.MethodGet, "/admin/api-keys/{id}", authz.SystemManage, ak.Get)
	admin(http.MethodPost, "/admin/api-keys/{id}/rotate", authz.SystemManage, ak.Rotate)
	admin(http.MethodDelete, "/admin/api-keys/{id}", authz.SystemManage, ak.Revoke)

	// The server itself (app/system).
	admin(http.MethodGet, "/admin/system/version", authz.SystemRead, a.system.Version)

	// The server's WebAssembly plugins (app/plugins).
	pl := a.plugins
	admin(http.MethodGet, "/admin/plugins", authz.SystemRead, pl.List)
	admin(http.MethodGet, "/admin/plugins/{name}", authz.SystemRead, pl.Get)
	admin(http.MethodDelete, "/admin/plugins/{name}", authz.SystemManage, pl.Delete)
	admin(http.MethodPost, "/admin/plugins/{name}/enable", authz.SystemManage, pl.Enable)
	admin(http.MethodPost, "/admin/plugins/{name}/disable", authz.SystemManage, pl.Disable)

	// Upgrade and rollback of the database (app/upgrade, docs/upgrade.md):
	// also all the admin API a server whose upgrade waits serves
	// (upgrade_wiring.go).
	upgradeRoutes(admin, a.upgrade)

	// Realms. Fixed paths come before {realm}, which would swallow them.
	admin(http.MethodGet, "/admin/realms/themes", authz.SystemRead, a.themes.ListPresetNames)
	admin(http.MethodPost, "/admin/realms/import", authz.SystemManage, a.importRealm)
	// Imports of other products' exports (app/migration): a Keycloak
	// realm and Auth0's users make or fill realms, a system matter; a list
	// of users goes into a realm as user writes do.
	admin(http.MethodPost, "/admin/migration/keycloak", authz.SystemManage, a.migration.ImportKeycloak)
	admin(http.MethodPost, "/admin/migration/auth0", authz.SystemManage, a.migration.ImportAuth0)
	admin(http.MethodPost, "/admin/realms", authz.SystemManage, a.createRealm)
	admin(http.MethodGet, "/admin/realms", authz.SystemRead, a.listRealms)
	admin(http.MethodGet, "/admin/realms/{realm}", authz.RealmRead, a.getRealm)
	admin(http.MethodPut, "/admin/realms/{realm}", authz.RealmWrite, a.updateRealm)
	admin(http.MethodPatch, "/admin/realms/{realm}", authz.RealmWrite, a.updateRealm)
	admin(http.MethodDelete, "/admin/realms/{realm}", authz.SystemManage, a.deleteRealm)
	admin(http.MethodGet, "/admin/realms/{realm}/export", authz.RealmRead, a.exportRealm)
	admin(http.MethodGet, "/admin/realms/{realm}/stats", authz.RealmRead, a.realmStats)
	admin(http.MethodGet, "/admin/realms/{realm}/stats/consents", authz.RealmRead, a.consentStats)
	// Signing keys (the module app/signingkeys).
	sk := a.signingKeys
	admin(http.MethodGet, "/admin/realms/{realm}/keys", authz.RealmRead, sk.List)
	admin(http.MethodPost, "/admin/realms/{realm}/keys/rotate", authz.RealmWrite, sk.Rotate)
	admin(http.MethodGet, "/admin/realms/{realm}/keys/config", authz.RealmRead, sk.GetConfig)
	admin(http.MethodPut, "/admin/realms/{realm}/keys/config", authz.RealmWrite, sk.PutConfig)
	// Themes of the pages and mails (app/themes): settings of the realm.
	// The fixed paths come before {themeId}, which would swallow them; a
	// preview changes nothing.
	th := a.themes
	const themeList, theme1 = "/admin/realms/{realm}/themes", "/admin/realms/{realm}/themes/{themeId}"
	admin(http.MethodPost, themeList, authz.RealmWrite, th.CreateTheme)
	admin(http.MethodGet, themeList, authz.RealmRead, th.ListThemes)
	admin(http.MethodGet, themeList+"/built-in", authz.RealmRead, th.GetBuiltIn)
	admin(http.MethodPost, themeList+"/preview", authz.RealmRead, th.Preview)
	admin(http.MethodPost, themeList+"/assets/upload", authz.RealmWrite, th.Upload)
	admin(http.MethodGet, theme1, authz.RealmRead, th.GetTheme)
	admin(http.MethodPut, theme1, authz.RealmWrite, th.PutTheme)
	admin(http.MethodDelete, theme1, authz.RealmWrite, th.DeleteTheme)
	admin(http.MethodPost, theme1+"/publish", authz.RealmWrite, th.Publish)
	admin(http.MethodGet, theme1+"/versions", authz.RealmRead, th.ListVersions)
	admin(http.MethodPost, theme1+"/restore/{version}", authz.RealmWrite, th.Restore)
	// The themes' images, for anyone: the pages show them, a mail's
	// reader fetches its logo.
	add(http.MethodGet, "/realms/{realm}/themes/assets/{assetId}", public, http.HandlerFunc(th.ServeAsset))
	add(http.MethodHead, "/realms/{realm}/themes/assets/{assetId}", public, http.HandlerFunc(th.ServeAsset))
	admin(http.MethodPost, "/admin/realms/{realm}/smtp/test", authz.RealmWrite, a.testSMTP)
	admin(http.MethodPost, "/admin/realms/{realm}/email/test", authz.RealmWrite, a.testEmail)
	admin(http.MethodGet, "/realms/{realm}/registration/admin/fields", authz.RealmRead, a.registration.ListFields)
	admin(http.MethodPost, "/realms/{realm}/registration/admin/fields", authz.RealmWrite, a.registration.CreateField)
	admin(http.MethodPut, "/realms/{realm}/registration/admin/fields/{fieldId}", authz.RealmWrite, a.registration.PutField)
	admin(http.MethodDelete, "/realms/{realm}/registration/admin/fields/{fieldId}", authz.RealmWrite, a.registration.DeleteField)
	admin(http.MethodGet, "/realms/{realm}/registration/admin/settings", authz.RealmRead, a.registration.GetSettings)
	admin(http.MethodPut, "/realms/{realm}/registration/admin/settings", authz.RealmWrite, a.registration.PutSettings)

	// Users; their consents, their sessions and the realm's are the module
	// app/sessions.
	se := a.sessions
	const users, user1 = "/admin/realms/{realm}/users", "/admin/realms/{realm}/users/{userId}"
	admin(http.MethodPost, users, authz.UsersWrite, a.createUser)
	admin(http.MethodPost, users+"/import", authz.UsersWrite, a.migration.ImportUsers)
	admin(http.MethodGet, users, authz.UsersRead, a.listUsers)
	admin(http.MethodGet, user1, authz.UsersRead, a.getUser)
	admin(http.MethodPut, user1, authz.UsersWrite, a.putUser)
	admin(http.MethodPatch, user1, authz.UsersWrite, a.patchUser)
	admin(http.MethodDelete, user1, authz.UsersWrite, a.deleteUser)
	admin(http.MethodPut, user1+"/reset-password", authz.UsersWrite, a.resetPassword)
	admin(http.MethodPost, user1+"/send-verification-email", authz.UsersWrite, a.sendVerificationEmail)
	admin(http.MethodGet, user1+"/mfa/status", authz.UsersRead, a.mfaStatus)
	admin(http.MethodDelete, user1+"/mfa", authz.UsersWrite, a.resetMFA)
	admin(http.MethodDelete, user1+"/mfa/totp", authz.UsersWrite, a.removeTOTP)
	admin(http.MethodDelete, user1+"/mfa/webauthn/{credentialId}", authz.UsersWrite, a.removeWebAuthnCredential)
	admin(http.MethodPut, user1+"/reset-password-email", authz.UsersWrite, a.sendResetPasswordEmail)
	admin(http.MethodGet, user1+"/consents", authz.UsersRead, se.ListConsents)
	admin(http.MethodGet, user1+"/consents/history", authz.UsersRead, se.ConsentHistory)
	admin(http.MethodDelete, user1+"/consents/{clientId}", authz.UsersWrite, se.RevokeConsent)
	admin(http.MethodGet, "/admin/realms/{realm}/brute-force/locked-users", authz.UsersRead, a.listLockedUsers)
	admin(http.MethodPost, "/admin/realms/{realm}/brute-force/users/{userId}/unlock", authz.UsersWrite, a.unlockUser)
	admin(http.MethodPost, "/admin/realms/{realm}/brute-force/users/{userId}", authz.UsersWrite, a.unlockUser) // alias of unlock
	admin(http.MethodGet, "/realms/{realm}/registration/pending", authz.UsersRead, a.registration.ListPending)
	admin(http.MethodPost, "/realms/{realm}/registration/approve/{userId}", authz.UsersWrite, a.registration.Approve)
	admin(http.MethodPost, "/realms/{realm}/registration/reject/{userId}", authz.UsersWrite, a.registration.Reject)

	// Sessions.
	admin(http.MethodGet, "/admin/realms/{realm}/sessions", authz.SessionsRead, se.ListRealmSessions)
	admin(http.MethodDelete, "/admin/realms/{realm}/sessions/{sessionId}", authz.SessionsEnd, se.EndSession)
	admin(http.MethodGet, user1+"/sessions", authz.SessionsRead, se.ListUserSessions)
	admin(http.MethodDelete, user1+"/sessions", authz.SessionsEnd, se.EndUserSessions)
	admin(http.MethodGet, user1+"/offline-sessions", authz.SessionsRead, se.ListOfflineSessions)
	admin(http.MethodDelete, user1+"/offline-sessions/{tokenId}", authz.SessionsEnd, se.RevokeOfflineSession)

	// Clients and the client scopes linked to them (the module app/clients).
	const clients, client1 = "/admin/realms/{realm}/clients", "/admin/realms/{realm}/clients/{clientId}"
	cl := a.clients
	admin(http.MethodPost, clients, authz.ClientsWrite, cl.CreateClient)
	admin(http.MethodGet, clients, authz.ClientsRead, cl.ListClients)
	admin(http.MethodGet, client1, authz.ClientsRead, cl.GetClient)
	admin(http.MethodPut, client1, authz.ClientsWrite, cl.UpdateClient)
	admin(http.MethodPatch, client1, authz.ClientsWrite, cl.UpdateClient)
	admin(http.MethodDelete, client1, authz.ClientsWrite, cl.DeleteClient)
	admin(http.MethodPost, client1+"/regenerate-secret", authz.ClientsWrite, cl.RegenerateSecret)
	admin(http.MethodGet, client1+"/service-account-user", authz.ClientsRead, cl.GetServiceAccountUser)
	for _, l := range []struct{ path, kind string }{
		{"/default-client-scopes", store.ScopeDefault},
		{"/optional-client-scopes", store.ScopeOptional},
	} {
		admin(http.MethodGet, client1+l.path, authz.ClientsRead, cl.ListLinkedScopes(l.kind))
		admin(http.MethodPost, client1+l.path, authz.ClientsWrite, cl.AddLinkedScope(l.kind))
		admin(http.MethodDelete, client1+l.path+"/{scopeId}", authz.ClientsWrite, cl.RemoveLinkedScope(l.kind))
	}

	// Roles (the module app/roles): realm roles and client roles share
	// their handlers, the path says which container a role lives in.
	ro := a.roles
	for _, base := range []string{"/admin/realms/{realm}/roles", client1 + "/roles"} {
		one := base + "/{roleName}"
		admin(http.MethodPost, base, authz.RolesWrite, ro.CreateRole)
		admin(http.MethodGet, base, authz.RolesRead, ro.ListRoles)
		admin(http.MethodGet, one, authz.RolesRead, ro.GetRole)
		admin(http.MethodPut, one, authz.RolesWrite, ro.UpdateRole)
		admin(http.MethodPatch, one, authz.RolesWrite, ro.UpdateRole)
		admin(http.MethodDelete, one, authz.RolesWrite, ro.DeleteRole)
		admin(http.MethodGet, one+"/composites", authz.RolesRead, ro.ListComposites)
		admin(http.MethodPost, one+"/composites", authz.RolesWrite, ro.AddComposites)
		admin(http.MethodDelete, one+"/composites", authz.RolesWrite, ro.RemoveComposites)
	}

	// Groups and memberships (the module app/groups).
	const groups, group1 = "/admin/realms/{realm}/groups", "/admin/realms/{realm}/groups/{groupId}"
	gr := a.groups
	admin(http.MethodPost, groups, authz.GroupsWrite, gr.CreateGroup)
	admin(http.MethodGet, groups, authz.GroupsRead, gr.ListGroups)
	admin(http.MethodGet, group1, authz.GroupsRead, gr.GetGroup)
	admin(http.MethodPut, group1, authz.GroupsWrite, gr.UpdateGroup)
	admin(http.MethodPatch, group1, authz.GroupsWrite, gr.UpdateGroup)
	admin(http.MethodDelete, group1, authz.GroupsWrite, gr.DeleteGroup)
	admin(http.MethodPost, group1+"/children", authz.GroupsWrite, gr.CreateChildGroup)
	admin(http.MethodGet, group1+"/children", authz.GroupsRead, gr.ListChildGroups)
	admin(http.MethodGet, group1+"/members", authz.GroupsRead, gr.ListGroupMembers)
	admin(http.MethodGet, user1+"/groups", authz.UsersRead, gr.ListUserGroups)
	admin(http.MethodPut, user1+"/groups/{groupId}", authz.UsersWrite, gr.JoinGroup)
	admin(http.MethodPost, user1+"/groups/{groupId}", authz.UsersWrite, gr.JoinGroup) // the spec's alias
	admin(http.MethodDelete, user1+"/groups/{groupId}", authz.UsersWrite, gr.LeaveGroup)

	// Role mappings of users and groups: all of them, the realm's roles,
	// one client's roles, and each of those with composites expanded.
	for _, h := range []struct {
		base        string
		holder      roles.Holder
		read, write authz.Permission
	}{
		{user1 + "/role-mappings", roles.UserHolder, authz.UsersRead, authz.UsersWrite},
		{group1 + "/role-mappings", roles.GroupHolder, authz.GroupsRead, authz.GroupsWrite},
	} {
		admin(http.MethodGet, h.base, h.read, ro.ListMappings(h.holder, roles.AllScope))
		for _, s := range []struct {
			path  string
			scope roles.Scope
		}{
			{h.base + "/realm", roles.RealmScope},
			{h.base + "/clients/{clientId}", roles.ClientScope},
		} {
			admin(http.MethodGet, s.path, h.read, ro.ListMappings(h.holder, s.scope))
			admin(http.MethodPost, s.path, h.write, ro.MapRoles(h.holder, s.scope))
			admin(http.MethodDelete, s.path, h.write, ro.UnmapRoles(h.holder, s.scope))
			admin(http.MethodGet, s.path+"/composite", h.read, ro.ListEffectiveRoles(h.holder, s.scope))
		}
	}
	// The spec maps a group's realm roles on the bare path too.
	admin(http.MethodPost, group1+"/role-mappings", authz.GroupsWrite, ro.MapRoles(roles.GroupHolder, roles.AllScope))
	admin(http.MethodDelete, group1+"/role-mappings", authz.GroupsWrite, ro.UnmapRoles(roles.GroupHolder, roles.AllScope))

	// Client scopes and their protocol mappers (the module app/scopes).
	sco := a.scopes
	const scopesPath, scope1 = "/admin/realms/{realm}/client-scopes", "/admin/realms/{realm}/client-scopes/{scopeId}"
	admin(http.MethodGet, scopesPath, authz.ScopesRead, sco.ListClientScopes)
	admin(http.MethodPost, scopesPath, authz.ScopesWrite, sco.CreateClientScope)
	admin(http.MethodGet, scope1, authz.ScopesRead, sco.GetClientScope)
	admin(http.MethodPut, scope1, authz.ScopesWrite, sco.PutClientScope)
	admin(http.MethodDelete, scope1, authz.ScopesWrite, sco.DeleteClientScope)
	admin(http.MethodGet, scope1+"/protocol-mappers", authz.ScopesRead, sco.ListMappers)
	admin(http.MethodPost, scope1+"/protocol-mappers", authz.ScopesWrite, sco.CreateMapper)
	admin(http.MethodGet, scope1+"/protocol-mappers/{mapperId}", authz.ScopesRead, sco.GetMapper)
	admin(http.MethodPut, scope1+"/protocol-mappers/{mapperId}", authz.ScopesWrite, sco.PutMapper)
	admin(http.MethodDelete, scope1+"/protocol-mappers/{mapperId}", authz.ScopesWrite, sco.DeleteMapper)
	admin(http.MethodGet, "/admin/realms/{realm}/protocol-mapper-types", authz.ScopesRead, sco.ListMapperTypes)

	// Events (the module app/events).
	ev := a.events
	admin(http.MethodGet, "/admin/realms/{realm}/admin-events", authz.EventsRead, ev.ListAdminEvents)
	admin(http.MethodGet, "/admin/realms/{realm}/events", authz.EventsRead, ev.ListLoginEvents)
	admin(http.MethodDelete, "/admin/realms/{realm}/events", authz.EventsWrite, ev.ClearLoginEvents)
	admin(http.MethodGet, "/admin/realms/{realm}/events/login/export", authz.EventsRead, ev.ExportLoginEvents)
	admin(http.MethodGet, "/admin/realms/{realm}/events/admin/export", authz.EventsRead, ev.ExportAdminEvents)
	admin(http.MethodGet, "/admin/realms/{realm}/events/config", authz.EventsRead, ev.GetConfig)
	admin(http.MethodPut, "/admin/realms/{realm}/events/config", authz.EventsWrite, ev.PutConfig)

	// The SAML identity provider (the module app/saml).
	sp := a.saml
	saml := func(method, path string, h http.HandlerFunc) {
		addAs(formatBrowser, method, "/realms/{realm}"+path, public, h)
	}
	saml(http.MethodGet, "/protocol/saml/descriptor", sp.Descriptor)
	saml(http.MethodGet, "/protocol/saml", sp.SSO)
	saml(http.MethodPost, "/protocol/saml", sp.SSO)
	saml(http.MethodGet, "/protocol/saml/clients/{id}", sp.IDPInitiated)
	// Service providers are the clients of SAML: the clients' permissions.
	const sps, sp1 = "/admin/realms/{realm}/saml-service-providers", "/admin/realms/{realm}/saml-service-providers/{id}"
	admin(http.MethodPost, sps, authz.ClientsWrite, sp.CreateServiceProvider)
	admin(http.MethodGet, sps, authz.ClientsRead, sp.ListServiceProviders)
	admin(http.MethodGet, sp1, authz.ClientsRead, sp.GetServiceProvider)
	admin(http.MethodPut, sp1, authz.ClientsWrite, sp.UpdateServiceProvider)
	admin(http.MethodDelete, sp1, authz.ClientsWrite, sp.DeleteServiceProvider)
	admin(http.MethodGet, "/admin/realms/{realm}/saml/settings", authz.RealmRead, sp.GetSettings)
	admin(http.MethodPut, "/admin/realms/{realm}/saml/settings", authz.RealmWrite, sp.PutSettings)

	// Identity brokering (the module app/broker).
	const idps, idp1 = "/admin/realms/{realm}/identity-providers", "/admin/realms/{realm}/identity-providers/{alias}"
	br := a.broker
	page(http.MethodGet, broker.Paths.Login, br.Login)
	page(http.MethodGet, broker.Paths.Callback, br.Callback)
	page(http.MethodGet, broker.Paths.Link, br.LinkPage)
	page(http.MethodGet, broker.Paths.LogoutResponse, br.LogoutResponse)
	page(http.MethodPost, broker.Paths.Link, br.LinkConfirm)
	addAs(formatEither, http.MethodGet, "/realms/{realm}"+broker.Paths.Token, user, a.account.Handle(a.brokerToken))
	admin(http.MethodPost, idps, authz.IdentityProvidersWrite, br.CreateProvider)
	admin(http.MethodGet, idps, authz.IdentityProvidersRead, br.ListProviders)
	// A discovery by itself, to fill a form: the server fetches, as a create does.
	admin(http.MethodPost, idps+"/discover", authz.IdentityProvidersWrite, br.Discover)
	admin(http.MethodGet, idp1, authz.IdentityProvidersRead, br.GetProvider)
	admin(http.MethodPut, idp1, authz.IdentityProvidersWrite, br.UpdateProvider)
	admin(http.MethodDelete, idp1, authz.IdentityProvidersWrite, br.DeleteProvider)

	// User federation (the module app/ldapfed): realm settings.
	const feds, fed1 = "/admin/realms/{realm}/user-federation", "/admin/realms/{realm}/user-federation/{id}"
	admin(http.MethodGet, feds, authz.RealmRead, a.ldap.List)
	admin(http.MethodPost, feds, authz.RealmWrite, a.ldap.Create)
	admin(http.MethodGet, fed1, authz.RealmRead, a.ldap.Get)
	admin(http.MethodPut, fed1, authz.RealmWrite, a.ldap.Update)
	admin(http.MethodPatch, fed1, authz.RealmWrite, a.ldap.Update)
	admin(http.MethodDelete, fed1, authz.RealmWrite, a.ldap.Delete)
	admin(http.MethodPost, fed1+"/test-connection", authz.RealmWrite, a.ldap.TestConnection)
	admin(http.MethodPost, fed1+"/sync", authz.RealmWrite, a.ldap.Sync)

	// SCIM 2.0 (the module app/scim): its tokens' admin API, and the
	// protocol, whose endpoints authenticate a SCIM token of the realm and
	// answer SCIM errors.
	wh := a.webhooks
	const webhooks, webhook1 = "/admin/realms/{realm}/webhooks", "/admin/realms/{realm}/webhooks/{id}"
	// A webhook receives the realm's events: reading them is events:read,
	// sending them somewhere events:write.
	admin(http.MethodPost, webhooks, authz.EventsWrite, wh.Create)
	admin(http.MethodGet, webhooks, authz.EventsRead, wh.List)
	admin(http.MethodGet, webhook1, authz.EventsRead, wh.Get)
	admin(http.MethodPut, webhook1, authz.EventsWrite, wh.Put)
	admin(http.MethodPatch, webhook1, authz.EventsWrite, wh.Patch)
	admin(http.MethodDelete, webhook1, authz.EventsWrite, wh.Delete)
	admin(http.MethodPost, webhook1+"/test", authz.EventsWrite, wh.Test)
	admin(http.MethodGet, webhook1+"/deliveries", authz.EventsRead, wh.Deliveries)
	as := a.auditStreams
	const auditStreams, auditStream1 = "/admin/realms/{realm}/audit-streams", "/admin/realms/{realm}/audit-streams/{id}"
	// An audit stream receives the realm's events, as a webhook does.
	admin(http.MethodPost, auditStreams, authz.EventsWrite, as.Create)
	admin(http.MethodGet, auditStreams, authz.EventsRead, as.List)
	admin(http.MethodGet, auditStream1, authz.EventsRead, as.Get)
	admin(http.MethodPut, auditStream1, authz.EventsWrite, as.Put)
	admin(http.MethodDelete, auditStream1, authz.EventsWrite, as.Delete)

	rk := a.risk
	const assessments, riskPolicies, policy1 = "/admin/realms/{realm}/risk-assessments", "/admin/realms/{realm}/risk-policies",
		"/admin/realms/{realm}/risk-policies/{id}"
	admin(http.MethodGet, assessments, authz.RiskRead, rk.ListAssessments)
	// The dashboard before {id}, which would take its name.
	admin(http.MethodGet, assessments+"/dashboard", authz.RiskRead, rk.AssessmentDashboard)
	admin(http.MethodGet, assessments+"/{id}", authz.RiskRead, rk.GetAssessment)
	admin(http.MethodPost, riskPolicies, authz.RiskWrite, rk.CreatePolicy)
	admin(http.MethodGet, riskPolicies, authz.RiskRead, rk.ListPolicies)
	admin(http.MethodGet, policy1, authz.RiskRead, rk.GetPolicy)
	admin(http.MethodPut, policy1, authz.RiskWrite, rk.PutPolicy)
	admin(http.MethodDelete, policy1, authz.RiskWrite, rk.DeletePolicy)
	admin(http.MethodPatch, policy1+"/toggle", authz.RiskWrite, rk.TogglePolicy)
	admin(http.MethodPatch, policy1+"/priority", authz.RiskWrite, rk.SetPriority)
	admin(http.MethodGet, "/admin/realms/{realm}/risk-settings", authz.RiskRead, rk.GetSettings)
	admin(http.MethodPut, "/admin/realms/{realm}/risk-settings", authz.RiskWrite, rk.PutSettings)
	// Session risk and continuous verification. The dashboards before
	// {sessionId}, which would take their name.
	const sessionRisk, verification = "/admin/realms/{realm}/session-risk", "/admin/realms/{realm}/continuous-verification"
	admin(http.MethodGet, sessionRisk, authz.RiskRead, rk.ListSessionRisks)
	admin(http.MethodGet, sessionRisk+"/dashboard", authz.RiskRead, rk.SessionRiskDashboard)
	admin(http.MethodGet, sessionRisk+"/{sessionId}", authz.RiskRead, rk.GetSessionRisk)
	admin(http.MethodPost, sessionRisk+"/{sessionId}/evaluate", authz.RiskWrite, rk.EvaluateSession)
	admin(http.MethodGet, verification+"/events", authz.RiskRead, rk.ListSignalEvents)
	admin(http.MethodGet, verification+"/events/{id}", authz.RiskRead, rk.GetSignalEvent)
	admin(http.MethodGet, verification+"/dashboard", authz.RiskRead, rk.SignalsDashboard)
	admin(http.MethodGet, verification+"/session-profiles", authz.RiskRead, rk.ListSessionProfiles)
	admin(http.MethodGet, verification+"/session-profiles/{sessionId}", authz.RiskRead, rk.GetSessionProfile)
	admin(http.MethodGet, verification+"/device-posture/{sessionId}", authz.RiskRead, rk.GetDevicePosture)
	admin(http.MethodGet, verification+"/network-context/{sessionId}", authz.RiskRead, rk.GetNetworkContext)
	admin(http.MethodGet, verification+"/behavioral/{userId}", authz.RiskRead, rk.GetBehavior)
	admin(http.MethodGet, verification+"/user/{userId}/summary", authz.RiskRead, rk.GetUserSummary)
	// The client SDK's posts: the user's access token, of the session
	// they report on.
	add(http.MethodPost, verification+"/device-posture", user, riskSignals(a, rk.PostDevicePosture))
	add(http.MethodPost, verification+"/network-context", user, riskSignals(a, rk.PostNetworkContext))
	add(http.MethodPost, verification+"/behavioral/samples", user, riskSignals(a, rk.PostBehavioralSamples))

	// Authorization policies (the module app/policies): evaluate and test
	// change nothing, and read the policies.
	po := a.policies
	const authzPolicies, authzPolicy1 = "/admin/realms/{realm}/policies", "/admin/realms/{realm}/policies/{id}"
	admin(http.MethodPost, authzPolicies, authz.PoliciesWrite, po.CreatePolicy)
	admin(http.MethodGet, authzPolicies, authz.PoliciesRead, po.ListPolicies)
	admin(http.MethodPost, authzPolicies+"/evaluate", authz.PoliciesRead, po.Evaluate)
	admin(http.MethodGet, authzPolicy1, authz.PoliciesRead, po.GetPolicy)
	admin(http.MethodPut, authzPolicy1, authz.PoliciesWrite, po.PutPolicy)
	admin(http.MethodDelete, authzPolicy1, authz.PoliciesWrite, po.DeletePolicy)
	admin(http.MethodPost, authzPolicy1+"/test", authz.PoliciesRead, po.Test)
	admin(http.MethodGet, "/admin/realms/{realm}/policy-settings", authz.PoliciesRead, po.GetSettings)
	admin(http.MethodPut, "/admin/realms/{realm}/policy-settings", authz.PoliciesWrite, po.PutSettings)
	// The OpenID AuthZEN decision point of each realm: a client of the
	// realm, entitled by a scope or role, asks (app/policies checks it);
	// its metadata is public, under the realm and where RFC 8615 puts it.
	api(http.MethodPost, "/realms/{realm}"+policies.PathEvaluation, po.AccessEvaluation)
	api(http.MethodPost, "/realms/{realm}"+policies.PathEvaluations, po.AccessEvaluations)
	api(http.MethodGet, "/realms/{realm}"+policies.PathMetadata, po.AuthZENMetadata)
	api(http.MethodGet, policies.PathMetadata+"/realms/{realm}", po.AuthZENMetadata)

	sc := a.scim
	const scimTokens, scimToken1 = "/admin/realms/{realm}/scim/tokens", "/admin/realms/{realm}/scim/tokens/{tokenId}"
	admin(http.MethodPost, scimTokens, authz.SCIMWrite, sc.CreateToken)
	admin(http.MethodGet, scimTokens, authz.SCIMRead, sc.ListTokens)
	admin(http.MethodGet, scimToken1, authz.SCIMRead, sc.GetToken)
	admin(http.MethodDelete, scimToken1, authz.SCIMWrite, sc.DeleteToken)
	admin(http.MethodPut, scimToken1+"/revoke", authz.SCIMWrite, sc.RevokeToken)
	admin(http.MethodPut, scimToken1+"/enable", authz.SCIMWrite, sc.EnableToken)
	admin(http.MethodPut, scimToken1+"/disable", authz.SCIMWrite, sc.DisableToken)
	admin(http.MethodGet, "/admin/realms/{realm}/scim/status", authz.SCIMRead, sc.Status)
	const scimMappings = "/admin/realms/{realm}/scim/attribute-mappings"
	admin(http.MethodGet, scimMappings, authz.SCIMRead, sc.ListMappings)
	admin(http.MethodPost, scimMappings, authz.SCIMWrite, sc.CreateMapping)
	admin(http.MethodDelete, scimMappings+"/{mappingId}", authz.SCIMWrite, sc.DeleteMapping)
	scimEndpoint := func(method, path string, h httpx.HandlerFunc) {
		addAs(formatSCIM, method, "/scim/v2"+path, access{kind: accessSCIM}, sc.Endpoint(h))
	}
	for _, base := range []string{"", "/{realm}"} {
		scimEndpoint(http.MethodGet, base+"/ServiceProviderConfig", sc.ServiceProviderConfig)
		scimEndpoint(http.MethodGet, base+"/Schemas", sc.Schemas)
		scimEndpoint(http.MethodGet, base+"/Schemas/{schemaId}", sc.Schema)
		scimEndpoint(http.MethodGet, base+"/ResourceTypes", sc.ResourceTypes)
		scimEndpoint(http.MethodGet, base+"/ResourceTypes/{resourceTypeId}", sc.ResourceType)
	}
	const scimUsers, scimUser1 = "/{realm}/Users", "/{realm}/Users/{id}"
	scimEndpoint(http.MethodPost, scimUsers, sc.CreateUser)
	scimEndpoint(http.MethodGet, scimUsers, sc.ListUsers)
	scimEndpoint(http.MethodPost, scimUsers+"/.search", sc.SearchUsers)
	scimEndpoint(http.MethodGet, scimUser1, sc.GetUser)
	scimEndpoint(http.MethodPut, scimUser1, sc.ReplaceUser)
	scimEndpoint(http.MethodPatch, scimUser1, sc.PatchUser)
	scimEndpoint(http.MethodDelete, scimUser1, sc.DeleteUser)
	const scimGroups, scimGroup1 = "/{realm}/Groups", "/{realm}/Groups/{id}"
	scimEndpoint(http.MethodPost, scimGroups, sc.CreateGroup)
	scimEndpoint(http.MethodGet, scimGroups, sc.ListGroups)
	scimEndpoint(http.MethodPost, scimGroups+"/.search", sc.SearchGroups)
	scimEndpoint(http.MethodGet, scimGroup1, sc.GetGroup)
	scimEndpoint(http.MethodPut, scimGroup1, sc.ReplaceGroup)
	scimEndpoint(http.MethodPatch, scimGroup1, sc.PatchGroup)
	scimEndpoint(http.MethodDelete, scimGroup1, sc.DeleteGroup)
	scimEndpoint(http.MethodPost, "/{realm}/Bulk", sc.Bulk)

	// Non-human identities (the module app/nhi).
	ni := a.nhi
	admin(http.MethodPost, "/admin/realms/{realm}/nhi", authz.NHIWrite, ni.CreateIdentity)
	admin(http.MethodGet, "/admin/realms/{realm}/nhi", authz.NHIRead, ni.ListIdentities)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/device-certificates", authz.NHIWrite, ni.DeviceCertificate)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/devices/bulk-register", authz.NHIWrite, ni.BulkRegisterDevices)
	admin(http.MethodGet, "/admin/realms/{realm}/nhi/rotation-status", authz.NHIRead, ni.RotationStatus)
	policies := "/admin/realms/{realm}/nhi/credential-policies"
	admin(http.MethodPost, policies, authz.NHIWrite, ni.CreatePolicy)
	admin(http.MethodGet, policies, authz.NHIRead, ni.ListPolicies)
	admin(http.MethodGet, policies+"/{policyId}", authz.NHIRead, ni.GetPolicy)
	admin(http.MethodPut, policies+"/{policyId}", authz.NHIWrite, ni.UpdatePolicy)
	admin(http.MethodDelete, policies+"/{policyId}", authz.NHIWrite, ni.DeletePolicy)
	admin(http.MethodGet, policies+"/{policyId}/rotation-status", authz.NHIRead, ni.PolicyRotationStatus)
	admin(http.MethodGet, "/admin/realms/{realm}/nhi/audit-logs", authz.NHIRead, ni.ListAuditLogs)
	admin(http.MethodDelete, "/admin/realms/{realm}/nhi/audit-logs", authz.NHIWrite, ni.DeleteAuditLogs)
	admin(http.MethodGet, "/admin/realms/{realm}/nhi/{id}", authz.NHIRead, ni.GetIdentity)
	admin(http.MethodPut, "/admin/realms/{realm}/nhi/{id}", authz.NHIWrite, ni.UpdateIdentity)
	admin(http.MethodDelete, "/admin/realms/{realm}/nhi/{id}", authz.NHIWrite, ni.DeleteIdentity)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/{id}/suspend", authz.NHIWrite, ni.Suspend)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/{id}/reactivate", authz.NHIWrite, ni.Reactivate)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/{id}/decommission", authz.NHIWrite, ni.Decommission)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/{id}/credentials", authz.NHIWrite, ni.CreateCredential)
	admin(http.MethodGet, "/admin/realms/{realm}/nhi/{id}/credentials", authz.NHIRead, ni.ListCredentials)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/{id}/credentials/{credentialId}/revoke", authz.NHIWrite, ni.RevokeCredential)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/{id}/credentials/{credentialId}/rotate", authz.NHIWrite, ni.RotateCredential)
	admin(http.MethodGet, "/admin/realms/{realm}/nhi/{id}/stats", authz.NHIRead, ni.Stats)
	admin(http.MethodPost, "/admin/realms/{realm}/nhi/{id}/certificate", authz.NHIWrite, ni.IssueCertificate)
	// Service accounts: the identities of kind service, through their API keys.
	sa := nhi.ServiceAccount
	admin(http.MethodPost, "/admin/realms/{realm}/service-accounts", authz.NHIWrite, sa(ni.CreateIdentity))
	admin(http.MethodGet, "/admin/realms/{realm}/service-accounts", authz.NHIRead, sa(ni.ListIdentities))
	admin(http.MethodGet, "/admin/realms/{realm}/service-accounts/{id}", authz.NHIRead, sa(ni.GetIdentity))
	admin(http.MethodPut, "/admin/realms/{realm}/service-accounts/{id}", authz.NHIWrite, sa(ni.UpdateIdentity))
	admin(http.MethodDelete, "/admin/realms/{realm}/service-accounts/{id}", authz.NHIWrite, sa(ni.DeleteIdentity))
	admin(http.MethodPost, "/admin/realms/{realm}/service-accounts/{id}/api-keys", authz.NHIWrite, sa(ni.CreateCredential))
	admin(http.MethodGet, "/admin/realms/{realm}/service-accounts/{id}/api-keys", authz.NHIRead, sa(ni.ListCredentials))
	admin(http.MethodPost, "/admin/realms/{realm}/service-accounts/{id}/api-keys/{keyId}/revoke", authz.NHIWrite, sa(ni.RevokeCredential))
	admin(http.MethodPost, "/admin/realms/{realm}/service-accounts/{id}/api-keys/{keyId}/rotate", authz.NHIWrite, sa(ni.RotateCredential))
	admin(http.MethodGet, "/admin/realms/{realm}/service-accounts/{id}/metrics", authz.NHIRead, sa(ni.Metrics))

	// Organizations (the module app/orgs).
	const orgList, org1 = "/admin/realms/{realm}/organizations", "/admin/realms/{realm}/organizations/{slug}"
	og := a.orgs
	admin(http.MethodPost, orgList, authz.OrgsWrite, og.CreateOrganization)
	admin(http.MethodGet, orgList, authz.OrgsRead, og.ListOrganizations)
	admin(http.MethodGet, org1, authz.OrgsRead, og.GetOrganization)
	admin(http.MethodPut, org1, authz.OrgsWrite, og.UpdateOrganization)
	admin(http.MethodDelete, org1, authz.OrgsWrite, og.DeleteOrganization)
	// Members and invitations: an admin credential, or an owner or admin
	// of the organization with their own access token.
	orgAdmin := func(method, path string, perm authz.Permission, h httpx.HandlerFunc) {
		add(method, path, access{kind: accessAdmin, perm: perm}, a.handle(a.requireOrgAdmin(perm, a.recordAdminEvent(h))))
	}
	orgAdmin(http.MethodGet, org1+"/members", authz.OrgsRead, og.ListMembers)
	orgAdmin(http.MethodPost, org1+"/members", authz.OrgsWrite, og.AddMember)
	orgAdmin(http.MethodPut, org1+"/members/{userId}", authz.OrgsWrite, og.UpdateMember)
	orgAdmin(http.MethodDelete, org1+"/members/{userId}", authz.OrgsWrite, og.RemoveMember)
	orgAdmin(http.MethodGet, org1+"/invitations", authz.OrgsRead, og.ListInvitations)
	orgAdmin(http.MethodPost, org1+"/invitations", authz.OrgsWrite, og.CreateInvitation)
	orgAdmin(http.MethodDelete, org1+"/invitations/{invitationId}", authz.OrgsWrite, og.RevokeInvitation)
	// Accepted by the invited user, with their access token.
	add(http.MethodPost, org1+"/invitations/{token}/accept", user, a.userEndpoint(og.AcceptInvitation))
	admin(http.MethodPost, org1+"/verify-domain/initiate", authz.OrgsWrite, og.InitiateDomainVerification)
	admin(http.MethodPost, org1+"/verify-domain", authz.OrgsWrite, og.VerifyDomain)
	admin(http.MethodGet, org1+"/sso-connections", authz.OrgsRead, og.ListSSOConnections)
	admin(http.MethodPost, org1+"/sso-connections", authz.OrgsWrite, og.CreateSSOConnection)
	admin(http.MethodGet, org1+"/sso-connections/{connectionId}", authz.OrgsRead, og.GetSSOConnection)
	admin(http.MethodPut, org1+"/sso-connections/{connectionId}", authz.OrgsWrite, og.UpdateSSOConnection)
	admin(http.MethodDelete, org1+"/sso-connections/{connectionId}", authz.OrgsWrite, og.DeleteSSOConnection)
	accountRoute(http.MethodGet, "/organizations/{slug}/invitations/{token}", a.orgInvitationPage) // orgs.InvitationPath
	accountRoute(http.MethodPost, "/organizations/{slug}/invitations/{token}", a.orgInvitationAccept)

	// Custom attributes (the module app/attributes): the schema is the
	// realm's, the values the user's.
	const attrs, attr1 = "/admin/realms/{realm}/custom-attributes", "/admin/realms/{realm}/custom-attributes/{attributeId}"
	at := a.attributes
	admin(http.MethodPost, attrs, authz.RealmWrite, at.CreateAttribute)
	admin(http.MethodGet, attrs, authz.RealmRead, at.ListAttributes)
	admin(http.MethodPut, attrs, authz.RealmWrite, at.PutAttributes)
	admin(http.MethodGet, attr1, authz.RealmRead, at.GetAttribute)
	admin(http.MethodPut, attr1, authz.RealmWrite, at.UpdateAttribute)
	admin(http.MethodDelete, attr1, authz.RealmWrite, at.DeleteAttribute)
	admin(http.MethodGet, user1+"/attributes", authz.UsersRead, at.GetUserAttributes)
	admin(http.MethodPut, user1+"/attributes", authz.UsersWrite, at.PutUserAttributes)
	// Impersonation (the module app/impersonation).
	admin(http.MethodPost, user1+"/impersonate", authz.UsersImpersonate, a.impersonation.Impersonate)
	admin(http.MethodPost, "/admin/realms/{realm}/impersonation/end", authz.UsersImpersonate, a.impersonation.End)
	admin(http.MethodGet, user1+"/federated-identity", authz.UsersRead, br.ListUserLinks)
	admin(http.MethodDelete, user1+"/federated-identity/{alias}", authz.UsersWrite, br.DeleteUserLink)

	// Authentication flows (the module app/authflows): realm settings.
	const flows, flow1 = "/admin/realms/{realm}/auth-flows", "/admin/realms/{realm}/auth-flows/{id}"
	af := a.authFlows
	admin(http.MethodPost, flows, authz.RealmWrite, af.CreateFlow)
	admin(http.MethodGet, flows, authz.RealmRead, af.ListFlows)
	admin(http.MethodPost, flows+"/seed-defaults", authz.RealmWrite, af.SeedDefaults)
	admin(http.MethodGet, flow1, authz.RealmRead, af.GetFlow)
	admin(http.MethodPut, flow1, authz.RealmWrite, af.UpdateFlow)
	admin(http.MethodDelete, flow1, authz.RealmWrite, af.DeleteFlow)
	admin(http.MethodPut, flow1+"/assign-client/{clientId}", authz.RealmWrite, af.AssignClient)

	// The admin console (the module app/console): its sign-in is public,
	// its pages need a console session, and every page calls the API
	// above with the administrator's token, so its permissions are those.
	cs := a.console
	add(http.MethodGet, console.Prefix, public, http.HandlerFunc(cs.Root))
	add(http.MethodGet, console.Prefix+"/login", public, http.HandlerFunc(cs.Login))
	add(http.MethodGet, console.Prefix+"/callback", public, http.HandlerFunc(cs.Callback))
	add(http.MethodGet, console.Prefix+"/signed-out", public, http.HandlerFunc(cs.SignedOut))
	consolePage := func(method, path string, h console.Handler) {
		add(method, console.Prefix+path, access{kind: accessConsole}, cs.Page(h))
	}
	// A page with a form (or a question) and the form's answer, at one path.
	consoleForm := func(path string, show, submit console.Handler) {
		consolePage(http.MethodGet, path, show)
		consolePage(http.MethodPost, path, submit)
	}
	consolePage(http.MethodGet, "/", cs.Dashboard)
	consolePage(http.MethodPost, "/logout", cs.Logout)
	consolePage(http.MethodGet, "/account", cs.Account)
	consolePage(http.MethodGet, "/accounts", cs.Accounts)
	consoleForm("/accounts/new", cs.NewAccount, cs.CreateAccount)
	consolePage(http.MethodPost, "/accounts/{id}/enabled", cs.SetAccountEnabled)
	consolePage(http.MethodPost, "/accounts/{id}/logout", cs.EndAccountSessions)
	consoleForm("/accounts/{id}", cs.AdminAccount, cs.SaveAdminAccount)
	consoleForm("/accounts/{id}/delete", cs.ConfirmDeleteAccount, cs.DeleteAccount)
	consoleForm("/accounts/{id}/enrolment", cs.ConfirmEnrolment, cs.NewEnrolment)
	consolePage(http.MethodGet, "/api-keys", cs.APIKeys)
	consoleForm("/api-keys/new", cs.NewAPIKey, cs.CreateAPIKey)
	consoleForm("/api-keys/{id}/rotate", cs.ConfirmRotateAPIKey, cs.RotateAPIKey)
	consoleForm("/api-keys/{id}/revoke", cs.ConfirmRevokeAPIKey, cs.RevokeAPIKey)
	consolePage(http.MethodGet, "/realms", cs.Realms)
	consoleForm("/realms/new", cs.NewRealm, cs.CreateRealm)
	const cRealm, cUser1, cClient1 = "/realms/{realm}", "/realms/{realm}/users/{userId}", "/realms/{realm}/clients/{clientId}"
	consoleForm(cRealm+"/settings", cs.RealmSettings, cs.SaveRealmSettings)
	consolePage(http.MethodPost, cRealm+"/email/test", cs.TestMail)
	consolePage(http.MethodPost, cRealm+"/events/config", cs.SaveEventsConfig)
	consolePage(http.MethodGet, cRealm+"/keys", cs.Keys)
	consolePage(http.MethodPost, cRealm+"/keys/rotate", cs.RotateKeys)
	consolePage(http.MethodGet, cRealm+"/users", cs.Users)
	consoleForm(cRealm+"/users/new", cs.NewUser, cs.CreateUser)
	consoleForm(cUser1, cs.User, cs.SaveUser)
	consolePage(http.MethodPost, cUser1+"/password", cs.ResetPassword)
	consolePage(http.MethodPost, cUser1+"/logout", cs.EndUserSessions)
	consoleForm(cUser1+"/mfa", cs.ConfirmRemoveFactors, cs.RemoveFactors)
	consolePage(http.MethodPost, cUser1+"/unlock", cs.Unlock)
	consolePage(http.MethodPost, cUser1+"/groups", cs.JoinGroup)
	consolePage(http.MethodPost, cUser1+"/groups/remove", cs.LeaveGroup)
	consolePage(http.MethodPost, cUser1+"/roles", cs.GrantRole)
	consolePage(http.MethodPost, cUser1+"/roles/remove", cs.RevokeRole)
	consoleForm(cUser1+"/delete", cs.ConfirmDeleteUser, cs.DeleteUser)
	consolePage(http.MethodPost, cUser1+"/attributes", cs.SetUserAttribute)
	consolePage(http.MethodPost, cUser1+"/attributes/remove", cs.RemoveUserAttribute)
	consolePage(http.MethodPost, cUser1+"/required-actions", cs.SetRequiredActions)
	consolePage(http.MethodPost, cUser1+"/password/mail", cs.SendPasswordMail)
	consoleForm(cUser1+"/totp/remove", cs.ConfirmRemoveTOTP, cs.RemoveTOTP)
	consoleForm(cUser1+"/passkeys/{credentialId}/remove", cs.ConfirmRemovePasskey, cs.RemovePasskey)
	consoleForm(cUser1+"/identities/{alias}/unlink", cs.ConfirmUnlinkIdentity, cs.UnlinkIdentity)
	consolePage(http.MethodGet, cRealm+"/clients", cs.Clients)
	consoleForm(cRealm+"/clients/new", cs.NewClient, cs.CreateClient)
	consoleForm(cClient1, cs.Client, cs.SaveClient)
	consoleForm(cClient1+"/secret", cs.ConfirmRegenerateSecret, cs.RegenerateSecret)
	consoleForm(cClient1+"/delete", cs.ConfirmDeleteClient, cs.DeleteClient)
	consolePage(http.MethodGet, cRealm+"/sessions", cs.Sessions)
	consolePage(http.MethodPost, cRealm+"/sessions/{sessionId}/end", cs.EndSession)
	consolePage(http.MethodGet, cRealm+"/events", cs.LoginEvents)
	consolePage(http.MethodGet, cRealm+"/events/export", cs.ExportLoginEvents)
	consolePage(http.MethodGet, cRealm+"/admin-events", cs.AdminEvents)
	consolePage(http.MethodGet, cRealm+"/admin-events/export", cs.ExportAdminEvents)
	for _, res := range console.Resources {
		base := cRealm + "/" + res.Path
		consolePage(http.MethodGet, base, cs.ResourceList(res))
		if res.Fields != nil {
			consoleForm(base+"/new", cs.NewResource(res), cs.CreateResource(res))
		}
		consoleForm(base+"/{id}/delete", cs.ConfirmDeleteResource(res), cs.DeleteResource(res))
	}
	// Roles, groups, client scopes and a client's links: their own pages
	// beside the generic lists above, each row of which leads to them;
	// after those, so that a generic create form's "new" is not a name.
	const cRole1, cGroup1, cScope1 = cRealm + "/roles/{roleName}", cRealm + "/groups/{groupId}", cRealm + "/client-scopes/{scopeId}"
	consoleForm(cRole1, cs.Role, cs.SaveRole)
	consolePage(http.MethodPost, cRole1+"/composites", cs.AddComposite)
	consolePage(http.MethodPost, cRole1+"/composites/remove", cs.RemoveComposite)
	consoleForm(cGroup1, cs.Group, cs.SaveGroup)
	consolePage(http.MethodPost, cGroup1+"/move", cs.MoveGroup)
	consolePage(http.MethodPost, cGroup1+"/members", cs.AddMember)
	consolePage(http.MethodPost, cGroup1+"/members/remove", cs.RemoveMember)
	consolePage(http.MethodPost, cGroup1+"/roles", cs.GrantGroupRole)
	consolePage(http.MethodPost, cGroup1+"/roles/remove", cs.RevokeGroupRole)
	consoleForm(cScope1, cs.Scope, cs.SaveScope)
	consoleForm(cScope1+"/mappers/new", cs.NewMapper, cs.CreateMapper)
	consoleForm(cScope1+"/mappers/{mapperId}", cs.Mapper, cs.SaveMapper)
	consoleForm(cScope1+"/mappers/{mapperId}/delete", cs.ConfirmDeleteMapper, cs.DeleteMapper)
	consolePage(http.MethodGet, cClient1+"/access", cs.ClientAccess)
	for _, kind := range console.ScopeKinds {
		consolePage(http.MethodPost, cClient1+"/scopes/"+kind, cs.LinkScope(kind))
		consolePage(http.MethodPost, cClient1+"/scopes/"+kind+"/remove", cs.UnlinkScope(kind))
	}
	consolePage(http.MethodPost, cClient1+"/service-account/roles", cs.GrantServiceAccountRole)
	consolePage(http.MethodPost, cClient1+"/service-account/roles/remove", cs.RevokeServiceAccountRole)
	// The console's pages of federation and organizations (app/console:
	// idps.go, samlsps.go, ldap.go, orgs.go, nhi.go): each one's page, and
	// the forms that change it through the API.
	const cIdP, cSP, cLDAP = cRealm + "/identity-providers", cRealm + "/saml-service-providers", cRealm + "/user-federation/{id}"
	consoleForm(cIdP+"/new", cs.NewIdentityProvider, cs.CreateIdentityProvider)
	consolePage(http.MethodPost, cIdP+"/new/discover", cs.DiscoverNewIdentityProvider)
	consoleForm(cIdP+"/{id}", cs.IdentityProvider, cs.SaveIdentityProvider)
	consolePage(http.MethodPost, cIdP+"/{id}/discover", cs.DiscoverIdentityProvider)
	consoleForm(cSP+"/new", cs.NewSAMLServiceProvider, cs.CreateSAMLServiceProvider)
	consoleForm(cSP+"/{id}", cs.SAMLServiceProvider, cs.SaveSAMLServiceProvider)
	consolePage(http.MethodGet, cLDAP, cs.LDAPProvider)
	consolePage(http.MethodPost, cLDAP+"/test-connection", cs.LDAPTestConnection)
	consolePage(http.MethodPost, cLDAP+"/sync", cs.LDAPSync)
	consolePage(http.MethodGet, cLDAP+"/sync-status", cs.LDAPSyncStatus)
	const cOrg, cNHI = cRealm + "/organizations/{id}", cRealm + "/nhi/{id}"
	consolePage(http.MethodGet, cOrg, cs.Organization)
	consolePage(http.MethodPost, cOrg+"/members", cs.AddOrgMember)
	consoleForm(cOrg+"/members/{userId}/remove", cs.ConfirmRemoveOrgMember, cs.RemoveOrgMember)
	consolePage(http.MethodPost, cOrg+"/invitations", cs.InviteToOrg)
	consoleForm(cOrg+"/invitations/{invitationId}/revoke", cs.ConfirmRevokeOrgInvitation, cs.RevokeOrgInvitation)
	consolePage(http.MethodPost, cOrg+"/domains", cs.AddOrgDomain)
	consolePage(http.MethodPost, cOrg+"/domains/record", cs.ShowOrgDomainRecord)
	consolePage(http.MethodPost, cOrg+"/domains/verify", cs.VerifyOrgDomain)
	consolePage(http.MethodGet, cNHI, cs.NHIIdentity)
	consolePage(http.MethodPost, cNHI+"/credentials", cs.IssueNHICredential)
	consoleForm(cNHI+"/credentials/{credentialId}/revoke", cs.ConfirmRevokeNHICredential, cs.RevokeNHICredential)
	consolePage(http.MethodPost, cNHI+"/suspend", cs.MoveNHI("suspend"))
	consolePage(http.MethodPost, cNHI+"/reactivate", cs.MoveNHI("reactivate"))
	consoleForm(cNHI+"/decommission", cs.ConfirmDecommissionNHI, cs.MoveNHI("decommission"))
	return r
}

func (a *App) handle(h httpx.HandlerFunc) http.Handler { return httpx.Handle(h, a.writeError) }

// upgradeRoutes registers the upgrade endpoints with admin: the whole
// server's admin routes, or those of a server whose upgrade waits. The
// fixed paths come before {upgradeId}, which would swallow them.
func upgradeRoutes(admin func(method, path string, perm authz.Permission, h httpx.HandlerFunc), up *upgrade.Service) {
	admin(http.MethodPost, "/admin/upgrade", authz.SystemManage, up.Start)
	admin(http.MethodGet, "/admin/upgrade/status", authz.SystemRead, up.Status)
	admin(http.MethodGet, "/admin/upgrade/history", authz.SystemRead, up.History)
	admin(http.MethodGet, "/admin/upgrade/audit", authz.SystemRead, up.Audit)
	admin(http.MethodGet, "/admin/upgrade/rollback/capability", authz.SystemRead, up.Capability)
	admin(http.MethodPost, "/admin/upgrade/rollback", authz.SystemManage, up.Rollback)
	admin(http.MethodGet, "/admin/upgrade/pre-validation", authz.SystemRead, up.PreValidation)
	admin(http.MethodGet, "/admin/upgrade/health", authz.SystemRead, up.Health)
	admin(http.MethodGet, "/admin/upgrade/config-compatibility", authz.SystemRead, up.ConfigCompatibility)
	admin(http.MethodGet, "/admin/upgrade/{upgradeId}", authz.SystemRead, up.Get)
}

// allowedMethods lists the methods some route accepts for req's path, for
// the Allow header of a 405.
func allowedMethods(router *mux.Router, req *http.Request) []string {
	var allowed []string
	_ = router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			probe := req.Clone(req.Context())
			probe.Method = m
			if route.Match(probe, &mux.RouteMatch{}) && !slices.Contains(allowed, m) {
				allowed = append(allowed, m)
			}
		}
		return nil
	})
	slices.Sort(allowed)
	return allowed
}
