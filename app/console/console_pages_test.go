package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

const adminPassword = "correct horse battery staple"

// fixture is the whole server over HTTP on loopback, with the realm acme.
type fixture struct {
	t    testing.TB
	srv  *apptest.Server
	base string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	srv, base := realapp.Live(t)
	srv.CreateRealm("acme")
	return &fixture{t: t, srv: srv, base: base}
}

// newAdmin makes an administrator holding perms (every permission when
// none) and answers a browser signed in to the console as them.
func (f *fixture) newAdmin(username string, perms ...string) *console {
	f.t.Helper()
	body := map[string]any{"username": username, "email": username + "@example.test", "password": adminPassword}
	if len(perms) > 0 {
		body["permissions"] = perms
	}
	apptest.MustStatus(f.t, f.srv.Admin(http.MethodPost, "/admin/accounts", body), http.StatusCreated)
	c := &console{f: f, b: apptest.NewBrowser(f.t)}
	c.signIn(username, adminPassword)
	return c
}

// console is a browser signed in to the console.
type console struct {
	f *fixture
	b *apptest.Browser
}

// signIn goes through the hosted sign-in of the administrators' realm
// from the console's first page, and lands on the dashboard.
func (c *console) signIn(username, password string) {
	t := c.f.t
	t.Helper()
	p := c.b.Follow(c.b.Get(c.f.base+"/console/"), c.f.base)
	login := formWith(t, p, "username")
	p = c.b.Follow(c.b.Submit(login, map[string]string{"username": username, "password": password}), c.f.base)
	// The administrators' realm asks for a second factor: the first
	// sign-in enrols an authenticator app, then shows its recovery codes.
	if m := regexp.MustCompile(`<dt>Key</dt>\s*<dd><code>([A-Z2-7 ]+)</code>`).FindSubmatch(p.Body); m != nil {
		code, err := totp.GenerateCode(strings.ReplaceAll(string(m[1]), " ", ""), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		p = c.b.Follow(c.b.Submit(formWith(t, p, "code"), map[string]string{"code": code}), c.f.base)
		if strings.Contains(string(p.Body), `value="continue"`) {
			p = c.b.Follow(c.b.Submit(p.Forms(t)[0], map[string]string{"action": "continue"}), c.f.base)
		}
	}
	if p.Status != http.StatusOK || !strings.Contains(string(p.Body), "Dashboard") || p.URL.Path != "/console/" {
		t.Fatalf("sign-in ended at %s with %d: %s", p.URL, p.Status, p.Body)
	}
}

// get shows a console page, which must answer 200.
func (c *console) get(path string) *apptest.Page {
	c.f.t.Helper()
	p := c.b.Get(c.f.base + path)
	if p.Status != http.StatusOK {
		c.f.t.Fatalf("GET %s: %d %s", path, p.Status, p.Body)
	}
	return p
}

// submit posts the form of the page at path whose action is action, its
// fields (the CSRF token among them) as the page has them, set to values.
func (c *console) submit(path, action string, values map[string]string) *apptest.Page {
	c.f.t.Helper()
	p := c.get(path)
	for _, f := range p.Forms(c.f.t) {
		if u, _ := url.Parse(f.Action); u != nil && u.Path == action {
			return c.b.Submit(f, values)
		}
	}
	c.f.t.Fatalf("no form posts to %s on %s", action, path)
	return nil
}

// formWith is the page's form that has an input named field.
func formWith(t testing.TB, p *apptest.Page, field string) *apptest.Form {
	t.Helper()
	for _, f := range p.Forms(t) {
		if _, ok := f.Fields[field]; ok {
			return f
		}
	}
	t.Fatalf("no form with %s on %s: %s", field, p.URL, p.Body)
	return nil
}

// api reads a resource with the bootstrap key, 200 wanted.
func (f *fixture) api(path string) map[string]any {
	f.t.Helper()
	r := f.srv.Admin(http.MethodGet, path, nil)
	apptest.MustStatus(f.t, r, http.StatusOK)
	return r.Object(f.t)
}

// The console makes each change through the REST API: the same change
// made with the console's form in realm viaconsole and with the API in
// realm viaapi stores the same thing.
func TestConsoleAndAPIAgree(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	for _, realm := range []string{"viaconsole", "viaapi"} {
		f.srv.CreateRealm(realm)
		for _, attr := range []map[string]any{{"name": "department", "type": "string"},
			{"name": "team", "type": "string", "multivalued": true}} {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/"+realm+"/custom-attributes", attr), http.StatusCreated)
		}
	}
	userID, accountID, spID := map[string]string{}, map[string]string{}, map[string]string{}
	for _, realm := range []string{"viaconsole", "viaapi"} {
		r := f.srv.Admin(http.MethodPost, "/admin/accounts", map[string]any{"username": realm + "-operator", "password": adminPassword})
		apptest.MustStatus(t, r, http.StatusCreated)
		accountID[realm] = r.Object(t)["id"].(string)
	}
	ids := accessFixture(t, f, "viaconsole", "viaapi")
	for _, tc := range append([]agreeRow{
		{"create a user", func(realm string) {
			p := c.submit("/console/realms/"+realm+"/users/new", "/console/realms/"+realm+"/users/new", map[string]string{
				"username": "ann", "email": "ann@example.test", "firstName": "Ann", "lastName": "Lee",
				"enabled": "true", "emailVerified": "true", "password": "a long enough password"})
			loc := p.Location(t)
			userID[realm] = loc.Path[strings.LastIndex(loc.Path, "/")+1:]
		}, func(realm string) {
			r := f.srv.Admin(http.MethodPost, "/admin/realms/"+realm+"/users", map[string]any{"username": "ann",
				"email": "ann@example.test", "firstName": "Ann", "lastName": "Lee", "enabled": true, "emailVerified": true,
				"requirePasswordReset": false, "password": "a long enough password"})
			apptest.MustStatus(t, r, http.StatusCreated)
			userID[realm] = r.Object(t)["id"].(string)
		}, "/users/{user}"},
		{"change the user", func(realm string) {
			path := "/console/realms/" + realm + "/users/" + userID[realm]
			c.submit(path, path, map[string]string{"username": "ann", "email": "ann.lee@example.test", "firstName": "Annie",
				"lastName": "Lee", "enabled": "true"})
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPatch, "/admin/realms/"+realm+"/users/"+userID[realm], map[string]any{
				"username": "ann", "email": "ann.lee@example.test", "firstName": "Annie", "lastName": "Lee", "enabled": true}),
				http.StatusOK)
		}, "/users/{user}"},
		{"set the user's required actions", func(realm string) {
			path := "/console/realms/" + realm + "/users/" + userID[realm]
			c.submit(path, path+"/required-actions", map[string]string{"UPDATE_PASSWORD": "true", "VERIFY_EMAIL": "true"})
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPatch, "/admin/realms/"+realm+"/users/"+userID[realm], map[string]any{
				"requirePasswordReset": true, "emailVerified": false}), http.StatusOK)
		}, "/users/{user}"},
		{"give the user attributes", func(realm string) {
			path := "/console/realms/" + realm + "/users/" + userID[realm]
			c.b.Submit(attributeForm(c, path, ""), map[string]string{"name": "department", "value": "Sales"})
			c.b.Submit(attributeForm(c, path, ""), map[string]string{"name": "team", "value": "red\nblue\n"})
		}, func(realm string) {
			putAttributes(f, realm, userID[realm], map[string]any{"department": "Sales", "team": []string{"red", "blue"}})
		}, "/users/{user}"},
		{"change and remove the user's attributes", func(realm string) {
			path := "/console/realms/" + realm + "/users/" + userID[realm]
			c.b.Submit(attributeForm(c, path, "department"), map[string]string{"value": "Marketing"})
			for _, form := range c.get(path).Forms(t) {
				if strings.HasSuffix(form.Action, "/attributes/remove") && form.Fields.Get("name") == "team" {
					c.b.Submit(form, nil)
				}
			}
		}, func(realm string) {
			putAttributes(f, realm, userID[realm], map[string]any{"department": "Marketing"})
		}, "/users/{user}"},
		{"remove one passkey", func(realm string) {
			giveFactors(f, realm, userID[realm])
			path := "/console/realms/" + realm + "/users/" + userID[realm] + "/passkeys/" + realm + "-key-1/remove"
			c.submit(path, path, nil)
		}, func(realm string) {
			giveFactors(f, realm, userID[realm])
			apptest.MustStatus(t, f.srv.Admin(http.MethodDelete, "/admin/realms/"+realm+"/users/"+userID[realm]+"/mfa/webauthn/"+realm+"-key-1", nil),
				http.StatusNoContent)
		}, "/users/{user}/mfa/status"},
		{"remove the authenticator app", func(realm string) {
			path := "/console/realms/" + realm + "/users/" + userID[realm] + "/totp/remove"
			c.submit(path, path, nil)
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodDelete, "/admin/realms/"+realm+"/users/"+userID[realm]+"/mfa/totp", nil),
				http.StatusNoContent)
		}, "/users/{user}/mfa/status"},
		{"create a client", func(realm string) {
			p := c.submit("/console/realms/"+realm+"/clients/new", "/console/realms/"+realm+"/clients/new", map[string]string{
				"clientId": "shop", "clientType": "CONFIDENTIAL", "name": "Shop", "enabled": "true",
				"redirectUris": "https://shop.example/cb\nhttps://shop.example/cb2", "webOrigins": "https://shop.example",
				"grantTypes": "authorization_code"})
			apptest.MustStatus(t, &apptest.Response{Status: p.Status, Body: p.Body}, http.StatusCreated)
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/"+realm+"/clients", map[string]any{
				"clientId": "shop", "clientType": "CONFIDENTIAL", "name": "Shop", "description": "", "enabled": true,
				"requireConsent": false, "backchannelLogoutUri": "",
				"redirectUris": []string{"https://shop.example/cb", "https://shop.example/cb2"},
				"webOrigins":   []string{"https://shop.example"}, "grantTypes": []string{"authorization_code"}}), http.StatusCreated)
		}, "/clients/shop"},
		{"change the client", func(realm string) {
			path := "/console/realms/" + realm + "/clients/shop"
			c.submit(path, path, map[string]string{"name": "The shop", "description": "sells things", "enabled": "true",
				"requireConsent": "true", "redirectUris": "https://shop.example/back", "webOrigins": "",
				"grantTypes": "authorization_code"})
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPatch, "/admin/realms/"+realm+"/clients/shop", map[string]any{
				"name": "The shop", "description": "sells things", "enabled": true, "requireConsent": true,
				"backchannelLogoutUri": "", "redirectUris": []string{"https://shop.example/back"}, "webOrigins": []string{},
				"grantTypes": []string{"authorization_code"}}), http.StatusOK)
		}, "/clients/shop"},
		{"change the realm's settings", func(realm string) {
			path := "/console/realms/" + realm + "/settings"
			values := map[string]string{"displayName": "Shop people", "accessTokenLifespan": "600", "registrationAllowed": "true",
				"passwordMinLength": "12", "bruteForceEnabled": "true", "maxLoginFailures": "7",
				"termsVersion": "2026-11", "termsText": "Be kind.\nKeep your password to yourself."}
			p := c.get(path)
			form := formWith(t, p, "displayName")
			for k, v := range form.Fields {
				if _, set := values[k]; !set && k != "csrf" {
					values[k] = v[0]
				}
			}
			for _, k := range checkedBoxes(p) {
				if _, set := values[k]; !set {
					values[k] = "true"
				}
			}
			c.b.Submit(form, values)
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPatch, "/admin/realms/"+realm, map[string]any{
				"displayName": "Shop people", "accessTokenLifespan": 600, "registrationAllowed": true,
				"passwordMinLength": 12, "bruteForceEnabled": true, "maxLoginFailures": 7,
				"termsVersion": "2026-11", "termsText": "Be kind.\nKeep your password to yourself."}), http.StatusOK)
		}, ""},
		{"change the events' settings", func(realm string) {
			path := "/console/realms/" + realm + "/settings"
			c.submit(path, "/console/realms/"+realm+"/events/config", map[string]string{"eventsEnabled": "true",
				"eventsExpiration": "3600", "adminEventsEnabled": "true"})
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPut, "/admin/realms/"+realm+"/events/config", map[string]any{
				"eventsEnabled": true, "eventsExpiration": 3600, "adminEventsEnabled": true, "enabledEventTypes": []string{}}),
				http.StatusOK)
		}, "/events/config"},
		{"change an administrator's permissions and realm", func(realm string) {
			path := "/console/accounts/" + accountID[realm]
			c.submit(path, path, map[string]string{"permissions": "users:read\nusers:write", "realm": "acme"})
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPut, "/admin/accounts/"+accountID[realm], map[string]any{
				"permissions": []string{"users:read", "users:write"}, "realm": "acme"}), http.StatusOK)
		}, "/admin/accounts/{account}"},
		{"create an identity provider from a preset", func(realm string) {
			path := "/console/realms/" + realm + "/identity-providers/new"
			p := c.submit(path, path, map[string]string{"providerType": "github", "alias": "gh", "displayName": "GitHub",
				"clientId": "app-1", "clientSecret": "s3cret-app", "enabled": "true", "trustEmail": "true"})
			if loc := p.Location(t); loc.Path != "/console/realms/"+realm+"/identity-providers/gh" {
				t.Fatalf("after creating the provider: %d %s", p.Status, p.Body)
			}
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/"+realm+"/identity-providers", map[string]any{
				"providerType": "github", "alias": "gh", "displayName": "GitHub", "clientId": "app-1", "clientSecret": "s3cret-app",
				"enabled": true, "trustEmail": true, "syncUserProfile": false}), http.StatusCreated)
		}, "/identity-providers/gh"},
		{"change the identity provider", func(realm string) {
			path := "/console/realms/" + realm + "/identity-providers/gh"
			c.submit(path, path, map[string]string{"displayName": "GitHub login", "clientId": "app-2", "enabled": "true"})
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPut, "/admin/realms/"+realm+"/identity-providers/gh", map[string]any{
				"displayName": "GitHub login", "clientId": "app-2", "trustEmail": false}), http.StatusOK)
		}, "/identity-providers/gh"},
		{"create a SAML service provider from its metadata", func(realm string) {
			path := "/console/realms/" + realm + "/saml-service-providers/new"
			p := c.submit(path, path, map[string]string{"metadata": spMetadata, "name": "Wiki", "enabled": "true"})
			loc := p.Location(t)
			spID[realm] = loc.Path[strings.LastIndex(loc.Path, "/")+1:]
		}, func(realm string) {
			r := f.srv.Admin(http.MethodPost, "/admin/realms/"+realm+"/saml-service-providers", map[string]any{
				"metadata": spMetadata, "name": "Wiki", "enabled": true})
			apptest.MustStatus(t, r, http.StatusCreated)
			spID[realm] = r.Object(t)["id"].(string)
		}, "/saml-service-providers/{sp}"},
		{"change the SAML service provider", func(realm string) {
			path := "/console/realms/" + realm + "/saml-service-providers/" + spID[realm]
			c.submit(path, path, map[string]string{"name": "Team wiki", "enabled": "true", "signAssertions": "true",
				"signResponses": "true"})
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPut, "/admin/realms/"+realm+"/saml-service-providers/"+spID[realm],
				map[string]any{"name": "Team wiki"}), http.StatusOK)
		}, "/saml-service-providers/{sp}"},
		{"add a domain to an organization", func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/"+realm+"/organizations",
				map[string]any{"slug": "acme-org", "name": "Acme"}), http.StatusCreated)
			path := "/console/realms/" + realm + "/organizations/acme-org"
			p := c.submit(path, path+"/domains", map[string]string{"domain": "acme.example"})
			if loc := p.Location(t); loc.Query().Get("done") != "console.done.domainAdded" {
				t.Fatalf("after adding the domain: %d %s", p.Status, p.Body)
			}
		}, func(realm string) {
			apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/"+realm+"/organizations",
				map[string]any{"slug": "acme-org", "name": "Acme"}), http.StatusCreated)
			apptest.MustStatus(t, f.srv.Admin(http.MethodPut, "/admin/realms/"+realm+"/organizations/acme-org",
				map[string]any{"domains": []map[string]any{{"name": "acme.example"}}}), http.StatusOK)
		}, "/organizations/acme-org"},
	}, accessRows(t, f, c, ids)...) {
		t.Run(tc.name, func(t *testing.T) {
			tc.console("viaconsole")
			tc.api("viaapi")
			read := func(realm string) map[string]any {
				path := "/admin/realms/" + realm + tc.read
				if strings.HasPrefix(tc.read, "/admin/") {
					path = tc.read
				}
				path = strings.NewReplacer("{user}", userID[realm], "{account}", accountID[realm], "{sp}", spID[realm]).Replace(path)
				for k, v := range ids[realm] {
					path = strings.ReplaceAll(path, "{"+k+"}", v)
				}
				rep := readJSON(t, f, path)
				if strings.HasPrefix(tc.read, "/admin/accounts/") {
					delete(rep, "username") // the realm's name in it
				}
				for _, volatile := range []string{"id", "internalId", "name", "createdTimestamp"} {
					if volatile != "name" || tc.read == "" {
						delete(rep, volatile)
					}
				}
				keys, _ := rep["webauthn"].([]any)
				for _, k := range keys {
					delete(k.(map[string]any), "id") // the store's, one per row
				}
				return rep
			}
			got, want := read("viaconsole"), read("viaapi")
			if !equalJSON(got, want) {
				t.Fatalf("through the console:\n%v\nthrough the API:\n%v", got, want)
			}
		})
	}
}

