package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// textIndexesInStep moves the pending rows into the trigram tables, and
// fails unless each then indexes exactly the rows of its table, with
// nothing pending: a row the triggers missed would not be found, and one
// left behind would refuse the next row given its rowid.
func textIndexesInStep(t *testing.T, s *Store) {
	t.Helper()
	if err := s.IndexTexts(testCtx); err != nil {
		t.Fatal(err)
	}
	for table, trigrams := range map[string]string{"users": "users_trigrams", "scim_user_values": "scim_user_values_trigrams"} {
		var rows, indexed, missing, stale, pending int
		err := s.w.QueryRowContext(testCtx, `SELECT (SELECT count(*) FROM `+table+`), (SELECT count(*) FROM `+trigrams+`),
			(SELECT count(*) FROM `+table+` WHERE rowid NOT IN (SELECT rowid FROM `+trigrams+`)),
			(SELECT count(*) FROM `+trigrams+` WHERE rowid NOT IN (SELECT rowid FROM `+table+`)),
			(SELECT count(*) FROM `+trigrams+`_pending)`).
			Scan(&rows, &indexed, &missing, &stale, &pending)
		if err != nil {
			t.Fatalf("%s: %v", trigrams, err)
		}
		if missing != 0 || stale != 0 || rows != indexed || pending != 0 {
			t.Fatalf("%s: %d rows of %s, %d indexed, %d missing, %d stale, %d pending", trigrams, rows, table, indexed,
				missing, stale, pending)
		}
	}
}

