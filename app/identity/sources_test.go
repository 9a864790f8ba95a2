package identity

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// fakeDirectory is an external directory that knows one login: its own
// name for a user of the realm, and that user's password there. It
// counts the checks it is asked for.
type fakeDirectory struct {
	login, password string
	user            *store.User
	asked           int
}

func (d *fakeDirectory) CheckPassword(_ context.Context, at PasswordAttempt) (Answer, error) {
	d.asked++
	switch {
	case at.Login != d.login:
		return Answer{Verdict: NotMine}, nil
	case at.Password != d.password:
		return Answer{Verdict: WrongPassword, User: d.user}, nil
	}
	return Answer{Verdict: RightPassword, User: d.user}, nil
}

// newDirectoryEnv is a core whose sources are the local store, then a
// fake directory that knows carol (a user of the realm without a password
// of her own) as "carol.directory". tune adjusts the core's dependencies.
func newDirectoryEnv(t *testing.T, tune ...func(*Deps)) (*testEnv, *fakeDirectory) {
	t.Helper()
	dir := &fakeDirectory{login: "carol.directory", password: "directory password"}
	e := newTestEnv(t, append([]func(*Deps){func(d *Deps) { d.Sources = []PasswordSource{dir} }}, tune...)...)
	dir.user = e.user("carol", "")
	return e, dir
}

const testIP = "192.0.2.1"

// The local store answers first; the directory is asked about what the
// store does not know, and its answers decide as the store's do.
func TestCredentialSourcesOrder(t *testing.T) {
	e, dir := newDirectoryEnv(t)
	alice := e.user("alice", "alice password")
	for _, c := range []struct {
		name, login, password string
		want                  *store.User // nil: refused as a wrong password
		asked                 int         // checks the directory answers
	}{
		{"the store's user, right password", "alice", "alice password", alice, 0},
		{"the store's user, wrong password", "alice", "another password", nil, 0},
		// The store knows carol: she has no password there, so her
		// directory password is no password of hers under that name.
		{"the store's user without a password", "carol", "directory password", nil, 0},
		{"the directory's login, right password", "carol.directory", "directory password", dir.user, 1},
		{"the directory's login, wrong password", "carol.directory", "wrong password", nil, 1},
		{"nobody's login", "nobody", "a guess", nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir.asked = 0
			user, err := e.core.CheckCredentials(t.Context(), e.realm, c.login, c.password, testIP)
			switch {
			case c.want != nil && (err != nil || user == nil || user.ID != c.want.ID):
				t.Fatalf("user %v, error %v; want %s", user, err, c.want.Username)
			case c.want == nil && !errors.Is(err, ErrBadCredentials):
				t.Fatalf("user %v, error %v; want ErrBadCredentials", user, err)
			case dir.asked != c.asked:
				t.Fatalf("the directory was asked %d times, want %d", dir.asked, c.asked)
			}
		})
	}
	// A signed-in user's confirmation asks the sources as a sign-in does.
	if err := e.core.CheckUserPassword(t.Context(), e.realm, alice, "alice password", testIP); err != nil {
		t.Fatalf("alice's confirmation: %v", err)
	}
}

// The directory's wrong answers count toward the lockout of the user it
// names; once locked, its right answer is refused as a wrong password,
// with the lockout's reason; an admin's unlock lets it through again.
func TestCredentialSourcesBruteForce(t *testing.T) {
	e, dir := newDirectoryEnv(t)
	carol := dir.user
	for i := range e.realm.MaxLoginFailures {
		if _, err := e.core.CheckCredentials(t.Context(), e.realm, "carol.directory", fmt.Sprintf("guess %d", i), testIP); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("wrong password %d: %v", i, err)
		}
	}
	if f := e.failures(carol); f.Failures != e.realm.MaxLoginFailures || f.LockedUntil == 0 {
		t.Fatalf("carol's record %+v, want %d failures and a lockout", f, e.realm.MaxLoginFailures)
	}
	if len(e.events) != 1 || e.events[0].Error != "user_temporarily_disabled" || e.events[0].UserID != carol.ID {
		t.Fatalf("events %+v, want the lockout's", e.events)
	}
	_, err := e.core.CheckCredentials(t.Context(), e.realm, "carol.directory", "directory password", testIP)
	if id, locked := LockedOut(err); !locked || id != carol.ID || !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("locked carol's right password: %v", err)
	}
	if err := e.store.ClearLoginFailures(t.Context(), e.realm.ID, carol.ID); err != nil {
		t.Fatal(err)
	}
	if user, err := e.core.CheckCredentials(t.Context(), e.realm, "carol.directory", "directory password", testIP); err != nil || user.ID != carol.ID {
		t.Fatalf("after the unlock: %v %v", user, err)
	}
}

