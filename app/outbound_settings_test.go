package app

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// allowLoopback lets the server's outbound calls reach this machine, as
// --outbound-allow 127.0.0.0/8,::1 does: the peers tests start (a mail
// provider's stand-in, a client receiving logout tokens) listen there.
func allowLoopback(c *Config) {
	c.OutboundAllowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
}

// outboundURLSetting is a setting naming a URL the server itself calls:
// the request that saves it with the URL u, and the field an error names.
type outboundURLSetting struct {
	name   string
	method string
	path   string
	body   func(u string) map[string]any
	field  string
}

// outboundURLSettings is every setting that names a URL the server calls.
// URLs only browsers follow (redirect URIs, web origins, SAML endpoints, an
// upstream's sign-in and sign-out pages) are deliberately not here.
func outboundURLSettings() []outboundURLSetting {
	resend := func(u string) map[string]any {
		return map[string]any{"emailProvider": "resend", "emailProviderConfig": map[string]any{"apiKey": "k", "baseUrl": u}}
	}
	oauth2 := func(token, userinfo string) map[string]any {
		return map[string]any{"alias": "up", "providerType": "oauth2", "clientId": "c", "clientSecret": "s",
			"authorizationUrl": "https://idp.example.test/auth", "tokenUrl": token, "userinfoUrl": userinfo}
	}
	importFile := func(edit func(map[string]any)) map[string]any {
		f := map[string]any{"formatVersion": 1, "name": "imported"}
		edit(f)
		return f
	}
	const public = "https://idp.example.test/x"
	return []outboundURLSetting{
		{"client create: back-channel logout", http.MethodPost, "/admin/realms/acme/clients",
			func(u string) map[string]any { return map[string]any{"clientId": "new", "backchannelLogoutUri": u} },
			"backchannelLogoutUri"},
		{"client update: back-channel logout", http.MethodPut, "/admin/realms/acme/clients/existing",
			func(u string) map[string]any { return map[string]any{"backchannelLogoutUri": u} }, "backchannelLogoutUri"},
		{"realm create: mail provider", http.MethodPost, "/admin/realms",
			func(u string) map[string]any { m := resend(u); m["name"] = "other"; return m }, "emailProviderConfig.baseUrl"},
		{"realm update: mail provider", http.MethodPut, "/admin/realms/acme", resend, "emailProviderConfig.baseUrl"},
		{"identity provider create: issuer (discovery)", http.MethodPost, "/admin/realms/acme/identity-providers",
			func(u string) map[string]any {
				return map[string]any{"alias": "up", "providerType": "oidc", "clientId": "c", "clientSecret": "s", "issuer": u}
			}, "issuer"},
		{"identity provider create: token", http.MethodPost, "/admin/realms/acme/identity-providers",
			func(u string) map[string]any { return oauth2(u, public) }, "tokenUrl"},
		{"identity provider create: userinfo", http.MethodPost, "/admin/realms/acme/identity-providers",
			func(u string) map[string]any { return oauth2(public, u) }, "userinfoUrl"},
		{"identity provider update: token", http.MethodPut, "/admin/realms/acme/identity-providers/existing",
			func(u string) map[string]any { m := oauth2(u, public); m["alias"] = "existing"; return m }, "tokenUrl"},
		{"import: client back-channel logout", http.MethodPost, "/admin/realms/import",
			func(u string) map[string]any {
				return importFile(func(f map[string]any) {
					f["clients"] = []any{map[string]any{"clientId": "cc", "backchannelLogoutUri": u}}
				})
			}, "clients[0].backchannelLogoutUri"},
		{"import: mail provider", http.MethodPost, "/admin/realms/import",
			func(u string) map[string]any {
				return importFile(func(f map[string]any) {
					f["emailProvider"], f["emailProviderConfig"] = "resend", map[string]any{"apiKey": "k", "baseUrl": u}
				})
			}, "emailProviderConfig.baseUrl"},
		{"import: identity provider keys", http.MethodPost, "/admin/realms/import",
			func(u string) map[string]any {
				return importFile(func(f map[string]any) {
					f["identityProviders"] = []any{map[string]any{"alias": "up", "providerType": "oidc", "clientId": "c",
						"issuer": "https://idp.example.test", "authorizationUrl": public, "tokenUrl": public, "jwksUrl": u}}
				})
			}, "identityProviders[0].jwksUrl"},
	}
}

