package app

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// accountExportFixture gives alice something of everything the export
// covers, and returns the secrets that must stay out of it.
func accountExportFixture(t *testing.T, e *accountEnv) []string {
	t.Helper()
	ctx := t.Context()
	post := func(path string, body any, status int) map[string]any {
		r := e.admin(http.MethodPost, "/admin/realms/acme"+path, body)
		mustStatus(t, r, status)
		var m map[string]any
		_ = json.Unmarshal(r.Body, &m) // role mappings answer with an array
		return m
	}
	staff := post("/groups", map[string]any{"name": "staff"}, http.StatusCreated)
	ops := post("/groups/"+staff["id"].(string)+"/children", map[string]any{"name": "ops"}, http.StatusCreated)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/groups/"+ops["id"].(string), nil), http.StatusOK)
	post("/roles", map[string]any{"name": "reader"}, http.StatusCreated)
	post("/clients/cli/roles", map[string]any{"name": "viewer"}, http.StatusCreated)
	post("/users/"+e.aliceID+"/role-mappings/realm", map[string]any{"roleNames": []string{"reader"}}, http.StatusOK)
	post("/users/"+e.aliceID+"/role-mappings/clients/cli", map[string]any{"roleNames": []string{"viewer"}}, http.StatusOK)
	realmID := mustRealmID(t, e.testServer, "acme")
	cli, err := e.store.GetClientByClientID(ctx, realmID, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.GrantConsent(ctx, e.aliceID, cli.ID, []string{"openid", "email"}, e.clock.now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	const link = "a-mailed-link-token-that-must-not-leak"
	if err := e.store.CreateActionToken(ctx, &store.ActionToken{Hash: store.HashToken(link), RealmID: realmID, UserID: e.aliceID,
		Kind: store.ActionResetPassword, Email: "alice@example.test", CreatedAt: 1, ExpiresAt: e.clock.now().UnixMilli() + 1}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.EnqueueEmail(ctx, &store.OutboxEmail{ID: "m1", RealmID: realmID, Recipient: "alice@example.test",
		Subject: "Reset your password", HTMLBody: "<a href=x?token=" + link + ">", TextBody: "x?token=" + link,
		NextAttemptAt: 1, CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	u, err := e.store.GetUser(ctx, realmID, e.aliceID)
	if err != nil {
		t.Fatal(err)
	}
	hash := store.HashToken(link)
	return []string{u.PasswordHash, "argon2", link, hex.EncodeToString(hash), base64.RawURLEncoding.EncodeToString(hash),
		base64.StdEncoding.EncodeToString(hash), codeflowPassword}
}

func TestAccountExport(t *testing.T) {
	e := newAccountEnv(t)
	secrets := accountExportFixture(t, e)
	if err := e.store.AcceptTerms(t.Context(), e.realmID(), e.aliceID, "2026-01", 1_700_000_000_000); err != nil {
		t.Fatal(err)
	}
	tok := e.token("alice", codeflowPassword)
	secrets = append(secrets, tok.AccessToken, tok.RefreshToken, tok.Extra("id_token").(string))

	r := e.api(http.MethodGet, "/data-export", tok.AccessToken, nil)
	mustStatus(t, r, http.StatusOK)
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, ".json") {
		t.Fatalf("Content-Disposition %q", cd)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(string(r.Body), s) {
			t.Fatalf("the export holds a secret %q", s)
		}
	}
	var doc struct {
		Format      string
		Realm       string
		Status      string
		Profile     map[string]any
		Credentials []map[string]any
		Groups      []map[string]any
		RoleMapping map[string]any `json:"roleMappings"`
		Sessions    []map[string]any
		Consents    []map[string]any
		ConsentLog  []map[string]any `json:"consentHistory"`
		Events      []map[string]any
		Links       []map[string]any `json:"emailLinks"`
		Emails      []map[string]any
		Terms       []map[string]any `json:"termsAccepted"`
		Deletion    map[string]any
	}
	r.decode(t, &doc)
	if doc.Format != accountExportFormat || doc.Realm != "acme" || doc.Status != "active" ||
		doc.Profile["username"] != "alice" || doc.Profile["email"] != "alice@example.test" {
		t.Fatalf("export head %+v", doc)
	}
	if len(doc.Credentials) != 1 || doc.Credentials[0]["type"] != "password" || doc.Credentials[0]["createdDate"] == nil ||
		len(doc.Credentials[0]) != 2 {
		t.Fatalf("credentials %v, want the password's type and date only", doc.Credentials)
	}
	if len(doc.Groups) != 1 || doc.Groups[0]["path"] != "/staff/ops" {
		t.Fatalf("groups %v", doc.Groups)
	}
	wantRoles := map[string]any{"realm": []any{"reader"}, "client": map[string]any{"cli": []any{"viewer"}}}
	if !reflect.DeepEqual(doc.RoleMapping, wantRoles) {
		t.Fatalf("role mappings %v, want %v", doc.RoleMapping, wantRoles)
	}
	if len(doc.Sessions) < 2 { // the SSO session of the grant and cli's under it
		t.Fatalf("sessions %v", doc.Sessions)
	}
	if len(doc.Consents) != 1 || doc.Consents[0]["clientId"] != "cli" || len(doc.ConsentLog) != 1 {
		t.Fatalf("consents %v, history %v", doc.Consents, doc.ConsentLog)
	}
	if len(doc.Events) == 0 || doc.Events[0]["userId"] != e.aliceID {
		t.Fatalf("events %v", doc.Events)
	}
	if len(doc.Links) != 1 || doc.Links[0]["kind"] != store.ActionResetPassword {
		t.Fatalf("mailed links %v", doc.Links)
	}
	if len(doc.Emails) != 1 || doc.Emails[0]["subject"] != "Reset your password" || len(doc.Emails[0]) != 2 {
		t.Fatalf("emails %v, want the subject and date only", doc.Emails)
	}
	if len(doc.Terms) != 1 || doc.Terms[0]["version"] != "2026-01" || doc.Terms[0]["acceptedAt"] != float64(1_700_000_000_000) {
		t.Fatalf("terms accepted %v", doc.Terms)
	}
	if doc.Deletion["scheduled"] != false {
		t.Fatalf("deletion %v", doc.Deletion)
	}
	// Nobody else's data: bob's export has none of alice's.
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	bob := e.api(http.MethodGet, "/data-export", e.token("bob", codeflowPassword).AccessToken, nil)
	mustStatus(t, bob, http.StatusOK)
	for _, s := range []string{e.aliceID, "alice@example.test", "staff", "reader", "Reset your password", "2026-01"} {
		if strings.Contains(string(bob.Body), s) {
			t.Fatalf("bob's export holds alice's %q", s)
		}
	}
}
