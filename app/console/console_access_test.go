package console_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// consolePosts are the console's form posts, by route (app/routes.go):
// the crawl below must meet a form of each.
var consolePosts = []string{
	"/console/logout",
	"/console/realms/new",
	"/console/realms/{realm}/settings",
	"/console/realms/{realm}/users/new",
	"/console/realms/{realm}/users/{userId}",
	"/console/realms/{realm}/users/{userId}/password",
	"/console/realms/{realm}/users/{userId}/logout",
	"/console/realms/{realm}/users/{userId}/delete",
	"/console/realms/{realm}/users/{userId}/mfa",
	"/console/realms/{realm}/users/{userId}/unlock",
	"/console/realms/{realm}/users/{userId}/groups",
	"/console/realms/{realm}/users/{userId}/groups/remove",
	"/console/realms/{realm}/users/{userId}/roles",
	"/console/realms/{realm}/users/{userId}/roles/remove",
	"/console/realms/{realm}/users/{userId}/attributes",
	"/console/realms/{realm}/users/{userId}/attributes/remove",
	"/console/realms/{realm}/users/{userId}/required-actions",
	"/console/realms/{realm}/users/{userId}/password/mail",
	"/console/realms/{realm}/users/{userId}/totp/remove",
	"/console/realms/{realm}/users/{userId}/passkeys/{credentialId}/remove",
	"/console/realms/{realm}/users/{userId}/identities/{alias}/unlink",
	"/console/realms/{realm}/email/test",
	"/console/realms/{realm}/events/config",
	"/console/realms/{realm}/keys/rotate",
	"/console/realms/{realm}/clients/new",
	"/console/realms/{realm}/clients/{clientId}",
	"/console/realms/{realm}/clients/{clientId}/secret",
	"/console/realms/{realm}/clients/{clientId}/delete",
	"/console/realms/{realm}/sessions/{sessionId}/end",
	"/console/accounts/new",
	"/console/accounts/{id}/enabled",
	"/console/accounts/{id}/logout",
	"/console/accounts/{id}",
	"/console/accounts/{id}/delete",
	"/console/accounts/{id}/enrolment",
	"/console/api-keys/new",
	"/console/api-keys/{id}/rotate",
	"/console/api-keys/{id}/revoke",
}

// resourcePaths are the kinds the generic pages serve (console.Resources).
var resourcePaths = []string{"roles", "groups", "client-scopes", "identity-providers", "saml-service-providers",
	"user-federation", "scim-tokens", "organizations", "nhi"}

func init() {
	for _, p := range resourcePaths {
		consolePosts = append(consolePosts, "/console/realms/{realm}/"+p+"/new", "/console/realms/{realm}/"+p+"/{id}/delete")
	}
	// The pages of one (app/console's idps.go, samlsps.go, ldap.go,
	// orgs.go, nhi.go), after the create forms their paths also match.
	for _, p := range []string{
		"/identity-providers/new/discover", "/identity-providers/{id}", "/identity-providers/{id}/discover",
		"/saml-service-providers/{id}",
		"/user-federation/{id}/test-connection", "/user-federation/{id}/sync",
		"/organizations/{id}/members", "/organizations/{id}/members/{userId}/remove", "/organizations/{id}/invitations",
		"/organizations/{id}/invitations/{invitationId}/revoke", "/organizations/{id}/domains",
		"/organizations/{id}/domains/record", "/organizations/{id}/domains/verify",
		"/nhi/{id}/credentials", "/nhi/{id}/credentials/{credentialId}/revoke", "/nhi/{id}/suspend", "/nhi/{id}/reactivate",
		"/nhi/{id}/decommission",
	} {
		consolePosts = append(consolePosts, "/console/realms/{realm}"+p)
	}
}