// searchUsernames are the usernames of realmID's users meeting where.
func searchUsernames(t *testing.T, s *Store, realmID string, where *Match) string {
	t.Helper()
	users, _, err := s.SearchSCIMUsers(testCtx, realmID, SCIMQuery{Where: where, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(users))
	for i, u := range users {
		names[i] = u.Username
	}
	return strings.Join(names, " ")
}

// The triggers keep the trigram tables in step with every write of their
// rows, the ones foreign keys cascade and the store's own folding of old
// rows included.
func TestSQLiteTextIndexesInStep(t *testing.T) {
	s := newSQLiteTestStore(t)
	testFixture(t, s)
	textIndexesInStep(t, s)
	put := func(realmID, userID string, values ...SCIMValue) {
		t.Helper()
		if err := s.PutSCIMUser(testCtx, realmID, userID, SCIMUser{ModifiedAt: 1, Data: `{}`}, values); err != nil {
			t.Fatal(err)
		}
	}
	email := func(v string) SCIMValue { return SCIMValue{Attr: "emails", Value: v, Fold: strings.ToLower(v)} }
	for _, step := range []struct {
		name  string
		write func() error
	}{
		{"SCIM values", func() error {
			put(testRealmID, "alice", email("Alice@Example.COM"), SCIMValue{Attr: "externalid", Value: "x-1", Fold: "x-1"})
			put(testOtherRealmID, "carol", email("carol@example.com"))
			return nil
		}},
		{"SCIM values replaced", func() error { put(testRealmID, "alice", email("alice@example.net")); return nil }},
		{"a rename", func() error {
			u, err := s.GetUser(testCtx, testRealmID, "bob")
			if err != nil {
				return err
			}
			u.Username, u.LastName = "robert", "Weiß"
			return s.UpdateUser(testCtx, u)
		}},
		{"a password, which no index reads", func() error { return s.SetUserPassword(testCtx, testRealmID, "bob", "hash", 2, false) }},
		{"names folded on open", func() error {
			_, err := s.w.ExecContext(testCtx, "UPDATE users SET first_name_fold = NULL, last_name_fold = NULL")
			if err == nil {
				err = s.foldNames(testCtx)
			}
			return err
		}},
		{"a deletion, its values cascading", func() error { return s.DeleteUser(testCtx, testRealmID, "alice") }},
		{"a user made in its place", func() error {
			return s.CreateUser(testCtx, &User{ID: "dave", RealmID: testRealmID, Username: "dave", LastName: "Dİnç", Enabled: true, CreatedAt: 3})
		}},
		{"a realm's deletion, its users cascading", func() error { return s.DeleteRealm(testCtx, "other") }},
		{"a user made after", func() error {
			return s.CreateUser(testCtx, &User{ID: "erin", RealmID: testRealmID, Username: "erin", Enabled: true, CreatedAt: 4})
		}},
	} {
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		textIndexesInStep(t, s)
	}
	for _, c := range []struct {
		where *Match
		want  string
	}{
		{&Match{Op: MatchCo, Field: "username", Value: "obe"}, "robert"},
		{&Match{Op: MatchEw, Field: "last_name", Value: "eiß"}, "robert"},
		{&Match{Op: MatchCo, Field: "last_name", Value: "dİn"}, "dave"},
		{&Match{Op: MatchHas, Attr: "emails", Subs: []*Match{{Op: MatchCo, Field: "fold", Value: "example"}}}, ""},
	} {
		if got := searchUsernames(t, s, testRealmID, c.where); got != c.want {
			t.Errorf("%+v: %q, want %q", c.where, got, c.want)
		}
	}
}

// A search finds the rows whose texts changed before the indexer moved
// them in, and not their old texts.
func TestSQLiteTextsPending(t *testing.T) {
	s := newSQLiteTestStore(t)
	mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
	create := func(id, name, email string) {
		t.Helper()
		if err := s.CreateUser(testCtx, &User{ID: id, RealmID: testRealmID, Username: name, Email: email, Enabled: true,
			CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	create("u1", "quokka", "quokka@example.com")
	create("u2", "wombat", "wombat@example.com")
	textIndexesInStep(t, s)
	create("u3", "numbat", "numbat@example.com")
	u, err := s.GetUser(testCtx, testRealmID, "u1")
	if err != nil {
		t.Fatal(err)
	}
	u.Username = "platypus"
	if err := s.UpdateUser(testCtx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSCIMUser(testCtx, testRealmID, "u2", SCIMUser{ModifiedAt: 1, Data: `{}`},
		[]SCIMValue{{Attr: "externalid", Value: "Zebra-9", Fold: "zebra-9"}}); err != nil {
		t.Fatal(err)
	}
	var pending int
	if err := s.r.QueryRowContext(testCtx, "SELECT (SELECT count(*) FROM users_trigrams_pending) + "+
		"(SELECT count(*) FROM scim_user_values_trigrams_pending)").Scan(&pending); err != nil || pending != 3 {
		t.Fatalf("%d pending (%v), want 3: the test needs them not yet moved", pending, err)
	}
	check := func() {
		t.Helper()
		for _, c := range []struct {
			where *Match
			want  string
		}{
			{&Match{Op: MatchCo, Field: "username", Value: "umba"}, "numbat"},
			{&Match{Op: MatchCo, Field: "username", Value: "atyp"}, "platypus"},
			{&Match{Op: MatchCo, Field: "username", Value: "uokk"}, ""},
			{&Match{Op: MatchCo, Field: "email", Value: "uokka@"}, "platypus"},
			{&Match{Op: MatchHas, Attr: "externalid", Subs: []*Match{{Op: MatchCo, Field: "value", Value: "bra-9"}}}, "wombat"},
		} {
			if got := searchUsernames(t, s, testRealmID, c.where); got != c.want {
				t.Errorf("%+v: %q, want %q", c.where, got, c.want)
			}
		}
	}
	check()
	textIndexesInStep(t, s)
	check()
}

// Version 54 indexes the users and SCIM values written before it.
func TestTextIndexMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 54)
	createRealmAtOldSchema(t, before, testRealm("r1", "acme", 1000))
	createUserAtOldSchema(t, before, &User{ID: "u1", RealmID: "r1", Username: "alice", Email: "alice@example.com",
		LastName: "Müller", Enabled: true, CreatedAt: 1000})
	if err := before.PutSCIMUser(testCtx, "r1", "u1", SCIMUser{ModifiedAt: 1, Data: `{}`},
		[]SCIMValue{{Attr: "externalid", Value: "Ext-42", Fold: "ext-42"}}); err != nil {
		t.Fatal(err)
	}
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	textIndexesInStep(t, s)
	emails := &Match{Op: MatchHas, Attr: "emails", Also: "email", Subs: []*Match{{Op: MatchCo, Field: "fold", Value: "@example"}}}
	for _, where := range []*Match{
		{Op: MatchCo, Field: "username", Value: "lic"},
		{Op: MatchEw, Field: "last_name", Value: "ller"},
		{Op: MatchHas, Attr: "externalid", Subs: []*Match{{Op: MatchCo, Field: "value", Value: "xt-4"}}},
		emails,
	} {
		if got := searchUsernames(t, s, "r1", where); got != "alice" {
			t.Errorf("%+v: %q, want alice", where, got)
		}
	}
}

// A text more than maxTrigramRows rows hold is searched by a scan of the
// realm, which then costs less than reading each row the index found;
// the result is the same.
func TestSQLiteTrigramSearchOfACommonText(t *testing.T) {
	s := newSQLiteTestStore(t)
	mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
	users := make([]*User, maxTrigramRows+1)
	for i := range users {
		users[i] = &User{ID: fmt.Sprintf("u%d", i), RealmID: testRealmID, Username: fmt.Sprintf("user%05d", i),
			Email: fmt.Sprintf("user%05d@example.com", i), Enabled: true, CreatedAt: 1}
	}
	if err := s.CreateUsers(testCtx, users); err != nil {
		t.Fatal(err)
	}
	if err := s.IndexTexts(testCtx); err != nil {
		t.Fatal(err)
	}
	// Every email holds the domain's trigrams: a search asks for the
	// others.
	ix := userTextIndexes["u.email"]
	rare, err := s.rareTrigrams(testCtx, ix, textTrigrams("01234@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rare, " "); got != "012 34@" {
		t.Errorf("rare trigrams %q, want 012 34@", got)
	}
	if all, err := s.rareTrigrams(testCtx, ix, textTrigrams("@example.com")); err != nil || len(all) != 4 {
		t.Errorf("trigrams of a common text %q (%v), want all four", all, err)
	}
	for _, c := range []struct {
		text    string
		total   int
		indexed bool
	}{
		{"@example.com", maxTrigramRows + 1, false},
		{"r01234@", 1, true},
		{"0123", 11, true}, // user00123, user01230 to user01239
	} {
		where := &Match{Op: MatchCo, Field: "email", Value: c.text}
		b := s.scimUsersMatch(testCtx, testRealmID)
		from, _, err := b.filter(SCIMQuery{Where: where}, scimUsersFrom, scimUsersJoin, scimUsersScope)
		if err != nil {
			t.Fatal(err)
		}
		if indexed := strings.Contains(from, "json_each"); indexed != c.indexed {
			t.Errorf("%q: read through the index %t, want %t", c.text, indexed, c.indexed)
		}
		if _, total, err := s.SearchSCIMUsers(testCtx, testRealmID, SCIMQuery{Where: where, Limit: 1}); err != nil || total != c.total {
			t.Errorf("%q: %d users (%v), want %d", c.text, total, err, c.total)
		}
	}
}

func TestTrigramQuery(t *testing.T) {
	for _, c := range []struct {
		columns []string
		text    string
		want    string
	}{
		{[]string{"email"}, "abc", `{email} : ("abc")`},
		{[]string{"email"}, "abcd", `{email} : ("abc" AND "bcd")`},
		{[]string{"email"}, "4321@example.com", `{email} : ("432" AND "1@e" AND "xam" AND "ple" AND ".co" AND "com")`},
		{[]string{"value", "fold"}, `a"bc`, `{value fold} : ("a""b" AND """bc")`},
		{[]string{"fold"}, "straße", `{fold} : ("str" AND "aße")`},
	} {
		if got := trigramQuery(c.columns, textTrigrams(c.text)); got != c.want {
			t.Errorf("%v %q: %s, want %s", c.columns, c.text, got, c.want)
		}
	}
}

// pendingTexts counts the rows waiting for the trigram indexes.
func pendingTexts(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.r.QueryRowContext(testCtx, "SELECT (SELECT count(*) FROM users_trigrams_pending) + "+
		"(SELECT count(*) FROM scim_user_values_trigrams_pending)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The indexer takes the changed rows in by itself, and a clean close
// leaves none pending.
func TestSQLiteTextIndexer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idenplane.db")
	s := storeTestOpen(t, path, storeTestKey)
	mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
	create := func(s *Store, id string) {
		t.Helper()
		if err := s.CreateUser(testCtx, &User{ID: id, RealmID: testRealmID, Username: id, Enabled: true, CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	create(s, "quokka")
	for deadline := time.Now().Add(30 * time.Second); pendingTexts(t, s) != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the indexer left the row pending")
		}
	}
	var indexed int
	if err := s.r.QueryRowContext(testCtx, "SELECT count(*) FROM users_trigrams WHERE users_trigrams MATCH 'uok'").
		Scan(&indexed); err != nil || indexed != 1 {
		t.Fatalf("%d rows indexed (%v), want 1", indexed, err)
	}

	// With its ticks stopped, only the close moves the next row.
	stopTicks := func(s *Store) {
		s.texts.once.Do(func() { close(s.texts.stop) })
		<-s.texts.done
	}
	stopTicks(s)
	create(s, "wombat")
	if n := pendingTexts(t, s); n != 1 {
		t.Fatalf("%d rows pending, want the one just written", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = storeTestOpen(t, path, storeTestKey)
	stopTicks(s)
	if n := pendingTexts(t, s); n != 0 {
		t.Fatalf("%d rows pending after a clean close", n)
	}
}
