package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/setup"
	"github.com/idenplane/idenplane/app/system"
)

// describeSetup describes the first-run setup wizard (docs/setup.md): every
// operation answers 410 `gone` once the wizard is completed or skipped.
func describeSetup(describe func(method, path string, o openapi.Op)) {
	const p = setup.Path
	const closed = " 410 `gone` once the wizard is completed or skipped."
	state := setup.State{}
	describe(http.MethodGet, p+"/status", openapi.Op{Summary: "Whether first-run setup is pending",
		Description: "Without a token: `{\"status\": \"pending\"}` only. With the bootstrap token (Authorization: Bearer or " +
			"X-Setup-Token): the steps done and the next one too; a wrong token is a 401." + closed,
		Response: setup.StatusRep{}, Example: map[string]any{"status": "pending"}})
	describe(http.MethodGet, p+"/state", openapi.Op{Summary: "The setup wizard's steps and what each saved",
		Description: "Secrets are redacted (`**********`); a client's secret is never kept." + closed, Response: state})
	describe(http.MethodPost, p+"/admin-account", openapi.Op{Summary: "Create the first administrator",
		Description: "Holds every permission. The password needs at least 12 characters mixing three of lowercase, uppercase, " +
			"digits and symbols, and the system realm's policy; a weak one is a 400 on `password`. 409 once any administrator " +
			"exists." + closed, Request: setup.AdminAccountInput{}, Response: state})
	describe(http.MethodPost, p+"/realm-settings", openapi.Op{Summary: "Create or change the first realm",
		Description: "Creates the realm `name` as POST /admin/realms does, or changes it when it exists; a field left out keeps " +
			"the realm's value." + closed, Request: setup.RealmSettingsInput{}, Response: state})
	describe(http.MethodPost, p+"/smtp-config", openapi.Op{Summary: "Set the realm's SMTP server",
		Description: "`security`: `starttls` (the default, port 587) or `tls` (port 465). The password is sealed in the realm " +
			"and shown redacted; sending the redaction back, or leaving it out, keeps it." + closed,
		Request: setup.SMTPConfigInput{}, Response: state})
	describe(http.MethodPost, p+"/smtp/test", openapi.Op{Summary: "Send a test email through the realm's SMTP server",
		Description: "Sends at once; 502 `delivery_failed` carries the server's refusal." + closed,
		Request:     setup.SMTPTestInput{}, Response: setup.SMTPTestResult{}})
	describe(http.MethodPost, p+"/client", openapi.Op{Summary: "Register the realm's first application",
		Description: "`type`: `spa` (a public client, PKCE) or `web` (a confidential client); redirect URIs are checked as the " +
			"admin API checks them. A web client's secret is in this answer only." + closed,
		Request: setup.ClientInput{}, Response: setup.ClientResult{}})
	describe(http.MethodPost, p+"/sdk-generated", openapi.Op{Summary: "Sign-in code for the application",
		Description: "JavaScript, Go and Python, with the issuer, client ID and redirect URI filled in; a secret is read from " +
			"the environment variable " + setup.SecretEnv + ", never written." + closed, Response: setup.SDK{}})
	describe(http.MethodPost, p+"/complete", openapi.Op{Summary: "Complete setup",
		Description: "Needs an administrator and the realm; closes the wizard for good." + closed, Response: setup.Finished{}})
	describe(http.MethodPost, p+"/skip", openapi.Op{Summary: "Skip setup",
		Description: "Closes the wizard for good; the admin API key and IDENPLANE_ADMIN_USER are the ways in." + closed,
		Response:    setup.Finished{}})
	describe(http.MethodPost, p+"/reset", openapi.Op{Summary: "Start the wizard over",
		Description: "Forgets the steps saved; what they made (administrator, realm, client) stays." + closed, Response: state})
}

// describeSystem describes the server's own information.
func describeSystem(describe func(method, path string, o openapi.Op)) {
	describe(http.MethodGet, "/admin/system/version", openapi.Op{Summary: "The server's version, build and database",
		Description: "The version, commit and build date stamped at build time (as `idenplane --version` prints them), the Go " +
			"version, the schema version, the database's backend and size, and the uptime.",
		Response: system.VersionRep{},
		Example: map[string]any{"version": "v1.4.0", "commit": "9f2c1e7…", "buildDate": "2026-03-01T10:00:00Z",
			"goVersion": "go1.26.0", "schemaVersion": 53, "database": map[string]any{"backend": "sqlite", "sizeBytes": 1884160},
			"startedTimestamp": int64(1767225600000), "uptimeSeconds": 3600}})
}
