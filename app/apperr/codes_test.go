package apperr

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// The table of docs/api-errors.md is the list of Codes: every code with
// each of its statuses, and nothing else.
func TestCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/api-errors.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (\\d{3}) \\| `([a-z_]+)` \\|")
	documented := map[Code][]int{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		status, _ := strconv.Atoi(m[1])
		documented[Code(m[2])] = append(documented[Code(m[2])], status)
	}
	for _, c := range Codes {
		got := documented[c.Code]
		slices.Sort(got)
		if !slices.Equal(got, c.Statuses) {
			t.Errorf("code %s: documented with statuses %v, answered with %v", c.Code, got, c.Statuses)
		}
		delete(documented, c.Code)
	}
	for c := range documented {
		t.Errorf("docs/api-errors.md lists %s, which is no code of package apperr", c)
	}
}

// Every constructor gives its code the status the table names.
func TestConstructorsMatchTable(t *testing.T) {
	statuses := map[Code][]int{}
	for _, c := range Codes {
		statuses[c.Code] = c.Statuses
	}
	for _, e := range []*Error{Invalid("x"), InvalidJSON("x"), Field("f", "x"), UnknownField("f"), Parameter("p", "x"),
		Unauthorized("x"), Forbidden("x"), NotFound("x"), Conflict("f", "x"), TooMany(1, "x"), Busy(1, "x"), Gone("x")} {
		if !slices.Contains(statuses[e.Code], e.Status) {
			t.Errorf("%s answered %d, the table says %v", e.Code, e.Status, statuses[e.Code])
		}
	}
}
