package store

import "database/sql"

// OrgChoice is the organization a sign-in settled on for the organization
// claim of the tokens it leads to. A sign-in that did not settle leaves the
// claim every membership of the user.
type OrgChoice struct {
	Made bool   // the sign-in settled it
	ID   string // the organization; "" for none
}

// column is the choice as its nullable column holds it: NULL when not made.
func (c OrgChoice) column() sql.NullString {
	return sql.NullString{String: c.ID, Valid: c.Made}
}
