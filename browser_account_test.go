package main

// Browser tests of the account pages under /realms/{realm}/account: the
// sign-in they send a browser through, the profile and password forms,
// the data export and the deletion of the account.

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"
)

// browserExport is the part of the account's data export the tests read.
type browserExport struct {
	Format  string `json:"format"`
	Realm   string `json:"realm"`
	Profile struct {
		ID        string `json:"id"`
		Username  string `json:"username"`
		Email     string `json:"email"`
		FirstName string `json:"firstName"`
	} `json:"profile"`
	Deletion struct {
		Scheduled bool  `json:"scheduled"`
		DeleteAt  int64 `json:"deleteAt"`
	} `json:"deletion"`
}

// TestBrowserAccount: a signed-out browser opening the account page is
// sent through the login page and lands on it; there the user edits the
// profile (a new email address is unverified until its mailed link is
// followed), changes the password (the current one is required), gets the
// data export, and schedules the account's deletion, cancels it and
// schedules it again.
func TestBrowserAccount(t *testing.T) {
	e := newBrowserEnv(t)
	aliceID := browserAcme(e)
	box := newBrowserMailbox(t)
	settings := box.realmSettings()
	settings["displayName"] = "Acme"
	e.putRealm("acme", settings)
	// An application that signs alice in with her password, to check
	// which password works and to read her account with her token.
	cliSecret := e.client("acme", map[string]any{"clientId": "cli", "name": "CLI", "grantTypes": []string{"password"}})
	const newPassword = "a fresh passphrase for alice"

	b := e.browser()
	account := e.issuer("acme") + "/account"
	if status := b.open("", account); status != http.StatusOK {
		t.Fatalf("account page signed out: status %d", status)
	}
	if h := b.heading(); h != "Sign in" || !strings.HasPrefix(b.location(), e.issuer("acme")+"/login?") {
		t.Fatalf("the account page signed out showed %q at %s, want the login page", h, b.location())
	}
	b.mustShow("Account console")
	b.signIn("account", "alice", browserPassword)
	if loc := b.location(); loc != account {
		t.Fatalf("after signing in the browser is at %s, want %s", loc, account)
	}
	if h := b.heading(); h != "Your account" {
		t.Fatalf("account page heading %q", h)
	}
	b.mustShow("Signed in as alice.")
	if got := b.value("Email"); got != "alice@example.test" {
		t.Errorf("email field %q", got)
	}
	if hint, _ := b.errorOf("Email"); hint != "This address is verified." {
		t.Errorf("email hint %q, want verified", hint)
	}

	// The profile: a new name and a new email address.
	b.fill("First name", "Alicia")
	b.fill("Last name", "Pleasance")
	b.fill("Email", "alicia@example.test")
	b.click("account-profile-saved", "Save profile")
	b.mustShow("Your profile was saved. We sent a link to your new email address")
	if hint, _ := b.errorOf("Email"); !strings.Contains(hint, "not verified yet") {
		t.Errorf("email hint after the change %q, want unverified", hint)
	}
	if got := b.value("First name"); got != "Alicia" {
		t.Errorf("first name after saving %q", got)
	}
	u := e.getUser("acme", aliceID)
	if u.FirstName != "Alicia" || u.LastName != "Pleasance" || u.Email != "alicia@example.test" || u.EmailVerified {
		t.Fatalf("stored after the profile change: %+v", u)
	}
	if m := box.next(); !strings.Contains(m.to, "alicia@example.test") {
		t.Fatalf("verification mail to %q, want the new address", m.to)
	} else {
		m.link(t, "/realms/acme/verify-email")
	}

	// The password: the current one is required, and a wrong one is
	// refused at its field.
	current := `document.getElementById(` + jsString(string(b.field("Current password"))) + `)`
	if !browserEval[bool](b, "required", current+`.required`) {
		t.Errorf("the current password is not a required field")
	}
	// Without the browser's own check, the server asks for it.
	b.do("skip validation", chromedp.Evaluate[chromedp.Void](current+`.form.noValidate = true`))
	b.fill("New password", newPassword)
	b.fill("Confirm new password", newPassword)
	if status := b.click("", "Change password"); status != http.StatusBadRequest {
		t.Fatalf("no current password: status %d, want 400", status)
	}
	if text, invalid := b.errorOf("Current password"); text != "Enter your current password." || !invalid {
		t.Errorf("missing current password error %q (invalid %v)", text, invalid)
	}
	b.fill("Current password", "not my password")
	b.fill("New password", newPassword)
	b.fill("Confirm new password", newPassword)
	if status := b.click("account-password-error", "Change password"); status != http.StatusBadRequest {
		t.Fatalf("wrong current password: status %d, want 400", status)
	}
	if text, invalid := b.errorOf("Current password"); text != "The current password is not correct." || !invalid {
		t.Errorf("current password error %q (invalid %v)", text, invalid)
	}
	for _, label := range []string{"Current password", "New password", "Confirm new password"} {
		if b.value(label) != "" {
			t.Errorf("%s came back in the form", label)
		}
	}
	b.fill("Current password", browserPassword)
	b.fill("New password", newPassword)
	b.fill("Confirm new password", newPassword)
	b.click("account-password-changed", "Change password")
	b.mustShow("Your password was changed.")
	rp := e.relyingParty("acme", "cli", cliSecret, "", "openid")
	_, err := rp.config.PasswordCredentialsToken(t.Context(), "alice", browserPassword)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("the old password after the change: %v, want invalid_grant", err)
	}
	tok, err := rp.config.PasswordCredentialsToken(t.Context(), "alice", newPassword)
	if err != nil {
		t.Fatalf("the new password after the change: %v", err)
	}

	// The data export, as the page's download link fetches it.
	href := browserEval[string](b, "export link", `[...document.querySelectorAll('a[download]')].map(a => a.getAttribute('href')).join(' ')`)
	if href != "/realms/acme/account/data-export" {
		t.Fatalf("download link %q", href)
	}
	got := b.fetch(href)
	if got.Status != http.StatusOK || !strings.HasPrefix(got.Type, "application/json") || !strings.Contains(got.Disposition, "attachment") {
		t.Fatalf("data export: status %d, type %q, disposition %q", got.Status, got.Type, got.Disposition)
	}
	var export browserExport
	if err := json.Unmarshal([]byte(got.Body), &export); err != nil {
		t.Fatalf("data export: %v\n%s", err, got.Body)
	}
	if export.Realm != "acme" || export.Profile.ID != aliceID || export.Profile.Username != "alice" ||
		export.Profile.Email != "alicia@example.test" || export.Profile.FirstName != "Alicia" {
		t.Errorf("data export %+v", export)
	}
	for _, secret := range []string{"$argon2", "passwordHash", "password_hash", newPassword} {
		if strings.Contains(got.Body, secret) {
			t.Errorf("the data export holds %q", secret)
		}
	}

	// Deletion: scheduled with the password, shown with its date, cancelled.
	b.click("account-delete", "Delete your account")
	if h := b.heading(); h != "Delete your account" {
		t.Fatalf("delete page heading %q", h)
	}
	b.fill("Current password", newPassword)
	b.click("account-delete-scheduled", "Delete my account")
	b.mustShow("Your account will be deleted on")
	var acct browserAccountJSON
	rp.accountAPI(e, "acme", "", tok, &acct)
	if !acct.Deletion.Scheduled {
		t.Fatalf("after scheduling, the account API says %+v", acct.Deletion)
	}
	shown := browserEval[string](b, "deletion date", `document.querySelector('main time').getAttribute('datetime')`)
	if want := time.UnixMilli(acct.Deletion.DeleteAt).UTC().Format(time.RFC3339); shown != want {
		t.Errorf("the page shows the deletion at %s, the account API at %s", shown, want)
	}
	b.click("", "Keep my account")
	b.mustShow("The deletion was cancelled: your account stays.")
	var deletion struct {
		Scheduled bool `json:"scheduled"`
	}
	rp.accountAPI(e, "acme", "/delete-account", tok, &deletion)
	if deletion.Scheduled {
		t.Fatalf("after cancelling, a deletion is still scheduled")
	}
	if got := b.fetch("/realms/acme/account/data-export"); !strings.Contains(got.Body, `"deletion":{"scheduled":false}`) {
		t.Errorf("after cancelling, the export's deletion is not empty: %s", got.Body)
	}

	// Scheduled again: the account stays until the grace window ends, and
	// its page says when it goes.
	b.fill("Current password", newPassword)
	b.click("", "Delete my account")
	rp.accountAPI(e, "acme", "/delete-account", tok, &deletion)
	if !deletion.Scheduled {
		t.Fatalf("scheduling again did not schedule")
	}
	if u := e.getUser("acme", aliceID); u.Username != "alice" {
		t.Fatalf("the account is gone before its time: %+v", u)
	}
	b.click("", "Back to your account")
	b.mustShow("Your account is scheduled for deletion on")
}