// checkedBoxes are the names of the page's ticked checkboxes, which
// apptest's forms leave out.
func checkedBoxes(p *apptest.Page) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<input type="checkbox" id="[^"]*" name="([^"]+)" value="true" checked`).FindAllSubmatch(p.Body, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

func equalJSON(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			return false
		}
		switch v := v.(type) {
		case []any:
			wl, ok := w.([]any)
			if !ok || !reflect.DeepEqual(v, wl) {
				return false
			}
		case map[string]any:
			wm, ok := w.(map[string]any)
			if !ok || !equalJSON(v, wm) {
				return false
			}
		default:
			if v != w {
				return false
			}
		}
	}
	return true
}

// The generic pages create and delete through the API: a role, made
// and deleted after a confirmation, and a SCIM token, shown once.
func TestConsoleResources(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	p := c.submit("/console/realms/acme/roles/new", "/console/realms/acme/roles/new",
		map[string]string{"name": "auditor", "description": "reads the books"})
	if loc := p.Location(t); loc.Path != "/console/realms/acme/roles" || loc.Query().Get("done") != "console.done.created" {
		t.Fatalf("after creating a role: %s", loc)
	}
	if got := f.api("/admin/realms/acme/roles/auditor")["description"]; got != "reads the books" {
		t.Fatalf("the role's description %v", got)
	}
	// A refusal of the API is at its field: a second role of that name.
	p = c.submit("/console/realms/acme/roles/new", "/console/realms/acme/roles/new", map[string]string{"name": "auditor"})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(string(p.Body), `aria-invalid="true"`) {
		t.Fatalf("a duplicate role: %d %s", p.Status, p.Body)
	}
	c.submit("/console/realms/acme/roles/auditor/delete", "/console/realms/acme/roles/auditor/delete", nil)
	apptest.MustStatus(t, f.srv.Admin(http.MethodGet, "/admin/realms/acme/roles/auditor", nil), http.StatusNotFound)

	p = c.submit("/console/realms/acme/scim-tokens/new", "/console/realms/acme/scim-tokens/new", map[string]string{"name": "hr"})
	m := regexp.MustCompile(`id="client-secret" value="([^"]+)"`).FindSubmatch(p.Body)
	if p.Status != http.StatusCreated || m == nil {
		t.Fatalf("the SCIM token is not shown: %d %s", p.Status, p.Body)
	}
	r := f.srv.Request(http.MethodGet, "/scim/v2/acme/Users", nil, "Authorization: Bearer "+string(m[1]))
	apptest.MustStatus(t, r, http.StatusOK)
}