// Every setting naming a URL the server calls refuses, when saved, the
// cloud metadata address and loopback, with an error naming the flag that
// would allow them.
func TestOutboundURLSettingsRefuseNonPublicAddresses(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "existing"}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": "existing",
		"providerType": "oauth2", "clientId": "c", "clientSecret": "s", "authorizationUrl": "https://idp.example.test/auth",
		"tokenUrl": "https://idp.example.test/token", "userinfoUrl": "https://idp.example.test/me"}), http.StatusCreated)
	for _, setting := range outboundURLSettings() {
		for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:1/", "http://[::1]:1/", "http://localhost:1/"} {
			t.Run(setting.name+" "+u, func(t *testing.T) {
				r := s.admin(setting.method, setting.path, setting.body(u))
				mustError(t, r, http.StatusBadRequest, "invalid_field", setting.field)
				if !strings.Contains(string(r.Body), "--outbound-allow") {
					t.Fatalf("the refusal does not name --outbound-allow: %s", r.Body)
				}
			})
		}
	}
}

// An operator's --outbound-allow lets those settings name an address it
// holds; the SMTP relay may be on loopback or in a private network without
// it (a local relay is common), never at the metadata address.
func TestOutboundSettingsAllowedOrLocal(t *testing.T) {
	s := newTestServer(t, allowLoopback)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients",
		map[string]any{"clientId": "app", "backchannelLogoutUri": "http://127.0.0.1:1/logout"}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme", map[string]any{"emailProvider": "resend",
		"emailProviderConfig": map[string]any{"apiKey": "k", "baseUrl": "http://[::1]:1"}}), http.StatusOK)
	mustError(t, s.admin(http.MethodPut, "/admin/realms/acme", map[string]any{"emailProvider": "resend",
		"emailProviderConfig": map[string]any{"apiKey": "k", "baseUrl": "http://10.0.0.1"}}),
		http.StatusBadRequest, "invalid_field", "emailProviderConfig.baseUrl")

	plain := newTestServer(t)
	plain.createRealm("acme")
	for _, host := range []string{"127.0.0.1", "localhost", "10.0.0.25", "smtp.example.test"} {
		mustStatus(t, plain.admin(http.MethodPut, "/admin/realms/acme", map[string]any{"smtpHost": host}), http.StatusOK)
	}
	for _, host := range []string{"169.254.169.254", "169.254.0.1"} {
		r := plain.admin(http.MethodPut, "/admin/realms/acme", map[string]any{"smtpHost": host})
		mustError(t, r, http.StatusBadRequest, "invalid_field", "smtpHost")
		if !strings.Contains(string(r.Body), "--outbound-allow") {
			t.Fatalf("smtpHost %s: the refusal does not name --outbound-allow: %s", host, r.Body)
		}
	}
}

