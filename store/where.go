package store

import (
	"fmt"
	"strings"
)

// where builds the WHERE clause of a filtered list: conditions joined by
// AND, each value taking the next numbered placeholder after the ones the
// query already uses.
type where struct {
	conds []string
	args  []any
}

// newWhere starts a clause with its fixed condition and the values of
// its placeholders ($1, $2, …).
func newWhere(cond string, args ...any) *where { return &where{conds: []string{cond}, args: args} }

// add adds cond, whose one %d is v's placeholder number.
func (w *where) add(cond string, v any) {
	w.args = append(w.args, v)
	w.conds = append(w.conds, fmt.Sprintf(cond, len(w.args)))
}

// also adds a condition without a value.
func (w *where) also(cond string) { w.conds = append(w.conds, cond) }

func (w *where) clause() (string, []any) { return " WHERE " + strings.Join(w.conds, " AND "), w.args }
