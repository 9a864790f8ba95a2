package httpx

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apperr"
)

// wantError checks that err is the API error with code and field.
func wantError(t *testing.T, err error, status int, code apperr.Code, field string) {
	t.Helper()
	var e *apperr.Error
	if !errors.As(err, &e) || e.Status != status || e.Code != code || e.Field != field {
		t.Fatalf("error %#v, want %d %s field %q", err, status, code, field)
	}
}

func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		answer               func(w http.ResponseWriter) error
		status               int
		location, body, ctyp string
	}{
		{"ok", func(w http.ResponseWriter) error { return OK(w, map[string]int{"n": 1}) },
			http.StatusOK, "", `{"n":1}` + "\n", "application/json"},
		{"created", func(w http.ResponseWriter) error {
			return Created(w, "http://h/things/7", map[string]string{"id": "7"})
		},
			http.StatusCreated, "http://h/things/7", `{"id":"7"}` + "\n", "application/json"},
		{"no content", NoContent, http.StatusNoContent, "", "", ""},
		{"empty list", func(w http.ResponseWriter) error { return List(w, []int(nil), func(n int) int { return n }) },
			http.StatusOK, "", "[]\n", "application/json"},
		{"list", func(w http.ResponseWriter) error {
			return List(w, []int{1, 2}, func(n int) string { return strings.Repeat("x", n) })
		}, http.StatusOK, "", `["x","xx"]` + "\n", "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if err := tc.answer(w); err != nil {
				t.Fatal(err)
			}
			if w.Code != tc.status || w.Header().Get("Location") != tc.location || w.Body.String() != tc.body ||
				w.Header().Get("Content-Type") != tc.ctyp {
				t.Fatalf("answer %d Location %q Content-Type %q body %q, want %d %q %q %q", w.Code, w.Header().Get("Location"),
					w.Header().Get("Content-Type"), w.Body, tc.status, tc.location, tc.ctyp, tc.body)
			}
		})
	}
}

func TestRepsNeverNil(t *testing.T) {
	if got := Reps([]string(nil), strings.ToUpper); got == nil || len(got) != 0 {
		t.Fatalf("Reps(nil) = %#v, want an empty slice", got)
	}
	if got := Reps([]string{"a", "b"}, strings.ToUpper); !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Fatalf("Reps = %v", got)
	}
}

func TestListPage(t *testing.T) {
	const def = 20
	for _, tc := range []struct {
		query      string
		first, max int    // the page asked of load
		badParam   string // the parameter refused, before anything is loaded
	}{
		{query: "", first: 0, max: def},
		{query: "first=5&max=10", first: 5, max: 10},
		{query: "max=1", first: 0, max: 1},
		{query: "max=1000", first: 0, max: MaxPageSize},
		{query: "first=2147483647", first: 1<<31 - 1, max: def},
		{query: "max=1001", badParam: "max"},
		{query: "max=0", badParam: "max"},
		{query: "max=-3", badParam: "max"},
		{query: "max=ten", badParam: "max"},
		{query: "first=-1", badParam: "first"},
		{query: "first=x&max=0", badParam: "first"},
		{query: "first=2147483648", badParam: "first"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/things?"+tc.query, nil)
			w := httptest.NewRecorder()
			loaded := false
			err := ListPage(w, r, def, func(first, max int) ([]int, error) {
				loaded = true
				if first != tc.first || max != tc.max {
					t.Errorf("load(%d, %d), want load(%d, %d)", first, max, tc.first, tc.max)
				}
				return []int{first, max}, nil
			}, func(n int) int { return n * 10 })
			if tc.badParam != "" {
				wantError(t, err, http.StatusBadRequest, apperr.CodeInvalidParameter, tc.badParam)
				if loaded || w.Body.Len() != 0 {
					t.Fatalf("a bad parameter loaded (%v) or answered %q", loaded, w.Body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
				t.Fatalf("answer %d %q: %v", w.Code, w.Body, err)
			}
			if want := []int{tc.first * 10, tc.max * 10}; !reflect.DeepEqual(got, want) {
				t.Fatalf("answered %v, want the page shown with rep, %v", got, want)
			}
		})
	}
	t.Run("load fails", func(t *testing.T) {
		w := httptest.NewRecorder()
		boom := errors.New("disk on fire")
		err := ListPage(w, httptest.NewRequest(http.MethodGet, "/things", nil), def,
			func(int, int) ([]int, error) { return nil, boom }, func(n int) int { return n })
		if !errors.Is(err, boom) || w.Body.Len() != 0 {
			t.Fatalf("error %v, body %q: want the load's error and no answer", err, w.Body)
		}
	})
	t.Run("empty page", func(t *testing.T) {
		w := httptest.NewRecorder()
		err := ListPage(w, httptest.NewRequest(http.MethodGet, "/things?first=100", nil), def,
			func(int, int) ([]int, error) { return nil, nil }, func(n int) int { return n })
		if err != nil || w.Body.String() != "[]\n" {
			t.Fatalf("error %v, body %q: want []", err, w.Body)
		}
	})
}

// thing is a representation as a handler shows it; its update body is the
// same type, as for most admin resources.
type thing struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Size     int               `json:"size"`
	Labels   map[string]string `json:"labels"`
	Archived bool              `json:"archived"`
}