// spMetadata is a service provider's metadata as SPs publish it: an
// endpoint a binding, the POST one not first, and unsigned requests.
const spMetadata = `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://wiki.example/saml/metadata">
  <SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://wiki.example/saml/slo"/>
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="https://wiki.example/saml/artifact" index="1"/>
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://wiki.example/saml/acs" index="2"/>
  </SPSSODescriptor>
</EntityDescriptor>`

// A SAML service provider is made from its metadata, pasted in the form,
// as the API's POST with the metadata makes it; metadata that is not an
// SP's is refused at its field.
func TestConsoleSAMLServiceProviderFromMetadata(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	const form = "/console/realms/acme/saml-service-providers/new"
	p := c.submit(form, form, map[string]string{"metadata": `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example"/>`})
	if p.Status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="sp-metadata"[^>]*aria-invalid="true"`).Match(p.Body) ||
		!strings.Contains(string(p.Body), "has no SPSSODescriptor") {
		t.Fatalf("metadata without an SP: %d %s", p.Status, p.Body)
	}
	p = c.submit(form, form, map[string]string{"metadata": spMetadata, "name": "Wiki", "enabled": "true"})
	r := f.srv.Admin(http.MethodGet, "/admin/realms/acme/saml-service-providers", nil)
	var sps []map[string]any
	r.Decode(t, &sps)
	if len(sps) != 1 {
		t.Fatalf("service providers %v, want the one made", sps)
	}
	if loc := p.Location(t); loc.Path != "/console/realms/acme/saml-service-providers/"+sps[0]["id"].(string) ||
		loc.Query().Get("done") != "console.done.created" {
		t.Fatalf("after creating the SP: %d %s", p.Status, p.Body)
	}
	want := map[string]any{"entityId": "https://wiki.example/saml/metadata", "name": "Wiki", "acsUrl": "https://wiki.example/saml/acs",
		"sloUrl": "https://wiki.example/saml/slo", "sloBinding": "HTTP-Redirect", "requestsSigned": false, "enabled": true}
	for k, v := range want {
		if sps[0][k] != v {
			t.Errorf("the SP's %s: %v, want %v", k, sps[0][k], v)
		}
	}
}

// A realm's keys rotate from the console, and a test mail's bad address
// is refused at its field.
func TestConsoleRealmKeysAndMail(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	var before []any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/keys", nil).Decode(t, &before)
	c.submit("/console/realms/acme/keys", "/console/realms/acme/keys/rotate", map[string]string{"immediate": "true"})
	var after []any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/keys", nil).Decode(t, &after)
	if len(after) != len(before)+1 {
		t.Fatalf("%d keys after a rotation, %d before", len(after), len(before))
	}
	p := c.submit("/console/realms/acme/settings", "/console/realms/acme/email/test", map[string]string{"to": "not an address"})
	if p.Status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="to"[^>]*aria-invalid="true"`).Match(p.Body) {
		t.Fatalf("a bad address: %d %s", p.Status, p.Body)
	}
}