// federationPages makes in acme one of each kind that has a page of its
// own, with what shows every form of its page, and answers those pages
// and their confirmations.
func federationPages(t *testing.T, f *fixture, user string) []string {
	t.Helper()
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{
		"alias": "partner", "providerType": "oidc", "clientId": "c", "clientSecret": "s", "authorizationUrl": "https://idp.example/auth",
		"tokenUrl": "https://idp.example/token", "jwksUrl": "https://idp.example/jwks", "issuer": "https://idp.example"}), http.StatusCreated)
	r := f.srv.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{
		"entityId": "https://sp.example", "name": "SP", "acsUrl": "https://sp.example/acs"})
	apptest.MustStatus(t, r, http.StatusCreated)
	sp := r.Object(t)["id"].(string)
	r = f.srv.Admin(http.MethodPost, "/admin/realms/acme/user-federation", map[string]any{"name": "directory",
		"providerType": "ldap", "connectionUrl": "ldap://127.0.0.1:1", "usersDn": "ou=people,dc=example,dc=org",
		"bindDn": "cn=admin,dc=example,dc=org", "bindCredential": "s3cret-bind"})
	apptest.MustStatus(t, r, http.StatusCreated)
	fed := r.Object(t)["id"].(string)
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/organizations", map[string]any{"slug": "acme-org",
		"name": "Acme", "domains": []map[string]any{{"name": "acme.example"}}}), http.StatusCreated)
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/organizations/acme-org/members",
		map[string]any{"userId": user}), http.StatusCreated)
	// An invitation is mailed: the realm has a mail server (the mail waits
	// in the outbox).
	apptest.MustStatus(t, f.srv.Admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"smtpHost": "127.0.0.1",
		"smtpPort": 2525, "smtpFrom": "idp@example.test"}), http.StatusOK)
	r = f.srv.Admin(http.MethodPost, "/admin/realms/acme/organizations/acme-org/invitations", map[string]any{"email": "eve@example.test"})
	apptest.MustStatus(t, r, http.StatusCreated)
	invitation := r.Object(t)["id"].(string)
	nhis := map[string]string{}
	for _, name := range []string{"active-bot", "suspended-bot"} {
		r = f.srv.Admin(http.MethodPost, "/admin/realms/acme/nhi", map[string]any{"name": name, "kind": "bot"})
		apptest.MustStatus(t, r, http.StatusCreated)
		nhis[name] = r.Object(t)["id"].(string)
	}
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/nhi/"+nhis["suspended-bot"]+"/suspend", nil), http.StatusOK)
	r = f.srv.Admin(http.MethodPost, "/admin/realms/acme/nhi/"+nhis["active-bot"]+"/credentials", map[string]any{"name": "k", "type": "api_key"})
	apptest.MustStatus(t, r, http.StatusCreated)
	cred := r.Object(t)["id"].(string)
	nhi := "/console/realms/acme/nhi/" + nhis["active-bot"]
	return []string{"/console/realms/acme/identity-providers/partner", "/console/realms/acme/saml-service-providers/" + sp,
		"/console/realms/acme/user-federation/" + fed, "/console/realms/acme/organizations/acme-org",
		"/console/realms/acme/organizations/acme-org/members/" + user + "/remove",
		"/console/realms/acme/organizations/acme-org/invitations/" + invitation + "/revoke",
		nhi, nhi + "/credentials/" + cred + "/revoke", nhi + "/decommission", "/console/realms/acme/nhi/" + nhis["suspended-bot"]}
}

// routeOf is the route template a form's action matches, "" for none.
func routeOf(action string) string {
	for _, tpl := range consolePosts {
		re := "^" + regexp.MustCompile(`\\\{[a-zA-Z]+\\\}`).ReplaceAllString(regexp.QuoteMeta(tpl), `[^/]+`) + "$"
		if regexp.MustCompile(re).MatchString(action) {
			return tpl
		}
	}
	return ""
}

