package console

import (
	"mime"
	"net/http"
	"net/url"
	"time"

	pages "github.com/idenplane/idenplane/ui/console"
)

// state is what a detail page shows beyond the API's answer: a refused
// form's messages and values, and what the last action answered.
type state struct {
	form   string // the id of the refused form
	f      pages.Form
	values map[string]string
	once   *pages.Fact  // a secret or link, shown this once
	result []pages.Fact // an action's answer
}

// form fills an action form: its values, and a refusal's messages when it
// was the form refused.
func (st state) fill(f pages.ActionForm) pages.ActionForm {
	if st.form == f.ID {
		f.Form, f.Values = st.f, st.values
	}
	if f.Values == nil {
		f.Values = map[string]string{}
	}
	return f
}

// detailPage is a handler of a detail page, drawn with st.
type detailPage func(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state) error

// submit makes a detail page's form's API call: a success leads back to
// the page saying what it did, a refusal shows the page again with every
// message at its field of the form.
func (c *Ctx) submit(w http.ResponseWriter, r *http.Request, method, path string, body any, formID string, fields []string,
	back, done string, page detailPage) error {
	err := c.call(r, method, path, body, nil)
	if err == nil {
		redirect(w, r, back, done)
		return nil
	}
	f, ok := formFailure(err, fields...)
	if !ok {
		return err
	}
	return page(w, r, c, http.StatusUnprocessableEntity, state{form: formID, f: f, values: formValues(r)})
}

// confirm asks before a destructive action of a detail page.
func (c *Ctx) confirm(w http.ResponseWriter, r *http.Request, section, message string, arg any, action, cancel, button string) error {
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, section, "console.confirm.title"), pages.Confirm{
		Message: message, Args: []any{arg}, Action: action, Cancel: cancel, Button: button}))
}

// one is the console's address of one resource of a kind's list.
func one(realm, kind, id, rest string) string {
	return realmPath(realm, "/"+kind+"/"+url.PathEscape(id)+rest)
}

// apiOne is the API's address of one resource of a kind's collection.
func apiOne(realm, kind, id, rest string) string {
	return adminRealm(realm, "/"+kind+"/"+url.PathEscape(id)+rest)
}

// when shows a time of the API's, in Unix milliseconds, "" for none.
func when(ms any) string {
	v, _ := ms.(float64)
	if v <= 0 {
		return ""
	}
	return time.UnixMilli(int64(v)).UTC().Format("2006-01-02 15:04:05 UTC")
}

// factsOf are a representation's fields as a detail page's facts, labelled
// console.field.<name>, those empty left out.
func factsOf(rep map[string]any, fields ...string) []pages.Fact {
	var out []pages.Fact
	for _, k := range fields {
		if v := cell(rep[k]); v != "" {
			out = append(out, pages.Fact{Label: "console.field." + k, Value: v})
		}
	}
	return out
}

// maxUpload bounds a form with a file (an SP's metadata): the API takes
// documents of 256 KiB at most.
const maxUpload = 1 << 20

// parsePost reads a form post, urlencoded or multipart (a file's form),
// its files kept in memory.
func parsePost(w http.ResponseWriter, r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
		return r.ParseMultipartForm(maxUpload)
	}
	return r.ParseForm()
}

// dangerLink is the link of a row leading to the confirmation of a
// destructive action.
func dangerLink(action, label string) pages.Button {
	return pages.Button{Action: action, Label: label, Confirm: true}
}

// deleteSection is the last section of a detail page: the link to the
// confirmation of its deletion.
func deleteSection(name, action string) pages.Section {
	return pages.Section{ID: "delete", Title: "console.detail.danger", Columns: []string{"console.detail.name"},
		Rows: []pages.Row{{Name: name, Cells: []string{name}, Buttons: []pages.Button{dangerLink(action, "console.delete")}}}}
}
