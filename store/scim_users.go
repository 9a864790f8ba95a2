package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SCIMUser is what SCIM holds of a user beyond the users row.
type SCIMUser struct {
	ModifiedAt int64  // Unix milliseconds
	Data       string // a JSON object of SCIM attributes
	// Addresses are the user's addresses as filters read them, written
	// with the rest (and not read back: Data holds them).
	Addresses []SCIMAddress
}

// SCIMAddress is one of a user's addresses as filters read it: every
// field folded by the caller (SCIM's addresses ignore case), Type too.
type SCIMAddress struct {
	Type, Formatted, StreetAddress, Locality, Region, PostalCode, Country string
	Primary                                                               bool
}

// AddressFields are the fields of a SCIMAddress a Match inside a MatchHas
// on "addresses" may name.
var AddressFields = map[string]string{
	"type":          "v.type",
	"primary":       "v.is_primary",
	"formatted":     "v.formatted",
	"streetaddress": "v.street_address",
	"locality":      "v.locality",
	"region":        "v.region",
	"postalcode":    "v.postal_code",
	"country":       "v.country",
}

// SCIMValue is one value of a SCIM attribute, as filters and sorting
// read it: Attr is the attribute's lowercased path, Fold the value
// lowercased (by the caller, with Unicode's rules), Type a multi-valued
// attribute's type, lowercased.
type SCIMValue struct {
	Attr, Value, Fold, Type string
	Primary                 bool
}