// The flood guard holds around every source: the directory's logins have
// their own per-account limit, checked before the directory is asked;
// from a guarded address only the directory's right password passes.
func TestCredentialSourcesFloodGuard(t *testing.T) {
	e, dir := newDirectoryEnv(t)
	e.realm.BruteForceEnabled = false // what is seen is the flood guard
	for i := range LoginLimitPerUser {
		if _, err := e.core.CheckCredentials(t.Context(), e.realm, "carol.directory", fmt.Sprintf("guess %d", i), testIP); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("wrong password %d: %v", i, err)
		}
	}
	dir.asked = 0
	var throttled *ThrottledError
	if _, err := e.core.CheckCredentials(t.Context(), e.realm, "carol.directory", "directory password", "192.0.2.2"); !errors.As(err, &throttled) {
		t.Fatalf("past the account's limit: %v, want a *ThrottledError", err)
	}
	if dir.asked != 0 {
		t.Fatalf("the directory was asked %d times past the account's limit", dir.asked)
	}

	// Another address guesses invented names until it is guarded.
	const guesser = "198.51.100.7"
	f, _ := newDirectoryEnv(t)
	for i := range LoginLimitPerIP {
		if _, err := f.core.CheckCredentials(t.Context(), f.realm, fmt.Sprintf("nobody%d", i), "a guess", guesser); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if _, err := f.core.CheckCredentials(t.Context(), f.realm, "carol.directory", "wrong password", guesser); !errors.As(err, &throttled) {
		t.Fatalf("the directory's wrong password from a guarded address: %v, want a *ThrottledError", err)
	}
	if user, err := f.core.CheckCredentials(t.Context(), f.realm, "carol.directory", "directory password", guesser); err != nil || user == nil {
		t.Fatalf("the directory's right password from a guarded address: %v %v", user, err)
	}
}

// A right answer still meets the account's standing: a disabled user is
// refused (ErrUserDisabled, with the user for the event), and a
// registration awaiting approval as a wrong password.
func TestCredentialSourcesAccountStanding(t *testing.T) {
	e, dir := newDirectoryEnv(t)
	carol := *dir.user
	carol.Enabled = false
	if _, err := e.core.UpdateUser(t.Context(), e.store, &carol); err != nil {
		t.Fatal(err)
	}
	dir.user = &carol
	user, err := e.core.CheckCredentials(t.Context(), e.realm, "carol.directory", "directory password", testIP)
	if !errors.Is(err, ErrUserDisabled) || user == nil || user.ID != carol.ID {
		t.Fatalf("disabled: %v %v, want ErrUserDisabled with carol", user, err)
	}
	carol.Enabled = true
	if _, err := e.core.UpdateUser(t.Context(), e.store, &carol); err != nil {
		t.Fatal(err)
	}
	if err := e.store.ChangeUserStatus(t.Context(), e.realm.ID, carol.ID, store.UserActive, store.UserPending); err != nil {
		t.Fatal(err)
	}
	if _, err := e.core.CheckCredentials(t.Context(), e.realm, "carol.directory", "directory password", testIP); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("pending: %v, want ErrBadCredentials", err)
	}
}

// The local store alone, as the server runs today: its answers for the
// users it has, and for logins it has not.
func TestLocalSource(t *testing.T) {
	e := newTestEnv(t)
	alice := e.user("alice", "alice password")
	bare := e.user("bare", "")
	client := &store.Client{ID: "7d3c0a4e-0000-4000-8000-000000000001", RealmID: e.realm.ID, ClientID: "svc",
		ClientType: ClientConfidential, GrantTypes: []string{GrantClientCredentials}, Enabled: true}
	if err := e.store.Tx(t.Context(), func(tx *store.Store) error {
		if err := tx.CreateClient(t.Context(), client); err != nil {
			return err
		}
		return e.core.SyncServiceAccount(t.Context(), tx, e.realm, client)
	}); err != nil {
		t.Fatal(err)
	}
	service, err := e.store.GetServiceAccountUser(t.Context(), client.ID)
	if err != nil {
		t.Fatal(err)
	}
	local := localSource{e.core}
	g := &signInGuard{}
	for _, c := range []struct {
		name     string
		user     *store.User
		password string
		want     Verdict
	}{
		{"right password", alice, "alice password", RightPassword},
		{"wrong password", alice, "another password", WrongPassword},
		{"a user without a password", bare, "any password", WrongPassword},
		{"a service account", service, "", WrongPassword},
		{"nobody", nil, "a guess", NotMine},
	} {
		answer, err := local.CheckPassword(t.Context(), PasswordAttempt{Realm: e.realm, Password: c.password, User: c.user, guard: g})
		if err != nil || answer.Verdict != c.want || (c.want != NotMine && answer.User != c.user) {
			t.Errorf("%s: %+v %v, want %v", c.name, answer, err, c.want)
		}
	}
}