func TestReadUpdate(t *testing.T) {
	current := thing{ID: "t1", Name: "box", Size: 3, Labels: map[string]string{"a": "1", "b": "2"}, Archived: true}
	// id may not change; name has no default (null keeps it); size returns
	// to 10; labels and archived to their zero values.
	defaults := map[string]any{"name": current.Name, "size": 10, "labels": nil, "archived": nil}
	for _, tc := range []struct {
		name, method, body, ctype string
		want                      thing
		status                    int
		code                      apperr.Code
		field                     string
	}{
		{name: "put replaces the fields named", method: http.MethodPut, body: `{"size": 4}`,
			want: thing{Name: "box", Size: 4, Labels: map[string]string{"a": "1", "b": "2"}, Archived: true}},
		{name: "put replaces a whole object", method: http.MethodPut, body: `{"labels": {"c": "3"}}`,
			want: thing{Name: "box", Size: 3, Labels: map[string]string{"c": "3"}, Archived: true}},
		{name: "patch merges an object", method: http.MethodPatch, body: `{"labels": {"c": "3", "a": null}}`,
			want: thing{Name: "box", Size: 3, Labels: map[string]string{"b": "2", "c": "3"}, Archived: true}},
		{name: "null takes the default", method: http.MethodPut, body: `{"size": null, "name": null}`,
			want: thing{Name: "box", Size: 10, Labels: map[string]string{"a": "1", "b": "2"}, Archived: true}},
		{name: "null without a default is the zero value", method: http.MethodPatch, body: `{"archived": null, "labels": null}`,
			want: thing{Name: "box", Size: 3}},
		{name: "an empty object changes nothing", method: http.MethodPatch, body: `{}`,
			want: thing{Name: "box", Size: 3, Labels: map[string]string{"a": "1", "b": "2"}, Archived: true}},
		{name: "a field not updatable", method: http.MethodPut, body: `{"id": "t2"}`,
			status: 400, code: apperr.CodeUnknownField, field: "id"},
		{name: "a field of another case", method: http.MethodPatch, body: `{"Size": 1}`,
			status: 400, code: apperr.CodeUnknownField, field: "Size"},
		{name: "a field of the wrong type", method: http.MethodPut, body: `{"size": "big"}`,
			status: 400, code: apperr.CodeInvalidField, field: "size"},
		{name: "a map value of the wrong type", method: http.MethodPatch, body: `{"labels": {"c": 3}}`,
			status: 400, code: apperr.CodeInvalidField, field: "labels"},
		{name: "not an object", method: http.MethodPut, body: `[1]`, status: 400, code: apperr.CodeInvalidJSON},
		{name: "no body", method: http.MethodPut, body: ``, status: 400, code: apperr.CodeInvalidJSON},
		{name: "trailing data", method: http.MethodPatch, body: `{"size": 1} {}`, status: 400, code: apperr.CodeInvalidJSON},
		{name: "not JSON", method: http.MethodPut, body: `{"size": 1}`, ctype: "text/plain",
			status: 415, code: apperr.CodeUnsupportedMedia},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/things/t1", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", "application/json")
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			before := current
			before.Labels = map[string]string{"a": "1", "b": "2"}
			got, err := ReadUpdate[thing](r, before, defaults)
			if tc.status != 0 {
				wantError(t, err, tc.status, tc.code, tc.field)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("updated to %+v, want %+v", got, tc.want)
			}
		})
	}
}