// PutSCIMUser stores what SCIM holds of user userID of realmID,
// replacing what it held: its attributes and the values filters read.
func (s *Store) PutSCIMUser(ctx context.Context, realmID, userID string, u SCIMUser, values []SCIMValue) error {
	return s.Tx(ctx, func(tx *Store) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO scim_users (user_id, realm_id, modified_at, data) VALUES ($1, $2, $3, $4)
			ON CONFLICT (user_id) DO UPDATE SET modified_at = excluded.modified_at, data = excluded.data`,
			userID, realmID, u.ModifiedAt, u.Data)
		if err != nil {
			return fmt.Errorf("store SCIM attributes of user %s: %w", userID, mapErr(err))
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM scim_user_values WHERE user_id = $1", userID); err != nil {
			return fmt.Errorf("replace SCIM values of user %s: %w", userID, mapErr(err))
		}
		for _, v := range values {
			_, err := tx.w.ExecContext(ctx, `INSERT INTO scim_user_values (user_id, realm_id, attr, value, fold, type, is_primary)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, userID, realmID, v.Attr, v.Value, v.Fold, v.Type, v.Primary)
			if err != nil {
				return fmt.Errorf("store SCIM value of user %s: %w", userID, mapErr(err))
			}
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM scim_user_addresses WHERE user_id = $1", userID); err != nil {
			return fmt.Errorf("replace SCIM addresses of user %s: %w", userID, mapErr(err))
		}
		for i, a := range u.Addresses {
			_, err := tx.w.ExecContext(ctx, `INSERT INTO scim_user_addresses (user_id, realm_id, item, type, is_primary, formatted,
				street_address, locality, region, postal_code, country) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
				userID, realmID, i, a.Type, a.Primary, a.Formatted, a.StreetAddress, a.Locality, a.Region, a.PostalCode, a.Country)
			if err != nil {
				return fmt.Errorf("store SCIM address of user %s: %w", userID, mapErr(err))
			}
		}
		return nil
	})
}

// SCIMUsers reads what SCIM holds of the given users of a realm, by user
// ID; a user SCIM never wrote is not in the map.
func (s *Store) SCIMUsers(ctx context.Context, realmID string, userIDs []string) (map[string]SCIMUser, error) {
	out := make(map[string]SCIMUser, len(userIDs))
	for chunk := range chunks(userIDs, 500) {
		args := append([]any{realmID}, anys(chunk)...)
		rows, err := s.r.QueryContext(ctx, "SELECT user_id, modified_at, data FROM scim_users WHERE realm_id = $1 AND user_id IN ("+
			placeholdersFrom(2, len(chunk))+")", args...)
		if err != nil {
			return nil, fmt.Errorf("read SCIM users: %w", mapErr(err))
		}
		for rows.Next() {
			var id string
			var u SCIMUser
			if err := rows.Scan(&id, &u.ModifiedAt, &u.Data); err != nil {
				rows.Close()
				return nil, mapErr(err)
			}
			out[id] = u
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, mapErr(err)
		}
	}
	return out, nil
}

// UsersGroups lists the groups of each of the given users, by user ID,
// each user's ordered by name.
func (s *Store) UsersGroups(ctx context.Context, userIDs []string) (map[string][]*Group, error) {
	out := make(map[string][]*Group, len(userIDs))
	for chunk := range chunks(userIDs, 500) {
		rows, err := s.r.QueryContext(ctx, "SELECT m.user_id, "+prefixColumns("g", groupColumns)+
			" FROM group_members m JOIN realm_groups g ON g.id = m.group_id WHERE m.user_id IN ("+placeholders(len(chunk))+
			") ORDER BY g.name, g.id", anys(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("groups of users: %w", mapErr(err))
		}
		for rows.Next() {
			var g Group
			var userID string
			var parent sql.NullString
			if err := rows.Scan(&userID, &g.ID, &g.RealmID, &parent, &g.Name, &g.Description, &g.CreatedAt); err != nil {
				rows.Close()
				return nil, mapErr(err)
			}
			g.ParentID = parent.String
			out[userID] = append(out[userID], &g)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, mapErr(err)
		}
	}
	return out, nil
}

// A Match is a condition on a realm's users, the SQL form of a SCIM
// filter. Op is MatchAnd or MatchOr (of Subs), MatchNot (of Subs[0]),
// MatchHas (some value of Attr, or with Subs[0] some value meeting it),
// or a comparison (MatchEq …) of Field with Value. Outside a MatchHas,
// Field is a column of the user (UserFields); inside, a column of the
// value (ValueFields).
type Match struct {
	Op   string
	Subs []*Match
	Attr string // MatchHas: a SCIMValue's Attr, or "groups" for memberships
	// Also, in a MatchHas on the value alone, is a UserFields column that
	// holds one more value of the attribute: the user's email, for the
	// users SCIM never wrote.
	Also  string
	Field string
	Value any // string, bool or int64 (Unix milliseconds)
}

// The operators of a Match: the logical ones, MatchHas, and SCIM's
// comparisons (RFC 7644 §3.4.2.2).
const (
	MatchAnd = "and"
	MatchOr  = "or"
	MatchNot = "not"
	MatchHas = "has"
	MatchEq  = "eq"
	MatchNe  = "ne"
	MatchCo  = "co"
	MatchSw  = "sw"
	MatchEw  = "ew"
	MatchPr  = "pr"
	MatchGt  = "gt"
	MatchGe  = "ge"
	MatchLt  = "lt"
	MatchLe  = "le"
)

// UserFields are the fields of a user a Match or a sort may name. Text
// fields hold what the caller compares with: username and email are
// stored lowercase (strings.ToLower, as the identity core writes them);
// first and last names have folded shadow columns (FoldCase), indexed.
var UserFields = map[string]string{
	"id":         "u.id",
	"username":   "u.username",
	"email":      "u.email",
	"first_name": "u.first_name_fold",
	"last_name":  "u.last_name_fold",
	"enabled":    "u.enabled",
	"created":    "u.created_at",
	"modified":   "coalesce(su.modified_at, u.created_at)",
}

// ValueFields are the fields of a SCIMValue a Match inside MatchHas may
// name; of a membership ("groups"), only value, the group's ID.
var ValueFields = map[string]string{
	"value":   "v.value",
	"fold":    "v.fold",
	"type":    "v.type",
	"primary": "v.is_primary",
}

// SCIMQuery is a page of a realm's users: those meeting Where (all when
// nil), ordered by SortField (a UserFields key) or SortAttr (a SCIMValue
// Attr, by its least folded value), then by username.
type SCIMQuery struct {
	Where     *Match
	SortField string
	SortAttr  string
	Desc      bool
	Offset    int
	Limit     int
}

// SearchSCIMUsers answers one page of q and how many users meet q.Where
// in all. Service accounts are not listed.
func (s *Store) SearchSCIMUsers(ctx context.Context, realmID string, q SCIMQuery) ([]*User, int, error) {
	b := s.scimUsersMatch(ctx, realmID)
	order := func(b *matchSQL, dir string) (string, error) {
		if q.SortAttr != "" {
			return fmt.Sprintf("coalesce((SELECT min(o.fold) FROM scim_user_values o WHERE o.user_id = u.id AND o.attr = %s), '')%s, u.username",
				b.arg(q.SortAttr), dir), nil
		}
		return "", nil
	}
	var users []*User
	total, err := s.searchSCIM(ctx, b, q, scimUsersFrom, scimUsersJoin, scimUsersScope, prefixColumns("u", userColumns),
		userOrder(q.Where), order,
		func(rows *sql.Rows) error {
			u, err := scanUser(rows)
			if err == nil {
				users = append(users, u)
			}
			return err
		})
	if users == nil {
		users = []*User{}
	}
	return users, total, err
}

// The users a SCIM search reads, and what SCIM holds of them.
const (
	scimUsersFrom  = "users u"
	scimUsersJoin  = " LEFT JOIN scim_users su ON su.user_id = u.id"
	scimUsersScope = "u.realm_id = $1 AND u.service_account_client_id IS NULL"
)

// scimUsersMatch builds the SQL of a Match on the users of realmID.
func (s *Store) scimUsersMatch(ctx context.Context, realmID string) *matchSQL {
	b := &matchSQL{args: []any{realmID}, fields: UserFields, owner: "u.id", has: func(attr string, b *matchSQL, driver string) string {
		if attr == "groups" {
			return "SELECT v.user_id AS owner_id FROM (SELECT user_id, group_id AS value FROM group_members) v WHERE TRUE"
		}
		if attr == "addresses" {
			return "SELECT v.user_id AS owner_id FROM scim_user_addresses v WHERE v.realm_id = $1"
		}
		return "SELECT v.user_id AS owner_id FROM " + driver + "scim_user_values v WHERE v.realm_id = $1 AND v.attr = " + b.arg(attr)
	}, alsoFrom: "users r", alsoScope: "r.realm_id = $1", likeIsExact: s.dialect.likeIsExact}
	if s.texts != nil {
		b.indexes = userTextIndexes
		b.valueIndexes = func(attr string) map[string]textIndex {
			if attr == "groups" || attr == "addresses" {
				return nil // not rows of scim_user_values
			}
			return scimValueTextIndexes
		}
		b.trigramRows = func(ix textIndex, text string) (string, bool, error) { return s.trigramRows(ctx, ix, text) }
	}
	return b
}

// userOrder is the users' order by name. Where a condition that must hold
// compares an indexed column of the row with eq (the folded names, the
// email) or sw (the folded names), the order is an expression the
// username index cannot give: SQLite, without statistics, would otherwise
// walk the realm in username order testing each user, where reading the
// few matching rows and sorting them is what the condition's index is for.
func userOrder(where *Match) string {
	var selective func(m *Match) bool
	selective = func(m *Match) bool {
		switch {
		case m == nil:
			return false
		case m.Op == MatchEq:
			return m.Field == "first_name" || m.Field == "last_name" || m.Field == "email"
		case m.Op == MatchSw:
			return m.Field == "first_name" || m.Field == "last_name" // a range of their indexes (prefixRange)
		case m.Op == MatchAnd:
			return slices.ContainsFunc(m.Subs, selective)
		}
		return false
	}
	if selective(where) {
		return "(u.username || '')"
	}
	return "u.username"
}

// searchSCIM runs a SCIM query: the count of what meets q.Where, then the
// page, each row read by scan.
func (s *Store) searchSCIM(ctx context.Context, b *matchSQL, q SCIMQuery, from, join, scope, columns, byName string,
	order func(b *matchSQL, dir string) (string, error), scan func(*sql.Rows) error) (int, error) {
	from, where, err := b.filter(q, from, join, scope)
	if err != nil {
		return 0, err
	}
	var total int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM "+from+" WHERE "+where, b.args...).Scan(&total); err != nil {
		return 0, fmt.Errorf("count SCIM resources: %w", mapErr(err))
	}
	if q.Limit <= 0 || q.Offset >= total {
		return total, nil
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	by, err := order(b, dir)
	if err != nil {
		return 0, err
	}
	switch {
	case by != "":
	case q.SortField != "":
		col, ok := b.fields[q.SortField]
		if !ok {
			return 0, fmt.Errorf("sort by %q: no such field", q.SortField)
		}
		by = col + dir + ", " + byName
	default:
		by = byName + dir
	}
	limit, offset := b.arg(q.Limit), b.arg(q.Offset)
	if by != byName+dir || b.owner != "u.id" {
		by += ", " + b.owner // usernames are unique in a realm; names of groups repeat across the tree
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+columns+" FROM "+from+" WHERE "+where+" ORDER BY "+by+
		" LIMIT "+limit+" OFFSET "+offset, b.args...)
	if err != nil {
		return 0, fmt.Errorf("search SCIM resources: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return 0, err
		}
	}
	return total, mapErr(rows.Err())
}

// filter is the FROM and WHERE of the resources of table from (its
// LEFT JOIN join added when the query reads it) in scope that meet
// q.Where.
func (b *matchSQL) filter(q SCIMQuery, from, join, scope string) (string, string, error) {
	where := scope
	rest := q.Where
	if d, ok := b.driving(q.Where); ok {
		// CROSS JOIN keeps this order in SQLite, which without statistics
		// would scan the realm first.
		ids, err := b.owners(d)
		if err != nil {
			return "", "", err
		}
		from = "(SELECT DISTINCT owner_id FROM (" + ids + ") d) m CROSS JOIN " + from
		where += " AND " + b.owner + " = m.owner_id"
		rest = without(q.Where, d)
	} else if driver, join, err := b.textDriver(q.Where, b.fields); err != nil {
		return "", "", err
	} else if driver != "" {
		from = driver + from
		where += " AND " + join
	}
	if rest != nil {
		cond, err := b.match(rest, false)
		if err != nil {
			return "", "", err
		}
		where += " AND " + cond
	}
	// The SCIM table is joined only when its columns are read: a count of
	// the realm then reads an index alone.
	alias := strings.Fields(join)[3] + "."
	if strings.Contains(where, alias) || q.SortField != "" && strings.Contains(b.fields[q.SortField], alias) {
		from += join
	}
	return from, where, nil
}

// matchSQL builds the SQL of a Match, collecting its arguments: fields
// are the columns a comparison outside MatchHas may name, has the query
// of the owners (owner) of an attribute's values, aliased v.
type matchSQL struct {
	args   []any
	fields map[string]string
	owner  string
	// has answers the query of the owners of attr's values, reading
	// first the rows of driver (a FROM and CROSS JOIN, or ""), which
	// the caller joins to them.
	has func(attr string, b *matchSQL, driver string) string
	// alsoFrom and alsoScope are the FROM and WHERE of the owners whose
	// own column (a Match's Also, aliased r) holds a value meeting a
	// condition.
	alsoFrom, alsoScope string
	// valueFields, when set, stand for ValueFields: the owner's column
	// as the value.
	valueFields map[string]string
	// indexes narrow the substring comparisons of the columns they name
	// (textIndex); valueIndexes are those of the values of an attribute,
	// which replace indexes inside its MatchHas. Both nil where the
	// backend has none.
	indexes      map[string]textIndex
	valueIndexes func(attr string) map[string]textIndex
	// trigramRows answers the rows of ix whose columns may hold text, a
	// JSON array of rowids, or false when testing every row of the realm
	// costs less (Store.trigramRows).
	trigramRows func(ix textIndex, text string) (string, bool, error)
	// likeIsExact: LIKE compares case as written (dialect.likeIsExact).
	likeIsExact bool
}

// A textIndex narrows co, sw and ew on a column to the rows that may
// match, which the exact comparison then tests: trigrams is the FTS5
// table (schema version 54) of the column's rows, keyed by rowid (the
// row's, as rowid says), and columns the FTS5 columns to search;
// prefix says that a B-tree index serves a range of the column, its
// leading columns fixed by the query's other terms.
type textIndex struct {
	trigrams string
	columns  []string
	rowid    string
	prefix   bool
}

// userTextIndexes are the users row's. The email's B-tree index holds
// the non-empty emails only, as the query of the owners of an email
// states and the users query does not.
var userTextIndexes = map[string]textIndex{
	"u.username":        {"users_trigrams", []string{"username"}, "u.rowid", true},
	"u.email":           {"users_trigrams", []string{"email"}, "u.rowid", false},
	"r.email":           {"users_trigrams", []string{"email"}, "r.rowid", true},
	"u.first_name_fold": {"users_trigrams", []string{"first_name_fold"}, "u.rowid", true},
	"u.last_name_fold":  {"users_trigrams", []string{"last_name_fold"}, "u.rowid", true},
}

// scimValueTextIndexes are scim_user_values'. The trigram table holds a
// value equal to its fold once, as its fold: a search of the value as
// written reads both columns.
var scimValueTextIndexes = map[string]textIndex{
	"v.fold":  {"scim_user_values_trigrams", []string{"fold"}, "v.rowid", true},
	"v.value": {"scim_user_values_trigrams", []string{"value", "fold"}, "v.rowid", true},
}

func (b *matchSQL) arg(v any) string {
	b.args = append(b.args, v)
	return fmt.Sprintf("$%d", len(b.args))
}

// match is the SQL of m; inValue says m is inside a MatchHas, where
// fields are a value's.
func (b *matchSQL) match(m *Match, inValue bool) (string, error) {
	switch m.Op {
	case MatchAnd, MatchOr:
		if len(m.Subs) == 0 {
			return "", fmt.Errorf("match: %s of nothing", m.Op)
		}
		parts := make([]string, len(m.Subs))
		for i, sub := range m.Subs {
			p, err := b.match(sub, inValue)
			if err != nil {
				return "", err
			}
			parts[i] = p
		}
		return "(" + strings.Join(parts, " "+strings.ToUpper(m.Op)+" ") + ")", nil
	case MatchNot:
		if len(m.Subs) != 1 {
			return "", fmt.Errorf("match: not of %d conditions", len(m.Subs))
		}
		p, err := b.match(m.Subs[0], inValue)
		if err != nil {
			return "", err
		}
		return "NOT " + p, nil
	case MatchHas:
		if inValue {
			return "", fmt.Errorf("match: a value condition inside another")
		}
		return b.hasSQL(m)
	}
	fields := b.fields
	switch {
	case inValue && b.valueFields != nil:
		fields = b.valueFields
	case inValue:
		fields = ValueFields
	}
	col, ok := fields[m.Field]
	if !ok {
		return "", fmt.Errorf("match: no field %q", m.Field)
	}
	cond, err := b.compare(col, m.Op, m.Value)
	if err != nil {
		return "", err
	}
	if r := b.prefixRange(col, m); r != "" {
		cond = "(" + cond + " AND " + r + ")"
	}
	return cond, nil
}

// hasSQL is the SQL of a MatchHas: the owner holds a value of the
// attribute (meeting the condition, if one is given).
func (b *matchSQL) hasSQL(m *Match) (string, error) {
	sub, err := b.owners(m)
	if err != nil {
		return "", err
	}
	return b.owner + " IN (" + sub + ")", nil
}

// owners is the query of the owners (as owner_id) a MatchHas selects.
func (b *matchSQL) owners(m *Match) (string, error) {
	if len(m.Subs) > 1 {
		return "", fmt.Errorf("match: has with %d conditions", len(m.Subs))
	}
	if len(m.Subs) == 0 {
		return b.has(m.Attr, b, ""), nil
	}
	if (m.Attr == "groups" || m.Attr == "members") && !onlyValue(m.Subs[0]) {
		return "", fmt.Errorf("match: memberships have only a value")
	}
	if m.Attr == "addresses" {
		b.valueFields = AddressFields
	}
	owners := b.indexes
	b.indexes = nil
	if b.valueIndexes != nil {
		b.indexes = b.valueIndexes(m.Attr)
	}
	fields := ValueFields
	if b.valueFields != nil {
		fields = b.valueFields
	}
	driver, join, err := b.textDriver(m.Subs[0], fields)
	if err != nil {
		return "", err
	}
	sub := b.has(m.Attr, b, driver)
	if join != "" {
		sub += " AND " + join
	}
	cond, err := b.match(m.Subs[0], true)
	b.valueFields, b.indexes = nil, owners
	if err != nil {
		return "", err
	}
	sub += " AND " + cond
	if m.Also != "" {
		if !onlyValue(m.Subs[0]) {
			return "", fmt.Errorf("match: also %s for a condition on more than the value", m.Also)
		}
		col := "r." + strings.TrimPrefix(UserFields[m.Also], "u.")
		b.valueFields = map[string]string{"value": col, "fold": col}
		driver, join, err := b.textDriver(m.Subs[0], b.valueFields)
		if err != nil {
			return "", err
		}
		cond, err := b.match(m.Subs[0], true)
		b.valueFields = nil
		if err != nil {
			return "", err
		}
		if join != "" {
			join += " AND "
		}
		sub += " UNION SELECT r.id FROM " + driver + b.alsoFrom + " WHERE " + join + b.alsoScope + " AND " +
			col + " <> '' AND " + cond
	}
	return sub, nil
}

// without is m without its term d, which driving found among the terms
// joined by and (nil when m is d).
func without(m, d *Match) *Match {
	if m == d {
		return nil
	}
	if m.Op != MatchAnd {
		return m
	}
	subs := make([]*Match, 0, len(m.Subs))
	for _, sub := range m.Subs {
		if sub = without(sub, d); sub != nil {
			subs = append(subs, sub)
		}
	}
	if len(subs) == 0 {
		return nil
	}
	c := *m
	c.Subs = subs
	return &c
}

// driving is the query of the owners a condition that must hold (q.Where,
// or a term of it joined by and) selects by a value, if there is one:
// the search reads those first, rather than every resource of the realm
// to test each against the condition.
func (b *matchSQL) driving(m *Match) (*Match, bool) {
	switch {
	case m == nil:
	case m.Op == MatchHas:
		return m, true
	case m.Op == MatchAnd:
		for _, sub := range m.Subs {
			if d, ok := b.driving(sub); ok {
				return d, true
			}
		}
	}
	return nil, false
}

// onlyValue says whether m names no field of a value but value itself.
func onlyValue(m *Match) bool {
	if m.Field != "" && m.Field != "value" && m.Field != "fold" {
		return false
	}
	for _, s := range m.Subs {
		if !onlyValue(s) {
			return false
		}
	}
	return true
}

// compare is the SQL of col op value; pr is for texts, which are never
// NULL here. Texts compare bytewise (the caller
// folds both sides where case does not count); co, sw and ew use replace
// and substr, which ignore no case on any backend, unlike SQLite's LIKE,
// but for folded columns and where LIKE heeds case.
func (b *matchSQL) compare(col, op string, value any) (string, error) {
	switch op {
	case MatchPr:
		return "(" + col + " <> '')", nil
	case MatchEq:
		return col + " = " + b.arg(value), nil
	case MatchNe:
		return col + " <> " + b.arg(value), nil
	case MatchGt:
		return col + " > " + b.arg(value), nil
	case MatchGe:
		return col + " >= " + b.arg(value), nil
	case MatchLt:
		return col + " < " + b.arg(value), nil
	case MatchLe:
		return col + " <= " + b.arg(value), nil
	}
	text, ok := value.(string)
	if !ok {
		return "", fmt.Errorf("match: %s needs a text, not %T", op, value)
	}
	if foldedColumns[col] || b.likeIsExact {
		esc := likeEscaper.Replace(text)
		switch op {
		case MatchCo:
			return col + ` LIKE ` + b.arg("%"+esc+"%") + ` ESCAPE '\'`, nil
		case MatchSw:
			return col + ` LIKE ` + b.arg(esc+"%") + ` ESCAPE '\'`, nil
		case MatchEw:
			return col + ` LIKE ` + b.arg("%"+esc) + ` ESCAPE '\'`, nil
		}
	}
	n := utf8.RuneCountInString(text)
	switch op {
	case MatchCo:
		if text == "" {
			return "TRUE", nil
		}
		return fmt.Sprintf("(replace(%s, %s, '') <> %s)", col, b.arg(text), col), nil
	case MatchSw:
		return fmt.Sprintf("(substr(%s, 1, %d) = %s)", col, n, b.arg(text)), nil
	case MatchEw:
		return fmt.Sprintf("(length(%s) >= %d AND substr(%s, length(%s) - %d) = %s)", col, n, col, col, n-1, b.arg(text)), nil
	}
	return "", fmt.Errorf("match: unknown operator %q", op)
}

