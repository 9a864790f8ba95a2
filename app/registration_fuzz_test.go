package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// FuzzRegister fuzzes self-registration's JSON body, in a realm with
// custom fields (one with a pattern, one a choice). Invariants: 201 or a
// 4xx in the API's error shape, never a 5xx; after a 4xx nothing was
// written; a user registered is there as the answer says. Each input comes
// from its own address, so that the per-address limit, which is not what
// is fuzzed here, does not end the run after ten inputs.
func FuzzRegister(f *testing.F) {
	e := newFuzzEnv(f)
	base := "/realms/acme/registration/admin/fields"
	mustStatus(f, e.admin(http.MethodPost, base, map[string]any{"key": "phone", "label": "Phone", "type": "tel",
		"required": true, "pattern": `\+[0-9]{6,15}`}), http.StatusCreated)
	mustStatus(f, e.admin(http.MethodPost, base, map[string]any{"key": "plan", "label": "Plan", "type": "select",
		"options": []string{"free", "pro"}}), http.StatusCreated)
	mustStatus(f, e.admin(http.MethodPost, base, map[string]any{"key": "born", "label": "Born", "type": "date"}), http.StatusCreated)
	seeds := []string{
		`{"username":"ann","email":"ann@example.test","password":"correct horse battery","firstName":"Ann","lastName":"A","attributes":{"phone":"+4912345678","plan":"pro"}}`,
		`{"username":"ben","email":"ben@example.test","password":"correct horse battery","attributes":{"phone":"+4912345678","born":"2000-02-30"}}`,
		`{"username":"cy","email":"cy@example.test","password":"short","attributes":{"phone":"12"}}`,
		`{"username":"di","email":"di@example.test","password":"correct horse battery","attributes":{"phone":"+4912345678","plan":"gold","x":"y"}}`,
		`{"username":"ed","email":"Ed <ed@example.test>","password":"correct horse battery","attributes":{"phone":"+4912345678"}}`,
		`{"username":"fi","password":"correct horse battery","attributes":{"phone":"+4912345678"}}`,
		`{"username":"gus","email":"gus@example.test","password":"correct horse battery","attributes":{"phone":"+4912345678","born":"1999-12-31"},"enabled":true}`,
		`{"username":"ann","email":"ann2@example.test","password":"correct horse battery","attributes":{"phone":"+4912345678"}}`,
		`{"username":"h\u202ei","email":"hi@example.test","password":"correct horse battery","attributes":{"phone":"+4912345678"}}`,
		`{"username":"","password":null,"attributes":null}`, `{}`, `{"attributes":{"phone":1}}`, `not json`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	peer := 0
	f.Fuzz(func(t *testing.T, body string) {
		s := e.on(t)
		peer++
		remote := fmt.Sprintf("10.%d.%d.%d:1234", peer>>16&255, peer>>8&255, peer&255)
		before := e.dataVersion(t)
		r := s.sendFrom(remote, http.MethodPost, "/realms/acme/registration/register", strings.NewReader(body),
			http.Header{"Content-Type": {"application/json"}})
		e.fuzzNoServerError(t, "register", r)
		if r.Status >= 300 {
			fuzzMustAPIError(t, "register", r)
			if e.dataVersion(t) != before {
				t.Fatalf("register answered %d but wrote to the database: %s", r.Status, r.Body)
			}
			return
		}
		var res struct {
			User struct {
				ID string `json:"id"`
			} `json:"user"`
		}
		if err := json.Unmarshal(r.Body, &res); err != nil || res.User.ID == "" {
			t.Fatalf("register answered %d with %s", r.Status, r.Body)
		}
		path := "/admin/realms/acme/users/" + res.User.ID
		adminFuzzGet(t, e, s, path)
		if d := s.send(http.MethodDelete, path, nil, adminFuzzHeaders); d.Status/100 != 2 {
			t.Fatalf("DELETE %s answered %d: %s", path, d.Status, d.Body)
		}
	})
}
