package scim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// step is one request of a recorded sequence (testdata/scim/README.md).
type step struct {
	Name   string
	Method string
	Path   string
	Body   json.RawMessage
	Status int
	Save   string
	Expect map[string]any
}

// The provisioning sequences of Microsoft Entra ID and Okta, replayed in
// order against a realm.
func TestProviderSequences(t *testing.T) {
	for _, provider := range []string{"entra", "okta"} {
		t.Run(provider, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scim", provider+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var steps []step
			if err := json.Unmarshal(raw, &steps); err != nil {
				t.Fatal(err)
			}
			p := newProvisioner(t)
			saved := map[string]string{}
			fill := func(s string) string {
				for k, v := range saved {
					s = strings.ReplaceAll(s, "${"+k+"}", v)
				}
				return s
			}
			for _, st := range steps {
				var body any
				if len(st.Body) > 0 {
					body = fill(string(st.Body))
				}
				r := p.do(st.Method, fill(st.Path), body)
				if r.Status != st.Status {
					t.Fatalf("%s: %s %s: %d, want %d: %s", st.Name, st.Method, st.Path, r.Status, st.Status, r.Body)
				}
				if len(r.Body) == 0 {
					continue
				}
				var got map[string]any
				r.Decode(t, &got)
				if st.Save != "" {
					saved[st.Save] = got["id"].(string)
				}
				for path, want := range st.Expect {
					if w, ok := want.(string); ok {
						want = fill(w)
					}
					if v := lookup(got, path); !equalJSON(v, want) {
						t.Fatalf("%s: %s = %v, want %v: %s", st.Name, path, v, want, r.Body)
					}
				}
			}
		})
	}
}

// lookup follows a path of keys and list indexes separated by '/'.
func lookup(v any, path string) any {
	for _, seg := range strings.Split(path, "/") {
		switch c := v.(type) {
		case map[string]any:
			v = c[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}
