package bus

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// fakeSubscriber takes the types it is given and counts what it gets.
type fakeSubscriber struct {
	takes  []string
	err    error
	queued []*Event
	wakes  int
}

func (f *fakeSubscriber) Wants(_ context.Context, _ *store.Realm, t Type) bool {
	return Matches(f.takes, t)
}
func (f *fakeSubscriber) Queue(_ context.Context, _ *store.Store, e *Event) (bool, error) {
	if f.err != nil {
		return false, f.err
	}
	f.queued = append(f.queued, e)
	return true, nil
}
func (f *fakeSubscriber) Wake() { f.wakes++ }

// An event goes to the subscribers that take it, as one Event they share;
// the pending wake each once; a subscriber's error is the event's.
func TestQueue(t *testing.T) {
	ctx, realm := context.Background(), &store.Realm{ID: "r1", Name: "acme"}
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	users, all, none := &fakeSubscriber{takes: []string{"user.*"}}, &fakeSubscriber{takes: []string{"*"}}, &fakeSubscriber{}
	b := New(func() time.Time { return at })
	for _, s := range []Subscriber{users, all, none} {
		b.Subscribe(s)
	}
	if b.Wants(ctx, realm, LDAPSyncFinished) != true || New(nil).Wants(ctx, realm, UserCreated) {
		t.Fatal("Wants")
	}
	p, err := b.Queue(ctx, nil, realm, UserCreated, map[string]string{"userId": "u1"})
	if err != nil || len(p) != 2 || len(users.queued) != 1 || len(all.queued) != 1 || len(none.queued) != 0 {
		t.Fatalf("queued %v %v: %d %d %d", p, err, len(users.queued), len(all.queued), len(none.queued))
	}
	if users.queued[0] != all.queued[0] {
		t.Fatal("each subscriber made its own event")
	}
	p = append(p, p...)
	p.Wake()
	if users.wakes != 1 || all.wakes != 1 || none.wakes != 0 {
		t.Fatalf("wakes %d %d %d", users.wakes, all.wakes, none.wakes)
	}
	body, err := users.queued[0].JSON()
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal(body, &payload); err != nil || payload["type"] != "user.created" || payload["realm"] != "acme" ||
		payload["timestamp"] != "2026-05-01T09:00:00.000Z" || payload["data"].(map[string]any)["userId"] != "u1" || len(payload["id"].(string)) != 40 {
		t.Fatalf("payload %s", body)
	}
	if p, err := b.Queue(ctx, nil, realm, UserCreated, nil); err != nil || len(p) != 2 {
		t.Fatal(p, err)
	}
	broken := errors.New("disk full")
	all.err = broken
	if _, err := b.Queue(ctx, nil, realm, LDAPSyncFinished, nil); !errors.Is(err, broken) {
		t.Fatalf("a subscriber's error: %v", err)
	}
}

func TestOfLogin(t *testing.T) {
	for _, tc := range []struct {
		event      store.LoginEvent
		want       Type
		credential string
		source     string
	}{
		{store.LoginEvent{Type: store.EventLogin}, LoginSucceeded, "", ""},
		{store.LoginEvent{Type: store.EventLoginError, Error: "invalid_user_credentials"}, LoginFailed, "", ""},
		{store.LoginEvent{Type: store.EventRegister}, UserCreated, "", "registration"},
		{store.LoginEvent{Type: store.EventDeleteAccount}, UserDeleted, "", "account"},
		{store.LoginEvent{Type: store.EventUpdatePassword}, CredentialRotated, "password", ""},
		{store.LoginEvent{Type: store.EventResetPassword}, CredentialRotated, "password", ""},
		{store.LoginEvent{Type: store.EventUpdateTOTP}, CredentialAdded, "otp", ""},
		{store.LoginEvent{Type: store.EventRemoveTOTP}, CredentialRemoved, "otp", ""},
		{store.LoginEvent{Type: store.EventUpdateCredential, Details: map[string]string{"credential_type": "webauthn"}}, CredentialAdded, "webauthn", ""},
		{store.LoginEvent{Type: store.EventRemoveCredential}, CredentialRemoved, "webauthn", ""},
		{store.LoginEvent{Type: store.EventImpersonate}, ImpersonationStarted, "", ""},
		{store.LoginEvent{Type: store.EventCodeToToken}, AuthEvent, "", ""},
		{store.LoginEvent{Type: store.EventLogout}, AuthEvent, "", ""},
	} {
		got, d := OfLogin(&tc.event)
		if got != tc.want || d.Credential != tc.credential || d.Source != tc.source || d.Event != tc.event.Type || d.Error != tc.event.Error {
			t.Errorf("%s: %s %+v", tc.event.Type, got, d)
		}
	}
}

func TestOfAdmin(t *testing.T) {
	answer := map[string]any{"id": "c1", "type": "api_key", "prefix": "nhk_ab", "apiKey": "[redacted]"}
	for _, tc := range []struct {
		change Change
		want   Type
		check  map[string]any
	}{
		{Change{Operation: opCreate, Route: "users", Answer: map[string]any{"id": "u1"}}, UserCreated, map[string]any{"userId": "u1"}},
		{Change{Operation: opUpdate, Route: "users/{userId}", Vars: map[string]string{"userId": "u1"}}, UserUpdated, map[string]any{"userId": "u1"}},
		{Change{Operation: opDelete, Route: "users/{userId}", Vars: map[string]string{"userId": "u1"}}, UserDeleted, map[string]any{"userId": "u1"}},
		{Change{Operation: "ACTION", Route: "users/{userId}/reset-password", Vars: map[string]string{"userId": "u1"}}, CredentialRotated,
			map[string]any{"userId": "u1", "credential": "password"}},
		{Change{Operation: "ACTION", Route: "clients/{clientId}/regenerate-secret", Vars: map[string]string{"clientId": "web"}}, CredentialRotated,
			map[string]any{"clientId": "web", "credential": "client-secret"}},
		{Change{Operation: opCreate, Route: "nhi/{id}/credentials", Vars: map[string]string{"id": "n1"}, Answer: answer}, NHICredentialIssued,
			map[string]any{"identityId": "n1", "credentialId": "c1", "prefix": "nhk_ab", "apiKey": nil}},
		{Change{Operation: opCreate, Route: "service-accounts/{id}/api-keys", Vars: map[string]string{"id": "s1"}, Answer: answer}, NHICredentialIssued,
			map[string]any{"identityKind": "service-account", "identityId": "s1"}},
		{Change{Operation: opCreate, Route: "groups"}, "", nil},
		{Change{Operation: opUpdate, Route: "users/{userId}/groups/{groupId}"}, "", nil},
	} {
		got, data := OfAdmin(&tc.change)
		if got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.change.Operation, tc.change.Route, got, tc.want)
			continue
		}
		d, _ := data.(map[string]any)
		for k, v := range tc.check {
			if d[k] != v {
				t.Errorf("%s %s: %s = %v, want %v", tc.change.Operation, tc.change.Route, k, d[k], v)
			}
		}
	}
	if Route("/admin/realms/{realm}/users/{userId}") != "users/{userId}" {
		t.Fatal("Route")
	}
}
