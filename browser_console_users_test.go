package main

// A user's and an administrator's pages of the console in a real browser:
// a custom attribute refused at its field and then saved, the required
// actions set, the reset mail refused while the realm cannot send mail,
// an authenticator app the user set up on their own removed after a
// confirmation; an administrator's permissions refused and then changed
// with a realm, a new enrolment link shown once, and their deletion.
// axe-core checks every page on the way.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestBrowserConsoleUsers(t *testing.T) {
	e := newBrowserEnv(t)
	e.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "ada", "email": "ada@example.test",
		"password": browserPassword}, http.StatusCreated, nil)
	var grace struct {
		ID string `json:"id"`
	}
	e.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "grace", "email": "grace@example.test",
		"password": browserPassword, "permissions": []string{"realm:read", "users:read"}}, http.StatusCreated, &grace)
	e.realm("shop", map[string]any{"mfaRequired": true})
	e.admin(http.MethodPost, "/admin/realms/shop/custom-attributes", map[string]any{"name": "department",
		"displayName": "Department", "type": "string", "validation": map[string]any{"pattern": "^[A-Z][a-z]+$"}},
		http.StatusCreated, nil)
	bob := e.user("shop", map[string]any{"username": "bob", "email": "bob@example.test", "emailVerified": true,
		"password": browserPassword})

	// bob signs in to his account; the realm asks for a second factor,
	// and he sets up an authenticator app.
	ub := e.browser()
	ub.open("", e.issuer("shop")+"/account")
	ub.signIn("", "bob", browserPassword)
	if h := ub.heading(); h != "Set up two-factor authentication" {
		t.Fatalf("bob after the password: %q; page:\n%s", h, ub.text())
	}
	key := browserEval[string](ub, "key", `(() => {
		const dt = [...document.querySelectorAll('dt')].find(d => d.textContent.trim() === 'Key');
		return dt ? dt.nextElementSibling.textContent : '';
	})()`)
	ub.fill("Authentication code", browserTOTPCode(t, strings.ReplaceAll(strings.TrimSpace(key), " ", ""), time.Now()))
	ub.click("", "Confirm")

	b := e.browser()
	browserConsoleSignIn(e, b)
	page := e.srv.base + "/console/realms/shop/users/" + bob
	b.open("console-user-more", page)

	// An attribute: the schema's pattern refuses a value at its field.
	b.fill("Value", "sales")
	if status := b.submit("console-user-attribute-error", "Value"); status != http.StatusUnprocessableEntity {
		t.Fatalf("a value against the pattern: %d", status)
	}
	if msg, invalid := b.errorOf("Value"); !strings.Contains(msg, `"sales" does not match`) || strings.Contains(msg, "attributes.") || !invalid {
		t.Fatalf("the value's refusal is not at its field: %q %v", msg, invalid)
	}
	b.fill("Value", "Sales")
	b.submit("console-user-attribute", "Value")
	b.mustShow("The attribute is saved.")
	if v := b.value("Department"); v != "Sales" {
		t.Fatalf("the attribute shown after saving: %q", v)
	}

	// The required actions.
	b.check("Update the password (UPDATE_PASSWORD)")
	b.submit("", "Update the password (UPDATE_PASSWORD)")
	b.mustShow("Changed: Must change the password at next sign-in")

	// The reset mail, refused: the realm has no way to send mail.
	if status := b.click("console-user-reset-mail-error", "Send the reset mail"); status != http.StatusUnprocessableEntity {
		t.Fatalf("the reset mail without a mail server: %d", status)
	}
	if alert := browserEval[string](b, "alert", `[...document.querySelectorAll('[role=alert]')].map(a => a.textContent).join(' ')`); alert == "" {
		t.Fatal("the reset mail's refusal is not shown")
	}

	// bob's authenticator app, removed after a confirmation.
	b.mustShow("Authenticator app")
	b.click("console-user-totp-confirm", "Remove the authenticator app")
	b.mustShow("Remove the authenticator app of bob?")
	b.click("", "Remove the authenticator app")
	b.mustShow("The authenticator app is removed")
	var mfa struct {
		TOTP *struct{} `json:"totp"`
	}
	e.admin(http.MethodGet, "/admin/realms/shop/users/"+bob+"/mfa/status", nil, http.StatusOK, &mfa)
	if mfa.TOTP != nil {
		t.Fatal("bob's authenticator app is still there")
	}
	// The other confirmations, and their way back.
	b.open("console-user-unlink", page+"/identities/corp/unlink")
	b.mustShow("Unlink the account of bob at corp?")
	b.click("", "Cancel")
	b.open("console-user-passkey", page+"/passkeys/some-key/remove")
	b.click("", "Cancel")

	// An administrator: an unknown permission refused at its field, then
	// a grant confined to the realm.
	b.open("", e.srv.base+"/console/accounts")
	b.click("console-account-page", "grace")
	b.fill("Permissions", "realm:read\nno:such")
	if status := b.submit("console-account-error", "Permissions"); status != http.StatusUnprocessableEntity {
		t.Fatalf("an unknown permission: %d", status)
	}
	if msg, invalid := b.errorOf("Permissions"); !strings.Contains(msg, "no:such") || !invalid {
		t.Fatalf("the permission's refusal is not at its field: %q %v", msg, invalid)
	}
	b.fill("Permissions", "realm:read\nusers:read\nusers:write")
	b.do("choose the realm", chromedp.SetValue(b.field("Realm"), "shop"))
	b.submit("console-account", "Permissions")
	b.mustShow("Changed: Permissions", "Changed: Realm")
	var stored struct {
		Permissions []string `json:"permissions"`
		Realm       string   `json:"realm"`
	}
	e.admin(http.MethodGet, "/admin/accounts/"+grace.ID, nil, http.StatusOK, &stored)
	if len(stored.Permissions) != 3 || stored.Realm != "shop" {
		t.Fatalf("grace as stored: %+v", stored)
	}

	// A new enrolment link, shown once after a confirmation.
	b.click("console-account-enrolment", "Make a new enrolment link")
	b.click("console-account-enrolment-link", "Make a new enrolment link")
	if link := b.value("Enrolment link"); !strings.Contains(link, "/realms/idenplane-admin/reset-password?token=") {
		t.Fatalf("the enrolment link shown: %q", link)
	}
	b.click("", "Continue to the client")

	// And grace deleted, after a confirmation.
	b.click("console-account-delete", "Delete the administrator")
	b.mustShow("Delete the administrator grace?")
	b.click("", "Delete the administrator")
	b.mustShow("The administrator is deleted.")
	e.admin(http.MethodGet, "/admin/accounts/"+grace.ID, nil, http.StatusNotFound, nil)
}
