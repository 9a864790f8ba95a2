package main

// The console's pages of one identity provider, SAML service provider,
// LDAP directory, organization and non-human identity in a real browser
// (the directory a real slapd): a provider from a preset with its mark, a
// service provider from an uploaded metadata file, a directory synced with
// its count, an organization's member and domain record, an identity's
// credential shown once. axe-core checks every page.

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/idenplane/idenplane/app/apptest"
)

func TestBrowserConsoleFederationPages(t *testing.T) {
	e := newBrowserEnv(t)
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "pw")+apptest.Person("cy", "Cy", "Fox", "cy@example.org", "pw"))
	e.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "ada", "email": "ada@example.test",
		"password": browserPassword}, http.StatusCreated, nil)
	e.realm("corp", nil)
	b := e.browser()
	browserConsoleSignIn(e, b)
	realm := e.srv.base + "/console/realms/corp"

	// An identity provider from a preset: its mark on its page.
	b.open("console-idp-new", realm+"/identity-providers/new")
	if alt := browserEval[string](b, "the preset's mark", `document.querySelector('label[for="idp-providerType-github"] img').alt`); alt != "GitHub logo" {
		t.Errorf("the GitHub preset's mark: alt %q", alt)
	}
	b.do("choose GitHub", chromedp.Click(chromedp.CSS("#idp-providerType-github")))
	b.fill("Alias", "gh")
	b.fill("Client ID", "app-1")
	b.fill("Client secret", "s3cret-app")
	b.click("console-idp-page", "Create")
	b.mustShow("Created.", "Identity provider gh")
	if alt := browserEval[string](b, "the provider's mark", `document.querySelector('p.preset img').alt`); alt != "GitHub" {
		t.Errorf("the provider's mark: alt %q", alt)
	}

	// A service provider from a metadata file, uploaded.
	metadata, entityID, acs := browserSPMetadata(e, "corp")
	file := filepath.Join(t.TempDir(), "wiki-metadata.xml")
	if err := os.WriteFile(file, []byte(metadata), 0o600); err != nil {
		t.Fatal(err)
	}
	b.open("console-sp-new", realm+"/saml-service-providers/new")
	b.do("upload the metadata", chromedp.SetUploadFiles(chromedp.CSS("#sp-metadataFile"), []string{file}))
	b.fill("Name", "Wiki")
	b.click("console-sp-page", "Create")
	b.mustShow("Created.", entityID, "Wiki", acs)

	// A directory synced from its page: the entries read, counted.
	var dir struct {
		ID string `json:"id"`
	}
	e.admin(http.MethodPost, "/admin/realms/corp/user-federation", map[string]any{"name": "people", "providerType": "ldap",
		"connectionUrl": d.URL, "usersDn": d.PeopleDN, "bindDn": d.AdminDN, "bindCredential": d.AdminPassword},
		http.StatusCreated, &dir)
	b.open("console-ldap-page", realm+"/user-federation/"+dir.ID)
	b.mustShow("Never synced yet.")
	if live := browserEval[string](b, "the live count's address",
		`document.querySelector('[data-sync-status]').getAttribute('data-sync-status')`); !strings.HasSuffix(live, "/sync-status") {
		t.Errorf("the sync's live count polls %q", live)
	}
	b.click("console-ldap-synced", "Sync now")
	if read, created := b.stat("Entries read"), b.stat("Users created"); read != "3" || created != "3" {
		t.Errorf("the sync: %q read, %q created; page:\n%s", read, created, b.text())
	}
	b.mustShow("The sync ran; its result is below.", "Last sync, started")

	// An organization: a member of the directory's people, a domain and
	// the record that verifies it.
	e.admin(http.MethodPost, "/admin/realms/corp/organizations", map[string]any{"slug": "acme", "name": "Acme"},
		http.StatusCreated, nil)
	b.open("console-org-page", realm+"/organizations/acme")
	b.fill("Username", "nobody")
	if status := b.click("", "Add the member"); status != http.StatusUnprocessableEntity {
		t.Errorf("an unknown username: %d", status)
	}
	if msg, invalid := b.errorOf("Username"); !invalid || !strings.Contains(msg, "No user of the realm") {
		t.Errorf("the unknown username's refusal: %q %v", msg, invalid)
	}
	b.fill("Username", "ann")
	b.click("console-org-member", "Add the member")
	b.mustShow("The member was added.", "ann@example.org")
	b.fill("Domain", "acme.example")
	b.click("console-org-domain", "Add the domain")
	b.click("console-org-record", "Show the record to publish")
	b.mustShow("_idenplane-challenge.acme.example", "TXT", "idenplane-verification=")

	// A non-human identity's credential, shown once.
	var bot struct {
		ID string `json:"id"`
	}
	e.admin(http.MethodPost, "/admin/realms/corp/nhi", map[string]any{"name": "deployer", "kind": "bot"}, http.StatusCreated, &bot)
	b.open("console-nhi-page", realm+"/nhi/"+bot.ID)
	b.fill("Name", "ci")
	b.click("console-nhi-issued", "Issue a credential")
	b.mustShow("The credential was issued.", "Copy it now: it is shown this once.")
	if secret := browserEval[string](b, "the secret", `document.getElementById('credentials-once').value`); secret == "" {
		t.Error("no secret shown")
	}
}