// A setting saved while its name resolved to a public address may resolve
// to an internal one later (DNS rebinding): the call itself is refused,
// whatever was saved. The settings are written past the API here, as a
// name that changed its address would leave them.
func TestOutboundCallsRefusedWhenSent(t *testing.T) {
	var hits atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer internal.Close()
	s := newTestServer(t)
	s.createRealm("acme")
	ctx := context.Background()

	t.Run("mail provider", func(t *testing.T) {
		s.setRealmEmail("acme", func(r *store.Realm) {
			r.EmailProvider, r.EmailProviderConfig = "resend", providerConfig("resend", internal.URL)
		})
		r := s.admin(http.MethodPost, "/admin/realms/acme/email/test", map[string]any{"to": "alice@example.test"})
		mustError(t, r, http.StatusBadGateway, "delivery_failed", "")
		if !strings.Contains(string(r.Body), "--outbound-allow") {
			t.Fatalf("the refused delivery does not name --outbound-allow: %s", r.Body)
		}
	})
	t.Run("SMTP relay at the metadata address", func(t *testing.T) {
		s.setRealmEmail("acme", func(r *store.Realm) {
			r.EmailProvider, r.SMTPHost, r.SMTPPort = "smtp", "169.254.169.254", 25
		})
		r := s.admin(http.MethodPost, "/admin/realms/acme/smtp/test", map[string]any{"to": "alice@example.test"})
		mustError(t, r, http.StatusBadGateway, "delivery_failed", "")
		if !strings.Contains(string(r.Body), "--outbound-allow") {
			t.Fatalf("the refused delivery does not name --outbound-allow: %s", r.Body)
		}
	})
	t.Run("back-channel logout", func(t *testing.T) {
		b := &s.app.backchannel
		b.init()
		retry, err := b.post(ctx, logoutDelivery{uri: internal.URL + "/logout", token: "t"})
		if !errors.Is(err, httpx.ErrForbiddenAddress) || !strings.Contains(err.Error(), "--outbound-allow") {
			t.Fatalf("delivery to loopback: retry %v, %v; want the outbound guard's refusal", retry, err)
		}
	})
	if n := hits.Load(); n != 0 {
		t.Fatalf("the internal server was reached %d times", n)
	}
}

// outboundClientMakers are what makes an HTTP client or a raw connection
// of its own, past the outbound guard.
var outboundClientMakers = regexp.MustCompile(`http\.Client\{|http\.Transport\{|http\.DefaultClient|http\.DefaultTransport|` +
	`http\.(Get|Post|PostForm|Head)\(|net\.Dialer\{|net\.Dial(Timeout)?\(|tls\.Dial\(`)

// outboundDialers are the files that may dial for themselves, and why.
var outboundDialers = map[string]string{
	"httpx/outbound.go": "the guard itself",
	"mail/smtp.go":      "SMTP relays: a dialer with httpx.LocalNetworkControl",
	"ldapfed/conn.go":   "LDAP directories: a dialer that refuses link-local addresses",
	"dns.go":            "the DNS server the operator names with --dns-resolver",
	"tlsserver/acme.go": "the ACME CA the operator names with --acme-directory",
}

// Every outbound call of the server goes through the guard: no code of the
// server (test support and the load tester aside) makes an HTTP client,
// transport or dialer of its own, so that a new caller (a webhook, an
// audit stream) cannot reach an internal address by forgetting it.
// A setting saved before the guard, which it refuses now, blocks no
// unrelated change: a client with such a back-channel URI is disabled, and
// a realm with such a mail provider renamed, without removing it first;
// changing the setting itself is checked as ever.
func TestOutboundSettingsKeptAreNotCheckedAgain(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{
		"clientId": "intranet", "redirectUris": []string{"https://intranet.example.test/cb"},
	}), http.StatusCreated)
	c := s.clientsTestStored("acme", "intranet")
	c.BackchannelLogoutURI = "http://10.0.0.5/logout"
	if err := s.store.UpdateClient(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	s.setRealmEmail("acme", func(r *store.Realm) {
		r.EmailProvider, r.EmailProviderConfig = "resend", providerConfig("resend", "http://10.0.0.6")
	})

	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme/clients/intranet", map[string]any{"enabled": false}),
		http.StatusOK)
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"displayName": "Acme"}), http.StatusOK)

	r := s.admin(http.MethodPatch, "/admin/realms/acme/clients/intranet",
		map[string]any{"backchannelLogoutUri": "http://10.0.0.7/logout"})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "backchannelLogoutUri")
}

func TestOutboundCallsUseTheGuard(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "apptest" || path == "loadtest") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if _, ok := outboundDialers[filepath.ToSlash(path)]; ok {
			return nil
		}
		if m := outboundClientMakers.Find(src); m != nil {
			t.Errorf("%s makes its own %s: outbound calls go through httpx.OutboundClient", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
