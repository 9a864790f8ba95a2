package store

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FoldCase is s under Unicode simple case folding (CaseFolding.txt, status
// C and S): two strings that differ only by case fold alike, as SCIM's
// caseExact=false attributes compare. The store writes its folded columns
// with it; callers fold the values they compare with them likewise.
//
// Unlike strings.ToLower it folds the variants of a letter together
// (final sigma and sigma, long s and s, the Kelvin sign and k), and unlike
// full folding it keeps the length of every letter (ß stays ß, so ẞ and ß
// fold alike but "ss" stays apart). Dotted capital I (U+0130) and dotless
// small i (U+0131) fold to themselves, as the default, non-Turkic,
// folding says.
func FoldCase(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	return strings.Map(foldRune, s)
}

// foldRune is the representative of r's case orbit (unicode.SimpleFold):
// its lowercase form when that is in the orbit, which is what simple
// folding maps every letter of the orbit to, else r itself.
func foldRune(r rune) rune {
	if unicode.SimpleFold(r) == r {
		return r // no other case
	}
	for _, c := range [2]rune{unicode.ToLower(unicode.ToUpper(r)), unicode.ToLower(r)} {
		if c != r && inOrbit(r, c) {
			return c
		}
	}
	return r
}

// inOrbit says whether c is in r's case orbit.
func inOrbit(r, c rune) bool {
	for x := unicode.SimpleFold(r); x != r; x = unicode.SimpleFold(x) {
		if x == c {
			return true
		}
	}
	return false
}

// foldNames fills the folded names of the users and groups written
// before the columns existed (NULL): SQL's lower() folds ASCII letters
// only, so the migration leaves them to Go. Once done, the queries find
// none.
func (s *Store) foldNames(ctx context.Context) error {
	var n int
	if err := s.w.QueryRowContext(ctx, s.dialect.columnExists, "users", "first_name_fold").Scan(&n); err != nil {
		return fmt.Errorf("fold names: %w", mapErr(err))
	}
	if n == 0 {
		return nil // a schema before the columns, as the migration tests open
	}
	if err := s.foldRows(ctx, "SELECT id, first_name, last_name FROM users WHERE first_name_fold IS NULL OR last_name_fold IS NULL LIMIT 1000",
		"UPDATE users SET first_name_fold = $1, last_name_fold = $2 WHERE id = $3",
		func(u [3]string) []any { return []any{FoldCase(u[1]), FoldCase(u[2]), u[0]} }); err != nil {
		return err
	}
	return s.foldRows(ctx, "SELECT id, name, '' FROM realm_groups WHERE name_fold IS NULL LIMIT 1000",
		"UPDATE realm_groups SET name_fold = $1 WHERE id = $2", func(g [3]string) []any { return []any{FoldCase(g[1]), g[0]} })
}

// foldRows folds, batch by batch, the rows (id and two texts) query
// finds, writing each with update and the arguments args gives.
func (s *Store) foldRows(ctx context.Context, query, update string, args func([3]string) []any) error {
	for {
		rows, err := s.w.QueryContext(ctx, query)
		if err != nil {
			return fmt.Errorf("fold names: %w", mapErr(err))
		}
		var batch [][3]string
		for rows.Next() {
			var u [3]string
			if err := rows.Scan(&u[0], &u[1], &u[2]); err != nil {
				rows.Close()
				return mapErr(err)
			}
			batch = append(batch, u)
		}
		err = rows.Err()
		rows.Close()
		if err != nil || len(batch) == 0 {
			return mapErr(err)
		}
		err = s.Tx(ctx, func(tx *Store) error {
			for _, u := range batch {
				if _, err := tx.w.ExecContext(ctx, update, args(u)...); err != nil {
					return mapErr(err)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("fold names: %w", err)
		}
	}
}