// prefixRange is, for a sw on a column a B-tree index serves, the range
// of the texts that start with the compared text, bytewise (a folded
// column holds what the caller folded alike): a condition the rows that
// match meet, which the index answers. "" for any other comparison.
func (b *matchSQL) prefixRange(col string, m *Match) string {
	text, _ := m.Value.(string)
	if m.Op != MatchSw || !b.indexes[col].prefix || text == "" {
		return ""
	}
	cond := col + " >= " + b.arg(text)
	if end, ok := prefixEnd(text); ok {
		cond += " AND " + col + " < " + b.arg(end)
	}
	return cond
}

// textDriver finds, in m or a term of m joined by and, a co, sw or ew
// on a column of fields that a trigram table narrows (and no prefix
// range serves), and answers the FROM of the rows that table finds
// (trigramRows), CROSS JOIN (which SQLite, without statistics, would
// otherwise put after a scan of the realm), and the condition joining
// them to the column's rows; "" when there is none, or when the table
// finds too many. The comparison itself still tests each row. The
// trigram tokenizer finds no text shorter than three characters, and a
// text that is not UTF-8 might not split into the characters the stored
// one does: those scan.
func (b *matchSQL) textDriver(m *Match, fields map[string]string) (from, join string, err error) {
	if m == nil || b.trigramRows == nil {
		return "", "", nil
	}
	switch m.Op {
	case MatchAnd:
		for _, sub := range m.Subs {
			if from, join, err := b.textDriver(sub, fields); from != "" || err != nil {
				return from, join, err
			}
		}
	case MatchCo, MatchSw, MatchEw:
		ix, indexed := b.indexes[fields[m.Field]]
		text, _ := m.Value.(string)
		if !indexed || m.Op == MatchSw && ix.prefix || utf8.RuneCountInString(text) < 3 || !utf8.ValidString(text) ||
			strings.ContainsRune(text, 0) {
			return "", "", nil
		}
		ids, ok, err := b.trigramRows(ix, text)
		if !ok || err != nil {
			return "", "", err
		}
		return "(SELECT value AS rid FROM json_each(" + b.arg(ids) + ")) tg CROSS JOIN ", ix.rowid + " = tg.rid", nil
	}
	return "", "", nil
}

