package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/migration"
	"github.com/idenplane/idenplane/app/openapi"
)

// describeMigration describes the imports of other products' exports
// (docs/migration.md).
func describeMigration(describe func(method, path string, o openapi.Op)) {
	boolean := func(desc string) openapi.Schema { return openapi.Schema{"type": "boolean", "description": desc} }
	dryRun := boolean("Check and write everything in a transaction, then roll it back: the report says what would be " +
		"imported and skipped, and nothing is kept. Answered 200 instead of 201.")
	ndjsonOrList := func(desc string) openapi.Schema {
		return openapi.Schema{"description": desc, "oneOf": []any{
			openapi.Schema{"type": "array", "items": openapi.Schema{"type": "object"}},
			openapi.Schema{"type": "string", "description": "NDJSON: one object a line, as Auth0 writes its files."},
		}}
	}
	report := migration.Report{}
	example := map[string]any{"realm": "acme", "dryRun": false,
		"counts":   map[string]int{"realm": 1, "client": 1, "role": 2, "user": 1, "credential": 1},
		"imported": []map[string]any{{"path": "data.users[0]", "kind": "user", "name": "alice"}},
		"skipped": []map[string]any{{"path": "data.clients[0].redirectUris[1]", "kind": "setting", "name": "https://app.acme.io/*",
			"reason": "wildcards are not allowed: URIs are matched exactly, so list each one"}}}
	also := map[int]any{http.StatusOK: report}
	describe(http.MethodPost, "/admin/migration/keycloak", openapi.Op{Summary: "Import a Keycloak realm export",
		Description: "Creates a realm from Keycloak's realm export (RealmRepresentation): its settings, clients, roles, " +
			"groups, client scopes, identity providers and users, with their password hashes (pbkdf2-sha256, pbkdf2-sha512, " +
			"pbkdf2, argon2, bcrypt) kept and made argon2id at each user's next sign-in, and their TOTP credentials. " +
			"Everything is written in one transaction. The report lists what was imported and what was left out and why, " +
			"each with its JSON path; a field at fault is a 400 naming its path (`data.users[3].credentials[0].secretData`). " +
			"See docs/migration.md.",
		Request: openapi.Schema{"type": "object", "required": []string{"data"}, "additionalProperties": false,
			"properties": openapi.Schema{
				"data":   openapi.Schema{"type": "object", "description": "The realm export of Keycloak, as `kc.sh export` or the admin console's partial export writes it."},
				"dryRun": dryRun,
				"realm":  openapi.Schema{"type": "string", "description": "The realm's name, in place of the export's."},
				"newIds": boolean("Give every resource a new ID; by default Keycloak's are kept (a user's ID is the `sub` of their tokens)."),
			}},
		Status: http.StatusCreated, Response: report, Also: also, Example: example})
	describe(http.MethodPost, "/admin/migration/auth0", openapi.Op{Summary: "Import Auth0 users into a realm",
		Description: "Auth0's user export and its separately exported password hashes (bcrypt, matched to their user by " +
			"`_id` or email) go into a realm that exists; the bulk import schema's `password_hash` and `custom_password_hash` " +
			"(argon2, bcrypt, pbkdf2) are read too. A user whose username or email the realm has is skipped and reported. " +
			"See docs/migration.md.",
		Request: openapi.Schema{"type": "object", "required": []string{"realm", "users"}, "additionalProperties": false,
			"properties": openapi.Schema{
				"realm":     openapi.Schema{"type": "string", "description": "The realm the users go into."},
				"users":     ndjsonOrList("Auth0's users."),
				"passwords": ndjsonOrList("Auth0's password hashes."),
				"dryRun":    dryRun,
			}},
		Status: http.StatusCreated, Response: report, Also: also, Example: example})
	user := openapi.Schema{"type": "object", "required": []string{"username"}, "properties": openapi.Schema{
		"id":               openapi.Schema{"type": "string", "description": "A UUID; kept."},
		"username":         openapi.Schema{"type": "string"},
		"email":            openapi.Schema{"type": "string"},
		"firstName":        openapi.Schema{"type": "string"},
		"lastName":         openapi.Schema{"type": "string"},
		"enabled":          openapi.Schema{"type": "boolean"},
		"emailVerified":    openapi.Schema{"type": "boolean"},
		"createdTimestamp": openapi.Schema{"type": "integer"},
		"passwordHash": openapi.Schema{"type": "string", "description": "argon2id or argon2i (PHC string), bcrypt, or PBKDF2 " +
			"(`$pbkdf2-sha256$i=…,l=…$salt$key`) are kept; any other format leaves the user without a password, owing a reset."},
		"requiredActions": openapi.Schema{"type": "array", "items": openapi.Schema{"type": "string"},
			"description": "Keycloak's names: UPDATE_PASSWORD, VERIFY_EMAIL."},
		"attributes": openapi.Schema{"type": "object", "additionalProperties": openapi.Schema{"type": "array",
			"items": openapi.Schema{"type": "string"}}, "description": "Custom attribute values; names the realm's schema lacks are declared."},
		"realmRoles":  openapi.Schema{"type": "array", "items": openapi.Schema{"type": "string"}},
		"clientRoles": openapi.Schema{"type": "object", "additionalProperties": openapi.Schema{"type": "array", "items": openapi.Schema{"type": "string"}}},
		"groups":      openapi.Schema{"type": "array", "items": openapi.Schema{"type": "string"}, "description": "Group paths, /parent/child."},
	}}
	describe(http.MethodPost, "/admin/realms/{realm}/users/import", openapi.Op{Summary: "Import users with their password hashes",
		Description: "A list of users into the realm, in one transaction, through the rules every user write obeys. " +
			"A user whose username or email the realm has, and a role or group the realm lacks, are skipped and reported. " +
			"See docs/migration.md.",
		Request: openapi.Schema{"type": "object", "required": []string{"users"}, "additionalProperties": false,
			"properties": openapi.Schema{"users": openapi.Schema{"type": "array", "items": user}, "dryRun": dryRun}},
		Status: http.StatusCreated, Response: report, Also: also, Example: example})
}