// bob's sign-in shows among the sessions and the login events; the
// console ends his session, and the events download as CSV.
func TestConsoleSessionsAndEvents(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	apptest.MustStatus(t, f.srv.Admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}),
		http.StatusOK)
	f.srv.CreateUser("acme", map[string]any{"username": "bob", "password": "a long enough password"})
	r := f.srv.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "shop",
		"redirectUris": []string{"https://shop.example/cb"}, "grantTypes": []string{"authorization_code", "password"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustStatus(t, f.srv.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		url.Values{"grant_type": {"password"}, "username": {"bob"}, "password": {"a long enough password"},
			"client_id": {"shop"}, "client_secret": {r.Object(t)["secret"].(string)}}.Encode(),
		"Content-Type: application/x-www-form-urlencoded"), http.StatusOK)

	page := c.get("/console/realms/acme/sessions")
	if !strings.Contains(string(page.Body), "<td>bob</td>") {
		t.Fatalf("the sessions page does not show bob: %s", page.Body)
	}
	events := c.get("/console/realms/acme/events?type=LOGIN")
	if !strings.Contains(string(events.Body), "<td>LOGIN</td>") {
		t.Fatalf("the events page does not show the sign-in: %s", events.Body)
	}
	csv := c.b.Get(f.base + "/console/realms/acme/events/export?type=LOGIN")
	if csv.Status != http.StatusOK || !strings.HasPrefix(csv.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(csv.Header.Get("Content-Disposition"), "acme-login-events.csv") || !strings.Contains(string(csv.Body), ",LOGIN,") {
		t.Fatalf("the CSV: %d %v %s", csv.Status, csv.Header, csv.Body)
	}
	// A bad filter is the API's refusal, shown at its field.
	bad := c.get("/console/realms/acme/events?dateFrom=yesterday")
	if !regexp.MustCompile(`id="dateFrom"[^>]*aria-invalid="true"`).Match(bad.Body) {
		t.Fatalf("a bad date is not refused at its field: %s", bad.Body)
	}

	for _, form := range page.Forms(t) {
		if strings.HasSuffix(form.Action, "/end") {
			c.b.Submit(form, nil)
		}
	}
	var left []any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/sessions", nil).Decode(t, &left)
	if len(left) != 0 {
		t.Fatalf("sessions left after ending them: %v", left)
	}
}