// textTrigrams are text's trigrams taken end to end, and its last: for
// "4321@example.com", 432, 1@e, xam, ple, .co and com.
func textTrigrams(text string) []string {
	runes := []rune(text)
	var out []string
	for i := 0; i < len(runes); i += 3 {
		start := min(i, len(runes)-3)
		out = append(out, string(runes[start:start+3]))
	}
	return out
}

// trigramQuery is the FTS5 query of the rows of columns that hold each
// of trigrams, joined by AND. FTS5 reads a phrase's trigrams in step,
// every row holding any of them; terms joined by AND skip ahead to the
// rows the rarest holds, so that this costs little more than "4321"
// where the phrase would read every email's "@example.com". The rows
// found hold the trigrams in any order: fewer than those holding any,
// but more than those holding the text.
func trigramQuery(columns []string, trigrams []string) string {
	var q strings.Builder
	q.WriteString("{" + strings.Join(columns, " ") + "} : (")
	for i, tg := range trigrams {
		if i > 0 {
			q.WriteString(" AND ")
		}
		q.WriteString(`"` + strings.ReplaceAll(tg, `"`, `""`) + `"`)
	}
	return q.String() + ")"
}

// commonTrigramRows is how many rows make a trigram common: one that
// most users' texts share (@ex, com, use) still costs its whole list of
// rows to an AND, a millisecond per 100,000, for nothing the rare ones
// do not narrow better.
const commonTrigramRows = 1000