// Every form of the console refuses a post without the session's CSRF
// token, or with another token, with the page that says so; and changes
// nothing.
func TestEveryConsoleFormRefusesAForgedPost(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	user := f.srv.CreateUser("acme", map[string]any{"username": "bob", "password": "a long enough password"})["id"].(string)
	r := f.srv.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "shop",
		"redirectUris": []string{"https://shop.example/cb"}, "grantTypes": []string{"authorization_code", "password"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	// bob holds a group and a role, and may get another of each, so that
	// his page shows the forms that add and remove them.
	for _, g := range []string{"staff", "ops"} {
		apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": g}), http.StatusCreated)
	}
	for _, role := range []string{"auditor", "clerk"} {
		apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": role}), http.StatusCreated)
	}
	var groups []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/groups", nil).Decode(t, &groups)
	apptest.MustStatus(t, f.srv.Admin(http.MethodPut, "/admin/realms/acme/users/"+user+"/groups/"+groups[0]["id"].(string), nil),
		http.StatusOK)
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/users/"+user+"/role-mappings/realm",
		map[string]any{"roleNames": []string{"auditor"}}), http.StatusOK)
	// A directory, whose row shows its actions' forms.
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/user-federation", map[string]any{"name": "corp",
		"providerType": "ldap", "connectionUrl": "ldap://127.0.0.1:1", "usersDn": "ou=people,dc=example,dc=org",
		"bindDn": "cn=admin,dc=example,dc=org", "bindCredential": "s3cret-bind"}), http.StatusCreated)
	// bob signs in, so that his page and the sessions' list show their
	// sessions' forms.
	apptest.MustStatus(t, f.srv.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		url.Values{"grant_type": {"password"}, "username": {"bob"}, "password": {"a long enough password"},
			"client_id": {"shop"}, "client_secret": {r.Object(t)["secret"].(string)}}.Encode(),
		"Content-Type: application/x-www-form-urlencoded"), http.StatusOK)
	// bob holds an attribute and may get another, has second factors (given after
	// his sign-in, which is a password grant) and a linked identity, so that his page shows the forms of each.
	for _, attr := range []string{"department", "team"} {
		apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/custom-attributes",
			map[string]any{"name": attr, "type": "string"}), http.StatusCreated)
	}
	putAttributes(f, "acme", user, map[string]any{"department": "Sales"})
	giveFactors(f, "acme", user)
	linkIdentity(f, "acme", user)
	// Another administrator, whose page shows its forms.
	ra := f.srv.Admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "grace", "password": adminPassword})
	apptest.MustStatus(t, ra, http.StatusCreated)
	grace := ra.Object(t)["id"].(string)
	pages := []string{"/console/", "/console/realms/new", "/console/realms/acme/settings", "/console/realms/acme/users/new",
		"/console/realms/acme/users/" + user, "/console/realms/acme/users/" + user + "/delete",
		"/console/realms/acme/users/" + user + "/mfa", "/console/realms/acme/keys",
		"/console/realms/acme/clients/new", "/console/realms/acme/clients/shop", "/console/realms/acme/clients/shop/secret",
		"/console/realms/acme/clients/shop/delete", "/console/realms/acme/sessions", "/console/accounts", "/console/accounts/new",
		"/console/api-keys", "/console/api-keys/new", "/console/api-keys/some-id/rotate", "/console/api-keys/some-id/revoke",
		"/console/realms/acme/users/" + user + "/totp/remove", "/console/realms/acme/users/" + user + "/passkeys/acme-key-1/remove",
		"/console/realms/acme/users/" + user + "/identities/corp/unlink", "/console/accounts/" + grace,
		"/console/accounts/" + grace + "/delete", "/console/accounts/" + grace + "/enrolment"}
	for _, p := range resourcePaths {
		pages = append(pages, "/console/realms/acme/"+p, "/console/realms/acme/"+p+"/new", "/console/realms/acme/"+p+"/some-id/delete")
	}
	access, _ := accessPages(t, f)
	pages = append(pages, access...)
	pages = append(pages, federationPages(t, f, user)...)
	met := map[string]bool{}
	for _, path := range pages {
		for _, form := range c.get(path).Forms(t) {
			u, err := url.Parse(form.Action)
			if err != nil || form.Fields.Get("csrf") == "" {
				continue // a search form, which changes nothing
			}
			tpl := routeOf(u.Path)
			if tpl == "" {
				t.Errorf("the form of %s posts to %s, which no console route is", path, u.Path)
				continue
			}
			if met[tpl] {
				continue
			}
			met[tpl] = true
			for name, token := range map[string][]string{"missing": nil, "wrong": {"forged-token"}} {
				fields := url.Values{}
				for k, v := range form.Fields {
					fields[k] = v
				}
				fields.Del("csrf")
				if token != nil {
					fields["csrf"] = token
				}
				p := c.b.Post(form.Action, fields)
				if p.Status != http.StatusForbidden || !strings.Contains(string(p.Body), "did not come from the console") {
					t.Errorf("%s token to %s: %d %s, want 403 with the CSRF message", name, u.Path, p.Status, p.Body)
				}
			}
		}
	}
	for _, tpl := range consolePosts {
		if !met[tpl] {
			t.Errorf("no page shows a form that posts to %s", tpl)
		}
	}
	// Nothing was changed: bob, the client and the session are all there.
	f.api("/admin/realms/acme/users/" + user)
	f.api("/admin/realms/acme/clients/shop")
	c.get("/console/account")
}

