package console

// Detail is the page of one of a realm's resources that has more to it
// than its list's row: what it is, then sections, each a list and the
// forms that change it.
type Detail struct {
	Icon     *Icon // the preset's mark of an identity provider; nil for none
	Facts    []Fact
	Sections []Section
	Back     string // the list of its kind
	Script   string // the page's enhancement; "" for none
}

// Icon is an image with its text alternative (a message key).
type Icon struct{ Src, Alt string }

// Fact is one line of what a resource is: a message key and a value.
type Fact struct{ Label, Value string }

// Section is a part of a detail page.
type Section struct {
	ID    string // the section's anchor, and the prefix of its inputs' ids
	Title string // a message key
	// Note is a message key shown at the top, with its arguments.
	Note     string
	NoteArgs []any
	Facts    []Fact
	Once     *Fact // a secret or link shown this once
	Columns  []string
	Rows     []Row
	Forms    []ActionForm
	// Live is the address a script polls while a sync runs, and the form
	// it watches; "" for none.
	Live string
}

// Row is one entry of a section's list, with its buttons: a post, or a
// link to a confirmation first.
type Row struct {
	Name    string // how the row is named to assistive technology
	Cells   []string
	Buttons []Button
}

// Button is an action on a row: Confirm leads to a confirmation page
// (GET); otherwise the button posts at once.
type Button struct {
	Action, Label string
	Confirm       bool
}

// ActionForm is a form of a detail page, its inputs' ids prefixed with
// its ID so that two forms may name the same field.
type ActionForm struct {
	Form
	ID        string
	Action    string
	Fields    []FieldSpec
	Values    map[string]string
	Button    string // a message key
	Multipart bool
	Secondary bool
}

// FieldID is the id of a form's input.
func (f ActionForm) FieldID(name string) string { return f.ID + "-" + name }
