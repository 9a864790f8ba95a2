package identity

import (
	"errors"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// mustFieldError checks err is an *apperr.Error of status on field.
func mustFieldError(t *testing.T, what string, err error, status int, field string) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Status != status || ae.Field != field {
		t.Fatalf("%s: %v, want %d on %q", what, err, status, field)
	}
}

func TestValidateUser(t *testing.T) {
	for _, c := range []struct {
		name  string
		user  store.User
		field string // "" for valid
		want  store.User
	}{
		{"normalized", store.User{Username: "  Alice.Liddell ", Email: "Alice@Example.TEST"}, "",
			store.User{Username: "alice.liddell", Email: "alice@example.test"}},
		{"names in any script", store.User{Username: "jürgen", FirstName: "Jürgen", LastName: "محمد"}, "",
			store.User{Username: "jürgen", FirstName: "Jürgen", LastName: "محمد"}},
		{"a space", store.User{Username: "alice liddell"}, "username", store.User{}},
		{"a bidi override", store.User{Username: "alice\u202e"}, "username", store.User{}},
		{"a control character", store.User{Username: "alice\x00"}, "username", store.User{}},
		{"markup", store.User{Username: "<alice>"}, "username", store.User{}},
		{"too short", store.User{Username: "a"}, "username", store.User{}},
		{"too long", store.User{Username: strings.Repeat("a", maxUsernameLength+1)}, "username", store.User{}},
		{"not an email", store.User{Username: "alice", Email: "alice"}, "email", store.User{}},
		{"an email with a name", store.User{Username: "alice", Email: "Alice <alice@example.test>"}, "email", store.User{}},
		{"markup in a name", store.User{Username: "alice", FirstName: "<b>Alice</b>"}, "firstName", store.User{}},
		{"a bidi override in a name", store.User{Username: "alice", LastName: "Liddell\u202e"}, "lastName", store.User{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := c.user
			err := ValidateUser(&u)
			if c.field != "" {
				mustFieldError(t, c.name, err, 400, c.field)
				return
			}
			if err != nil || u != c.want {
				t.Fatalf("%+v %v, want %+v", u, err, c.want)
			}
		})
	}
}

// CreateUser and UpdateUser answer a username or email another user of
// the realm holds with a 409 naming the field, on the pool and in a
// transaction alike; the failed write leaves nothing behind.
func TestUserConflicts(t *testing.T) {
	e := newTestEnv(t)
	if _, err := e.core.CreateUser(t.Context(), e.store, e.realm, NewUser{Username: "alice", Email: "alice@example.test"}); err != nil {
		t.Fatal(err)
	}
	bob, err := e.core.CreateUser(t.Context(), e.store, e.realm, NewUser{Username: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		user  NewUser
		field string
	}{
		{"username", NewUser{Username: "Alice"}, "username"},
		{"email", NewUser{Username: "alice2", Email: "ALICE@example.test"}, "email"},
	} {
		_, err := e.core.CreateUser(t.Context(), e.store, e.realm, c.user)
		mustFieldError(t, "create, "+c.name, err, 409, c.field)
		err = e.store.Tx(t.Context(), func(tx *store.Store) error {
			_, err := e.core.CreateUser(t.Context(), tx, e.realm, c.user)
			return err
		})
		mustFieldError(t, "create in a transaction, "+c.name, err, 409, c.field)
		changed := *bob
		changed.Username, changed.Email = c.user.Username, c.user.Email
		_, err = e.core.UpdateUser(t.Context(), e.store, &changed)
		mustFieldError(t, "update, "+c.name, err, 409, c.field)
	}
	if users, _, err := e.store.ListUsers(t.Context(), e.realm.ID, store.UserFilter{Limit: 10}); err != nil || len(users) != 2 {
		t.Fatalf("users %v %v, want alice and bob only", users, err)
	}
}

// A password given to CreateUser meets the realm's policy and is stored
// hashed, changed when the user was created; one made beforehand is
// taken as it is.
func TestCreateUserPassword(t *testing.T) {
	e := newTestEnv(t)
	e.realm.PasswordRequireDigits = true
	weak := "no digits here"
	_, err := e.core.CreateUser(t.Context(), e.store, e.realm, NewUser{Username: "alice", Password: &weak})
	var refused *PasswordRefused
	if !errors.As(err, &refused) || len(refused.Unmet()) != 1 || refused.Unmet()[0] != RuleDigit {
		t.Fatalf("a weak password: %v", err)
	}
	mustFieldError(t, "a weak password", err, 400, "password")
	username := "alice-1234"
	_, err = e.core.CreateUser(t.Context(), e.store, e.realm, NewUser{Username: "Alice-1234", Password: &username})
	if !errors.As(err, &refused) || refused.Unmet()[0] != RuleNotUsername {
		t.Fatalf("the username as the password: %v", err)
	}
	good := "good password 1"
	u, err := e.core.CreateUser(t.Context(), e.store, e.realm, NewUser{Username: "alice", Password: &good})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.core.VerifyPassword(t.Context(), u.PasswordHash, good); !ok || err != nil || u.PasswordChangedAt != u.CreatedAt {
		t.Fatalf("stored %+v: %v %v", u, ok, err)
	}
	imported, err := e.core.CreateUser(t.Context(), e.store, e.realm, NewUser{Username: "bob", PasswordHash: u.PasswordHash})
	if err != nil || imported.PasswordHash != u.PasswordHash || imported.PasswordChangedAt != 0 {
		t.Fatalf("an imported hash: %+v %v", imported, err)
	}
}

// The service-account user follows the client's client_credentials
// grant; a username taken by a person is a conflict on the clientId, and
// the service account cannot be deleted as a person is.
func TestSyncServiceAccount(t *testing.T) {
	e := newTestEnv(t)
	client := &store.Client{ID: "7d3c0a4e-0000-4000-8000-000000000002", RealmID: e.realm.ID, ClientID: "Reports",
		ClientType: ClientConfidential, GrantTypes: []string{GrantClientCredentials}, Enabled: true}
	sync := func() error {
		return e.store.Tx(t.Context(), func(tx *store.Store) error {
			if _, err := tx.GetClient(t.Context(), e.realm.ID, client.ID); errors.Is(err, store.ErrNotFound) {
				if err := tx.CreateClient(t.Context(), client); err != nil {
					return err
				}
			} else if err := tx.UpdateClient(t.Context(), client); err != nil {
				return err
			}
			return e.core.SyncServiceAccount(t.Context(), tx, e.realm, client)
		})
	}
	squatter := e.user("service-account-reports", "")
	mustFieldError(t, "a taken username", sync(), 409, "clientId")
	if err := e.core.DeleteUser(t.Context(), e.store, e.realm, squatter); err != nil {
		t.Fatal(err)
	}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	sa, err := e.store.GetServiceAccountUser(t.Context(), client.ID)
	if err != nil || sa.Username != "service-account-reports" || !sa.Enabled || sa.PasswordHash != "" {
		t.Fatalf("service account %+v %v", sa, err)
	}
	if err := e.core.DeleteUser(t.Context(), e.store, e.realm, sa); err == nil {
		t.Fatal("a service account deleted as a person")
	}
	client.GrantTypes = []string{GrantAuthorizationCode}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.GetServiceAccountUser(t.Context(), client.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the service account outlived the grant: %v", err)
	}
}