// A read-only administrator sees no control of a change, and a post they
// forge (with a good CSRF token, from the sign-out form) is the API's
// 403: the console holds no permission of its own.
func TestReadOnlyAdminSeesNoEditsAndIsRefused(t *testing.T) {
	f := newFixture(t)
	user := f.srv.CreateUser("acme", map[string]any{"username": "bob", "firstName": "Bob"})["id"].(string)
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "shop",
		"redirectUris": []string{"https://shop.example/cb"}}), http.StatusCreated)
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/custom-attributes",
		map[string]any{"name": "department", "type": "string"}), http.StatusCreated)
	putAttributes(f, "acme", user, map[string]any{"department": "Sales"})
	giveFactors(f, "acme", user)
	linkIdentity(f, "acme", user)
	c := f.newAdmin("reader", "system:read", "realm:read", "users:read", "clients:read", "sessions:read", "events:read",
		"roles:read", "groups:read", "scopes:read", "identity-providers:read", "organizations:read", "nhi:read")
	_, access := accessPages(t, f)
	federation := federationPages(t, f, user)
	var csrf string
	for _, path := range append(append([]string{"/console/", "/console/realms", "/console/realms/acme/settings", "/console/realms/acme/users",
		"/console/realms/acme/users/" + user, "/console/realms/acme/clients", "/console/realms/acme/clients/shop",
		"/console/realms/acme/sessions", "/console/realms/acme/keys", "/console/realms/acme/identity-providers",
		"/console/realms/acme/saml-service-providers", "/console/realms/acme/user-federation", "/console/realms/acme/organizations",
		"/console/realms/acme/nhi"}, federation[0], federation[1], federation[2], federation[3], federation[6], federation[9]), access...) {
		p := c.get(path)
		for _, form := range p.Forms(t) {
			token := form.Fields.Get("csrf")
			if u, _ := url.Parse(form.Action); u.Path != "/console/logout" && token != "" {
				t.Errorf("%s shows a form posting to %s to a read-only administrator", path, u.Path)
			} else if token != "" {
				csrf = token
			}
		}
		for _, link := range p.Links(t) {
			if strings.HasSuffix(link, "/console/accounts") || strings.HasSuffix(link, "/console/api-keys") {
				t.Errorf("%s links to the administrators for a read-only administrator", path)
			}
			if strings.HasSuffix(link, "/new") || strings.HasSuffix(link, "/delete") || strings.HasSuffix(link, "/secret") ||
				strings.HasSuffix(link, "/remove") || strings.HasSuffix(link, "/unlink") || strings.HasSuffix(link, "/mfa") ||
				strings.HasSuffix(link, "/revoke") || strings.HasSuffix(link, "/decommission") {
				t.Errorf("%s links to %s, a change, for a read-only administrator", path, link)
			}
		}
	}
	if csrf == "" {
		t.Fatal("no page had the sign-out form")
	}
	forged := map[string]url.Values{
		"/console/realms/acme/users/" + user:                                 {"username": {"bob"}, "firstName": {"Mallory"}, "enabled": {"true"}},
		"/console/realms/acme/users/" + user + "/delete":                     {},
		"/console/realms/acme/users/" + user + "/attributes":                 {"name": {"department"}, "value": {"forged"}},
		"/console/realms/acme/users/" + user + "/attributes/remove":          {"name": {"department"}},
		"/console/realms/acme/users/" + user + "/required-actions":           {"UPDATE_PASSWORD": {"true"}},
		"/console/realms/acme/users/" + user + "/password/mail":              {},
		"/console/realms/acme/users/" + user + "/totp/remove":                {},
		"/console/realms/acme/users/" + user + "/passkeys/acme-key-1/remove": {},
		"/console/realms/acme/users/" + user + "/identities/corp/unlink":     {},
		"/console/realms/acme/clients/shop/delete":                           {},
		"/console/realms/new":   {"name": {"forged"}},
		"/console/accounts/new": {"username": {"forged"}},
		"/console/api-keys/new": {"name": {"forged"}, "permissions": {"realm:read"}},
	}
	forged["/console/realms/acme/organizations/acme-org/domains"] = url.Values{"domain": {"forged.example"}}
	forged[federation[6]+"/suspend"] = url.Values{}
	maps.Copy(forged, accessForgedPosts)
	for action, fields := range forged {
		fields.Set("csrf", csrf)
		p := c.b.Post(f.base+action, fields)
		if p.Status != http.StatusForbidden || !strings.Contains(string(p.Body), "lacks the permission") {
			t.Errorf("forged post to %s: %d %s, want the API's 403", action, p.Status, p.Body)
		}
	}
	if got := f.api("/admin/realms/acme/users/" + user); got["firstName"] != "Bob" || got["requirePasswordReset"] != false ||
		fmt.Sprint(got["attributes"]) != "map[department:[Sales]]" {
		t.Fatalf("the forged change went through: %v", got)
	}
	if mfa := f.api("/admin/realms/acme/users/" + user + "/mfa/status"); mfa["totp"] == nil || len(mfa["webauthn"].([]any)) != 2 {
		t.Fatalf("the forged removal went through: %v", mfa)
	}
	var links []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/users/"+user+"/federated-identity", nil).Decode(t, &links)
	if len(links) != 1 {
		t.Fatalf("the forged unlink went through: %v", links)
	}
	f.api("/admin/realms/acme/clients/shop")
	apptest.MustStatus(t, f.srv.Admin(http.MethodGet, "/admin/realms/forged", nil), http.StatusNotFound)
	var accounts []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/accounts", nil).Decode(t, &accounts)
	for _, a := range accounts {
		if a["username"] == "forged" {
			t.Fatal("the forged administrator was made")
		}
	}
	var keys []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/api-keys", nil).Decode(t, &keys)
	for _, k := range keys {
		if k["name"] == "forged" {
			t.Fatal("the forged API key was made")
		}
	}
}