// An administrator confined to a realm sees that realm only, and the API
// refuses them another.
func TestConsoleConfinedAdmin(t *testing.T) {
	f := newFixture(t)
	f.srv.CreateRealm("beta")
	body := map[string]any{"username": "acmeadmin", "password": adminPassword, "realm": "acme",
		"permissions": []string{"realm:read", "users:read", "users:write"}}
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/accounts", body), http.StatusCreated)
	c := &console{f: f, b: apptest.NewBrowser(t)}
	c.signIn("acmeadmin", adminPassword)
	realms := string(c.get("/console/realms").Body)
	if !strings.Contains(realms, ">acme</a>") || strings.Contains(realms, "beta") {
		t.Fatalf("the realms a confined administrator sees: %s", realms)
	}
	c.get("/console/realms/acme/users")
	if p := c.b.Get(f.base + "/console/realms/beta/users"); p.Status != http.StatusUnauthorized ||
		!strings.Contains(string(p.Body), "acts only in their own realm") {
		t.Fatalf("another realm's users: %d %s", p.Status, p.Body)
	}
}

// A user joins and leaves a group and is granted and revoked a realm role
// from their page.
func TestConsoleUserMemberships(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	user := f.srv.CreateUser("acme", map[string]any{"username": "bob"})["id"].(string)
	r := f.srv.Admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "staff"})
	apptest.MustStatus(t, r, http.StatusCreated)
	group := r.Object(t)["id"].(string)
	apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "auditor"}), http.StatusCreated)
	page := "/console/realms/acme/users/" + user
	held := func() (groups, roles []any) {
		f.srv.Admin(http.MethodGet, "/admin/realms/acme/users/"+user+"/groups", nil).Decode(t, &groups)
		f.srv.Admin(http.MethodGet, "/admin/realms/acme/users/"+user+"/role-mappings/realm", nil).Decode(t, &roles)
		return groups, roles
	}
	c.submit(page, page+"/groups", map[string]string{"groupId": group})
	c.submit(page, page+"/roles", map[string]string{"roleName": "auditor"})
	if groups, roles := held(); len(groups) != 1 || len(roles) != 1 {
		t.Fatalf("after adding: groups %v roles %v", groups, roles)
	}
	c.submit(page, page+"/groups/remove", nil)
	c.submit(page, page+"/roles/remove", nil)
	if groups, roles := held(); len(groups) != 0 || len(roles) != 0 {
		t.Fatalf("after removing: groups %v roles %v", groups, roles)
	}
}