// rareTrigrams are those of trigrams fewer than commonTrigramRows rows
// of ix hold, asking for at most that many rows of each (a common one
// costs that much to find out, not its whole list), or all of them when
// none or only one is rare. Two or fewer are all kept, unasked.
func (s *Store) rareTrigrams(ctx context.Context, ix textIndex, trigrams []string) ([]string, error) {
	if len(trigrams) <= 2 {
		return trigrams, nil
	}
	var rare []string
	for _, tg := range trigrams {
		var n int
		if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT rowid FROM "+ix.trigrams+" WHERE "+ix.trigrams+
			" MATCH $1 LIMIT $2)", trigramQuery(ix.columns, []string{tg}), commonTrigramRows).Scan(&n); err != nil {
			return nil, fmt.Errorf("count a trigram's rows: %w", mapErr(err))
		}
		if n < commonTrigramRows {
			rare = append(rare, tg)
		}
	}
	if len(rare) < 2 {
		return trigrams, nil
	}
	return rare, nil
}

// maxTrigramRows is how many rows a trigram search may find before a
// scan of the realm costs less: FTS5 reads the rows holding each of the
// text's trigrams, and each row it finds is then read from its table,
// about four times the cost of testing it in a scan. A text most of the
// realm holds (a domain every email shares) stops the search at this
// many rows, and the realm is scanned, as without the index.
const maxTrigramRows = 5000

