package nhi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// usesOf is the credential-use records of the identity id as the store
// holds them: read past the API, which writes the queued uses first.
func usesOf(t *testing.T, e *tokenEnv, id string) int {
	t.Helper()
	realm, err := e.s.Store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.s.Store.ListNHIAudit(t.Context(), realm.ID, store.NHIAuditFilter{NHIID: id}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range list {
		if a.Action == "CREDENTIAL_USE" {
			n++
		}
	}
	return n
}

// The uses of a credential are written behind the requests, with no
// reader asking: a token's use reaches the store on its own.
func TestUsesWrittenBehind(t *testing.T) {
	e := newTokenEnv(t)
	secret := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "client_secret"}).Secret
	e.mustToken(t, "billing-worker", secret)
	deadline := time.Now().Add(30 * time.Second)
	for usesOf(t, e, e.n.ID) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the use of the credential never reached the store")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A use queued for an identity deleted meanwhile does not lose the
// others' uses queued with it.
func TestUsesOfADeletedIdentity(t *testing.T) {
	e := newTokenEnv(t)
	secret := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "client_secret"}).Secret
	gone := createIdentity(t, e.s, map[string]any{"kind": "workload", "name": "gone-worker"})
	goneSecret := issueCredential(t, e.s, gone.ID, map[string]any{"type": "client_secret"}).Secret
	e.mustToken(t, "gone-worker", goneSecret)
	e.mustToken(t, "billing-worker", secret)
	realm, err := e.s.Store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	// Past the API, which would write the queue first.
	stored, err := e.s.Store.GetNHI(t.Context(), realm.ID, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.s.Store.DeleteClient(t.Context(), realm.ID, stored.ClientID); err != nil {
		t.Fatal(err)
	}
	var uses []auditJSON
	for _, a := range auditLog(t, e.s, "?identityId="+e.n.ID) {
		if a.Action == "CREDENTIAL_USE" {
			uses = append(uses, a)
		}
	}
	if len(uses) != 1 {
		t.Fatalf("uses of the identity left: %v", uses)
	}
	r := e.s.Admin(http.MethodGet, nhiPath+"/"+gone.ID, nil)
	if r.Status != http.StatusNotFound {
		t.Fatalf("the deleted identity: %d", r.Status)
	}
}
