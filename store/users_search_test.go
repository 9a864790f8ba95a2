package store

import (
	"context"
	"strings"
	"testing"
)

// TestUserSearchPrefixUsesIndexes: a prefix search ("ali*") reads the
// users through the indexes of the four columns it looks at, never the
// whole table, so that it stays fast in a realm of a million; a substring
// search scans.
func TestUserSearchPrefixUsesIndexes(t *testing.T) {
	s := newSQLiteTestStore(t)
	plan := func(search string) string {
		t.Helper()
		cond, args := userConditions("r1", UserFilter{Search: search})
		rows, err := s.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN SELECT id FROM users WHERE "+cond+
			" ORDER BY username LIMIT 20", args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		return strings.Join(lines, "\n")
	}
	prefix := plan("ali*")
	t.Logf("prefix plan:\n%s", prefix)
	if strings.Contains(prefix, "SCAN users") && !strings.Contains(prefix, "USING INDEX") {
		t.Fatalf("a prefix search scans the users:\n%s", prefix)
	}
	if !strings.Contains(prefix, "(id=?)") {
		t.Errorf("a prefix search does not look its rows up by ID:\n%s", prefix)
	}
	for _, idx := range []string{"users_realm_username", "users_realm_email", "users_realm_first_name_fold", "users_realm_last_name_fold"} {
		if !strings.Contains(prefix, idx) {
			t.Errorf("a prefix search does not use %s:\n%s", idx, prefix)
		}
	}
}
