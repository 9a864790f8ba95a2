package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/sessions"
)

// accountFormSchema is the form a page of the account posts: its fields, and
// the csrf token that binds it to the browser's sign-in. More fields may
// come (the realm's custom attributes on the profile form). A form of no
// field but the token is optional: a script with a bearer token posts no
// body.
func accountFormSchema(fields ...string) openapi.Schema {
	props := map[string]any{"csrf": map[string]any{"type": "string"}}
	for _, f := range fields {
		props[f] = map[string]any{"type": "string"}
	}
	return openapi.Schema{"type": "object", "properties": props}
}

// eventQuery are the filters both event lists and exports take.
func eventQuery(names ...openapi.Param) []openapi.Param {
	list := openapi.Schema{"type": "array", "items": openapi.Schema{"type": "string"}}
	date := openapi.Schema{"type": "string"}
	window := []openapi.Param{
		{Name: "dateFrom", Description: "From this day (2026-11-21) or time (RFC 3339).", Schema: date},
		{Name: "dateTo", Description: "Until this day, whole, or time.", Schema: date},
		openapi.ParamFirst, openapi.ParamMax,
	}
	for i := range names {
		if names[i].Schema == nil {
			names[i].Schema = list
		}
	}
	return append(names, window...)
}

// describeAccount describes the account API, the realm's events, sessions
// and stats.
func describeAccount(describe func(method, path string, o openapi.Op)) {
	const base = "/realms/{realm}/account"
	home := openapi.Op{Summary: "Read one's own account",
		Description: "The profile, the enrolled factors and the state of a requested deletion.", Response: account.AccountRep{},
		Example: map[string]any{"id": "3f1c…", "username": "alice", "email": "alice@example.com", "emailVerified": true,
			"firstName": "Alice", "lastName": "Liddell", "attributes": map[string]string{}, "customAttributes": map[string][]string{},
			"createdTimestamp": int64(1767225600000), "factors": []string{"password", "otp"},
			"deletion": map[string]any{"scheduled": false}}}
	describe(http.MethodGet, base, home)
	describe(http.MethodGet, base+"/", home)
	describe(http.MethodPost, base+"/profile", openapi.Op{Summary: "Change one's own profile",
		Description: "A field left out keeps its value; the username cannot change. A new email is unverified until the link mailed to it is followed.",
		Request:     account.AccountProfileBody{}, Form: accountFormSchema("username", "email", "firstName", "lastName"), Response: account.AccountRep{}})
	describe(http.MethodPost, base+"/password", openapi.Op{Summary: "Change one's own password",
		Description: "With the current password; every other session of the user ends.",
		Request:     account.AccountPasswordBody{}, Form: accountFormSchema("currentPassword", "newPassword", "confirmation"), Status: http.StatusNoContent})
	describe(http.MethodGet, base+"/data-export", openapi.Op{Summary: "Export everything kept about oneself",
		Description: "One JSON document, as a download; secrets and their hashes are left out, and listed under `omitted`.",
		Response:    accountExportRep{}})
	describe(http.MethodGet, base+"/delete-account", openapi.Op{Summary: "Read the state of one's account deletion", Response: account.AccountDeletionRep{}})
	describe(http.MethodPost, base+"/delete-account", openapi.Op{Summary: "Ask for one's account to be deleted",
		Description: "Confirmed by the current password; the account is deleted when the grace window of seven days ends, and until then the user can cancel.",
		Request:     account.AccountDeleteBody{}, Form: accountFormSchema("currentPassword"), Status: http.StatusAccepted, Response: account.AccountDeletionRep{},
		Example: map[string]any{"scheduled": true, "requestedAt": int64(1767225600000), "deleteAt": int64(1767830400000)}})
	describe(http.MethodPost, base+"/cancel-delete-account", openapi.Op{Summary: "Cancel one's account deletion",
		Description: "404 when none is scheduled.", Form: accountFormSchema(), RequestOptional: true, Response: account.AccountDeletionRep{}})
	describe(http.MethodGet, base+"/totp-setup", openapi.Op{Summary: "Begin a TOTP enrolment",
		Description: "Asks for a recent sign-in. 409 when TOTP is set up already.", Response: account.TotpSetupRep{}})
	describe(http.MethodPost, base+"/totp-setup", openapi.Op{Summary: "Confirm a TOTP enrolment with its first code",
		Description: "The answer holds the recovery codes, this once.", Request: account.AccountTOTPInput{}, Form: accountFormSchema("code"),
		Response: account.TotpEnabledRep{}})
	describe(http.MethodPost, base+"/totp-disable", openapi.Op{Summary: "Remove one's TOTP authenticator",
		Description: "Proven by a current code or the password.", Request: account.AccountTOTPInput{}, Form: accountFormSchema("code", "password"),
		Status: http.StatusNoContent})

	webauthn := base + account.WebAuthnPath
	describe(http.MethodGet, webauthn, openapi.Op{Summary: "List one's security keys and passkeys", Response: []account.WebauthnCredentialRep{}})
	describe(http.MethodGet, base+account.WebAuthnAddPath, openapi.Op{Summary: "Sign in again to add a security key (pages)",
		Description: "For a browser only: an API caller gets 404.", Status: http.StatusSeeOther})
	describe(http.MethodDelete, webauthn+"/{credentialId}", openapi.Op{Summary: "Remove a security key or passkey",
		Description: "Asks for a recent sign-in.", Status: http.StatusNoContent})
	describe(http.MethodPost, webauthn+"/{credentialId}/delete", openapi.Op{Summary: "Remove a security key or passkey (the page's form)",
		Form: accountFormSchema(), RequestOptional: true, Status: http.StatusNoContent})

	linked := base + account.LinkedPath
	describe(http.MethodGet, linked, openapi.Op{Summary: "List the identity providers one may sign in with, linked or not",
		Response: []broker.LinkedAccount{}})
	describe(http.MethodDelete, linked+"/{alias}", openapi.Op{Summary: "Unlink an identity provider",
		Description: "Never the last way to sign in.", Status: http.StatusNoContent})
	describe(http.MethodPost, linked+"/{alias}/delete", openapi.Op{Summary: "Unlink an identity provider (the page's form)",
		Form: accountFormSchema(), RequestOptional: true, Status: http.StatusNoContent})
	describe(http.MethodPost, linked+"/{alias}/link", openapi.Op{Summary: "Link an identity provider (pages)",
		Description: "For a browser only: it is sent to sign in at the provider. An API caller gets 404.",
		Form:        accountFormSchema(), RequestOptional: true, Status: http.StatusSeeOther})

	invitation := base + "/organizations/{slug}/invitations/{token}"
	describe(http.MethodGet, invitation, openapi.Op{Summary: "Read an invitation to join an organization", Response: orgInvitationRep{}})
	describe(http.MethodPost, invitation, openapi.Op{Summary: "Accept an invitation to join an organization",
		Form: accountFormSchema(), RequestOptional: true, Response: orgInvitationRep{}})

	const realmEvents = "/admin/realms/{realm}/events"
	loginFilters := func() []openapi.Param {
		return eventQuery(
			openapi.Param{Name: "type", Description: "Login event types, repeated or comma-separated."},
			openapi.Param{Name: "userId", Schema: openapi.Schema{"type": "string", "format": "uuid"}},
			openapi.Param{Name: "clientId", Schema: openapi.Schema{"type": "string"}})
	}
	adminFilters := func() []openapi.Param {
		return eventQuery(
			openapi.Param{Name: "operationType", Description: "CREATE, UPDATE, DELETE or ACTION, repeated or comma-separated."},
			openapi.Param{Name: "resourceType", Description: "Resource types such as USER, repeated or comma-separated."},
			openapi.Param{Name: "resourcePath", Description: "A prefix of the resource's path; a trailing `*` is allowed.", Schema: openapi.Schema{"type": "string"}},
			openapi.Param{Name: "authUserId", Schema: openapi.Schema{"type": "string", "format": "uuid"}})
	}
	csv := openapi.Schema{"type": "string"}
	describe(http.MethodGet, realmEvents, openapi.Op{Summary: "List login events, newest first", Query: loginFilters(),
		Response: []events.LoginEventRep{}})
	describe(http.MethodDelete, realmEvents, openapi.Op{Summary: "Delete the realm's login events", Status: http.StatusNoContent})
	describe(http.MethodGet, realmEvents+"/login/export", openapi.Op{Summary: "Export login events as CSV",
		Description: "Every matching event unless `max` is given.", Query: loginFilters(), Response: csv, ResponseType: "text/csv"})
	describe(http.MethodGet, realmEvents+"/admin/export", openapi.Op{Summary: "Export admin events as CSV",
		Description: "Every matching event unless `max` is given.", Query: adminFilters(), Response: csv, ResponseType: "text/csv"})
	describe(http.MethodGet, realmEvents+"/config", openapi.Op{Summary: "Read the events configuration", Response: events.EventsConfigRep{}})
	describe(http.MethodPut, realmEvents+"/config", openapi.Op{Summary: "Change the events configuration",
		Description: "The fields the body names change; null returns one to its default.", Request: events.EventsConfigRep{}, Response: events.EventsConfigRep{}})
	describe(http.MethodGet, "/admin/realms/{realm}/admin-events", openapi.Op{Summary: "List admin events, newest first", Query: adminFilters(),
		Response: []events.AdminEventRep{}})

	describe(http.MethodGet, "/admin/realms/{realm}/sessions", openapi.Op{Summary: "List the realm's active sessions",
		Query: []openapi.Param{openapi.ParamFirst, openapi.ParamMax}, Response: []sessions.SessionRep{}})
	describe(http.MethodDelete, "/admin/realms/{realm}/sessions/{sessionId}", openapi.Op{Summary: "End a session",
		Description: "With the sessions that hang under it; the answer counts them.",
		Query: []openapi.Param{{Name: "type", Description: "oauth (the default) or sso.",
			Schema: openapi.Schema{"type": "string", "enum": []string{"oauth", "sso"}}}},
		Response: sessions.SessionsEndedRep{}})
	describe(http.MethodGet, "/admin/realms/{realm}/stats", openapi.Op{Summary: "Count the realm's users, clients, sessions and events", Response: realmStatsRep{}})
	describe(http.MethodGet, "/admin/realms/{realm}/stats/consents", openapi.Op{Summary: "Count the consents users gave, by client", Response: consentStatsRep{}})
}