// An LDAP directory's connection is tested from its page, and the API's
// answer shown there: here no directory listens.
func TestConsoleLDAPTestConnection(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	p := c.submit("/console/realms/acme/user-federation/new", "/console/realms/acme/user-federation/new", map[string]string{
		"name": "corp", "providerType": "ldap", "connectionUrl": "ldap://127.0.0.1:1", "usersDn": "ou=people,dc=example,dc=org",
		"bindDn": "cn=admin,dc=example,dc=org", "bindCredential": "s3cret-bind", "enabled": "true"})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("creating the directory: %d %s", p.Status, p.Body)
	}
	var list []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/user-federation", nil).Decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("directories %v", list)
	}
	page := "/console/realms/acme/user-federation/" + list[0]["id"].(string)
	if !strings.Contains(string(c.get("/console/realms/acme/user-federation").Body), `href="`+page+`"`) {
		t.Fatal("the directory's row does not lead to its page")
	}
	p = c.submit(page, page+"/test-connection", nil)
	if p.Status != http.StatusOK || !regexp.MustCompile(`<dt>Connected</dt><dd>–</dd>`).Match(p.Body) {
		t.Fatalf("the test's answer: %d %s", p.Status, p.Body)
	}
}

// The generic lists sort by the column asked, either way, and show a page
// of rows at a time with the total.
func TestConsoleResourceListsSortAndPage(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	for i := range 60 {
		apptest.MustStatus(t, f.srv.Admin(http.MethodPost, "/admin/realms/acme/roles",
			map[string]any{"name": fmt.Sprintf("role-%02d", i), "description": fmt.Sprintf("%02d", 59-i)}), http.StatusCreated)
	}
	var all []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/roles", nil).Decode(t, &all)
	link := regexp.MustCompile(`<td class="depth-0"><a href="/console/realms/acme/roles/([^"]+)">`)
	names := func(path string) ([]string, string) {
		t.Helper()
		p := c.get(path)
		var out []string
		for _, m := range link.FindAllSubmatch(p.Body, -1) {
			out = append(out, string(m[1]))
		}
		return out, string(p.Body)
	}
	first, body := names("/console/realms/acme/roles")
	if len(first) != 50 || !slices.IsSorted(first) {
		t.Fatalf("the first page: %d rows %v", len(first), first)
	}
	if !strings.Contains(body, `aria-sort="ascending"`) || !strings.Contains(body, fmt.Sprintf("of %d", len(all))) {
		t.Errorf("the first page says neither its order nor the total of %d", len(all))
	}
	rest, _ := names("/console/realms/acme/roles?first=50")
	if len(first)+len(rest) != len(all) || slices.Contains(rest, first[49]) || !slices.IsSorted(rest) || rest[0] < first[49] {
		t.Errorf("the second page: %v after %v", rest, first[49])
	}
	desc, body := names("/console/realms/acme/roles?sort=name&desc=1")
	if !slices.IsSortedFunc(desc, func(a, b string) int { return strings.Compare(b, a) }) || !strings.Contains(body, `aria-sort="descending"`) {
		t.Errorf("descending by name: %v", desc)
	}
	// By description, which runs against the names.
	byDesc, _ := names("/console/realms/acme/roles?sort=description")
	if i := slices.Index(byDesc, "role-59"); i < 0 || slices.Index(byDesc, "role-00") >= 0 && slices.Index(byDesc, "role-00") < i {
		t.Errorf("by description: %v", byDesc)
	}
}