// trigramRows are the rowids, as a JSON array, of the rows of ix whose
// columns may hold text: those holding its trigrams (trigramQuery), the
// rare ones if it has any (rareTrigrams).
// FTS5 folds the case of the texts it indexes and of the one it is asked
// for by rules of its own, but letter by letter, so that a text holding
// the compared one holds its trigrams folded alike: the rows are a
// superset of those that match, which the comparison then tests. The
// rows whose texts changed since the indexer last ran (text_index.go)
// are among them, read in the same statement. False when there are more
// than maxTrigramRows.
func (s *Store) trigramRows(ctx context.Context, ix textIndex, text string) (string, bool, error) {
	trigrams, err := s.rareTrigrams(ctx, ix, textTrigrams(text))
	if err != nil {
		return "", false, err
	}
	rows, err := s.r.QueryContext(ctx, "SELECT rowid AS id FROM "+ix.trigrams+" WHERE "+ix.trigrams+" MATCH $1 UNION SELECT id FROM "+
		ix.trigrams+"_pending LIMIT $2", trigramQuery(ix.columns, trigrams), maxTrigramRows+1)
	if err != nil {
		return "", false, fmt.Errorf("search trigrams: %w", mapErr(err))
	}
	defer rows.Close()
	list := []byte{'['}
	n := 0
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return "", false, mapErr(err)
		}
		if n++; n > maxTrigramRows {
			return "", false, nil
		}
		if n > 1 {
			list = append(list, ',')
		}
		list = strconv.AppendInt(list, id, 10)
	}
	if err := rows.Err(); err != nil {
		return "", false, mapErr(err)
	}
	return string(append(list, ']')), true, nil
}

// prefixEnd is the least text after every text that starts with prefix,
// bytewise: prefix with its last byte below 0xff raised by one (not
// always UTF-8, which SQLite compares as bytes all the same); false when
// there is none.
func prefixEnd(prefix string) (string, bool) {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return string(end[:i+1]), true
		}
	}
	return "", false
}

// foldedColumns hold lowercase text only, written so by Go or lowered by
// SQL, which LIKE matches alike on every backend.
var foldedColumns = map[string]bool{"u.username": true, "u.email": true, "u.first_name_fold": true,
	"u.last_name_fold": true, "v.fold": true, "v.type": true, "g.name_fold": true, "v.formatted": true,
	"v.street_address": true, "v.locality": true, "v.region": true, "v.postal_code": true, "v.country": true}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// chunks splits ids into slices of at most n.
func chunks(ids []string, n int) func(yield func([]string) bool) {
	return func(yield func([]string) bool) {
		for len(ids) > 0 {
			k := min(n, len(ids))
			if !yield(ids[:k]) {
				return
			}
			ids = ids[k:]
		}
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// placeholdersFrom returns "$from, …, $(from+n-1)".
func placeholdersFrom(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}
