package scim_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

// seedPeople provisions the users the filter tests query.
func seedPeople(p *provisioner) map[string]string {
	ids := map[string]string{}
	for _, u := range []map[string]any{
		userBody("alice", "externalId", "EXT-Alice", "title", "Engineer", "displayName", "Alice Ávila",
			"name", map[string]any{"givenName": "Alice", "familyName": "Avila"},
			"emails", []any{map[string]any{"value": "alice@example.com", "type": "work", "primary": true},
				map[string]any{"value": "alice@home.test", "type": "home"}},
			"phoneNumbers", []any{map[string]any{"value": "+1 555 0100", "type": "mobile"}},
			"addresses", []any{map[string]any{"type": "work", "locality": "Paris", "postalCode": "75002", "country": "FR"},
				map[string]any{"type": "home", "locality": "Lyon", "country": "FR"}},
			enterprise, map[string]any{"department": "R&D", "employeeNumber": "100"}),
		userBody("bob", "externalId", "ext-bob", "title", "Manager",
			"name", map[string]any{"givenName": "Bob", "familyName": "Baker"},
			"emails", []any{map[string]any{"value": "bob@example.org", "type": "home"}},
			"addresses", []any{map[string]any{"type": "work", "streetAddress": "1 Strand", "locality": "London", "country": "GB"}},
			enterprise, map[string]any{"department": "Sales"}),
		userBody("carol", "active", false, "name", map[string]any{"givenName": "Carol", "familyName": "Avila"},
			"emails", []any{map[string]any{"value": "carol@example.com", "type": "work"}},
			"addresses", []any{map[string]any{"type": "work", "locality": "Lyon", "country": "FR", "primary": true}}),
	} {
		p.clock.Advance(time.Minute)
		created := p.create(u)
		ids[created["userName"].(string)] = created["id"].(string)
	}
	// A user of the admin API, never written by SCIM.
	p.clock.Advance(time.Minute)
	ids["dave"] = p.CreateUser("acme", map[string]any{"username": "dave", "email": "dave@example.com"})["id"].(string)
	return ids
}

// userNames lists the userNames of a list answer, in its order.
func userNames(t *testing.T, r *apptest.Response) string {
	t.Helper()
	apptest.MustStatus(t, r, http.StatusOK)
	var list struct {
		Schemas      []string
		TotalResults int
		ItemsPerPage int
		StartIndex   int
		Resources    []map[string]any
	}
	r.Decode(t, &list)
	names := make([]string, len(list.Resources))
	for i, u := range list.Resources {
		names[i], _ = u["userName"].(string)
	}
	if list.ItemsPerPage != len(list.Resources) || list.Schemas[0] != "urn:ietf:params:scim:api:messages:2.0:ListResponse" {
		t.Fatalf("list %s", r.Body)
	}
	return strings.Join(names, " ")
}

func TestFilterUsers(t *testing.T) {
	p := newProvisioner(t)
	ids := seedPeople(p)
	created := p.do(http.MethodGet, "/Users/"+ids["bob"], nil).Object(t)["meta"].(map[string]any)["created"].(string)
	group := p.Admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "staff"})
	apptest.MustStatus(t, group, http.StatusCreated)
	groupID := strings.TrimPrefix(group.Header.Get("Location"), apptest.BaseURL+"/admin/realms/acme/groups/")
	apptest.MustStatus(t, p.Admin(http.MethodPut, "/admin/realms/acme/users/"+ids["carol"]+"/groups/"+groupID, nil), http.StatusOK)

	for _, tc := range []struct{ filter, want string }{
		{`userName eq "ALICE"`, "alice"},
		{`userName eq "nobody"`, ""},
		{`username sw "b"`, "bob"},
		{`userName co "a"`, "alice carol dave"},
		{`userName ew "ol"`, "carol"},
		{`userName ne "alice"`, "bob carol dave"},
		{`userName gt "bob"`, "carol dave"},
		{`userName le "bob"`, "alice bob"},
		{`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bob"`, "bob"},
		{`id eq "` + ids["dave"] + `"`, "dave"},
		{`externalId eq "EXT-Alice"`, "alice"},
		{`externalId eq "ext-alice"`, ""}, // caseExact
		{`externalId pr`, "alice bob"},
		{`not (externalId pr)`, "carol dave"},
		{`title eq "engineer"`, "alice"},
		{`title ne "Engineer"`, "bob carol dave"},
		{`displayName co "ávila"`, "alice"},
		{`name.familyName eq "avila"`, "alice carol"},
		{`name.givenName sw "B"`, "bob"},
		{`active eq false`, "carol"},
		{`active eq true and name.familyName eq "Avila"`, "alice"},
		{`emails co "example.com"`, "alice carol dave"},
		{`emails.value ew ".org"`, "bob"},
		{`emails eq "DAVE@example.com"`, "dave"},
		{`emails[type eq "work" and value co "@example.com"]`, "alice carol"},
		{`emails[type eq "home"]`, "alice bob"},
		{`emails[not (type eq "work")]`, "alice bob"},
		{`emails.type eq "home"`, "alice bob"},
		{`emails[primary eq true and type eq "work"]`, "alice"},
		{`phoneNumbers pr`, "alice"},
		{`phoneNumbers[type eq "mobile"]`, "alice"},
		{enterprise + `:department eq "r&d"`, "alice"},
		{enterprise + `:department pr and not (` + enterprise + `:employeeNumber pr)`, "bob"},
		{`groups eq "` + groupID + `"`, "carol"},
		{`groups[value eq "` + groupID + `"]`, "carol"},
		{`meta.created gt "` + created + `"`, "carol dave"},
		{`meta.lastModified le "` + created + `"`, "alice bob"},
		{`(userName eq "alice" or userName eq "bob") and title eq "Manager"`, "bob"},
		{`userName eq "alice" or (userName eq "bob" and title eq "Engineer")`, "alice"},
		{`title pr or emails[type eq "work"]`, "alice bob carol"},
		{`addresses[type eq "work" and locality eq "Paris"]`, "alice"},
		{`addresses[type eq "work" and locality eq "Lyon"]`, "carol"},
		{`addresses[locality eq "lyon" and type eq "HOME"]`, "alice"},
		{`addresses[locality eq "Paris" and country eq "GB"]`, ""},
		{`addresses.country eq "FR"`, "alice carol"},
		{`addresses.locality eq "LYON"`, "alice carol"},
		{`addresses.streetAddress co "strand"`, "bob"},
		{`addresses[postalCode sw "75"]`, "alice"},
		{`addresses[primary eq true]`, "carol"},
		{`addresses pr`, "alice bob carol"},
		{`not (addresses.country eq "fr")`, "bob dave"},
		{`addresses.region pr`, ""},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			got := userNames(t, p.do(http.MethodGet, "/Users?filter="+url.QueryEscape(tc.filter), nil))
			if got != tc.want {
				t.Fatalf("filter %s: %q, want %q", tc.filter, got, tc.want)
			}
			// The same by POST .search.
			r := p.do(http.MethodPost, "/Users/.search", map[string]any{
				"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:SearchRequest"}, "filter": tc.filter})
			if got := userNames(t, r); got != tc.want {
				t.Fatalf(".search %s: %q, want %q", tc.filter, got, tc.want)
			}
		})
	}
}

func TestFilterRefused(t *testing.T) {
	p := newProvisioner(t)
	for _, f := range []string{
		`userName eq`,
		`userName eq "a" and`,
		`(userName eq "a"`,
		`shoeSize eq "42"`,
		`urn:example:nope:userName eq "a"`,
		`password eq "secret"`,
		`active co "tr"`,
		`active gt true`,
		`userName eq true`,
		`meta.created gt "yesterday"`,
		`meta.created co "2026"`,
		`name eq "x"`,
		`addresses eq "x"`,
		`addresses.display eq "x"`,
		`addresses[display eq "x"]`,
		`addresses[locality eq true]`,
		`emails.display eq "x"`,
		`groups.display eq "x"`,
		`title[value eq "x"]`,
		`userName.first eq "x"`,
		strings.Repeat("(", 1000) + `userName eq "a"` + strings.Repeat(")", 1000),
		strings.Repeat("not (", 20) + `userName eq "a"` + strings.Repeat(")", 20),
		`userName eq "` + strings.Repeat("a", 5000) + `"`,
	} {
		t.Run(f[:min(len(f), 40)], func(t *testing.T) {
			mustSCIMError(t, p.do(http.MethodGet, "/Users?filter="+url.QueryEscape(f), nil), http.StatusBadRequest, "invalidFilter")
		})
	}
}

func TestListUsersPagedAndSorted(t *testing.T) {
	p := newProvisioner(t)
	seedPeople(p)
	for _, tc := range []struct{ query, want string }{
		{"", "alice bob carol dave"},
		{"?sortBy=userName&sortOrder=descending", "dave carol bob alice"},
		{"?startIndex=2&count=2", "bob carol"},
		{"?startIndex=0&count=1", "alice"},
		{"?startIndex=4&count=10", "dave"},
		{"?startIndex=9", ""},
		{"?count=0", ""},
		{"?count=-3", ""},
		{"?sortBy=title", "carol dave alice bob"},
		{"?sortBy=name.familyName&sortOrder=DESCENDING", "bob alice carol dave"},
		{"?sortBy=emails", "alice bob carol dave"},
		{"?sortBy=meta.created&sortOrder=descending", "dave carol bob alice"},
		{"?sortBy=" + url.QueryEscape(enterprise+":department") + "&count=4", "carol dave alice bob"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := p.do(http.MethodGet, "/Users"+tc.query, nil)
			if got := userNames(t, r); got != tc.want {
				t.Fatalf("%q, want %q: %s", got, tc.want, r.Body)
			}
			if total := r.Object(t)["totalResults"]; total != 4.0 {
				t.Fatalf("totalResults %v", total)
			}
		})
	}
	r := p.do(http.MethodGet, "/Users?startIndex=3&count=1", nil).Object(t)
	if r["startIndex"] != 3.0 || r["itemsPerPage"] != 1.0 {
		t.Fatalf("page %v", r)
	}
	for _, q := range []string{"?sortOrder=sideways", "?count=ten", "?startIndex=x", "?sortBy=groups", "?sortBy=nope"} {
		mustSCIMError(t, p.do(http.MethodGet, "/Users"+q, nil), http.StatusBadRequest, "invalidValue")
	}
}

// A query matching more than maxResults users without asking for a page
// is refused; pages of it are served.
func TestListUsersTooMany(t *testing.T) {
	p := newProvisioner(t)
	realm := p.Realm("acme")
	ctx := context.Background()
	err := p.Store.Tx(ctx, func(tx *store.Store) error {
		for i := range 1001 {
			u := &store.User{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), RealmID: realm.ID,
				Username: fmt.Sprintf("user%04d", i), Enabled: true, CreatedAt: 1}
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mustSCIMError(t, p.do(http.MethodGet, "/Users", nil), http.StatusBadRequest, "tooMany")
	mustSCIMError(t, p.do(http.MethodGet, "/Users?filter="+url.QueryEscape(`userName sw "user"`), nil), http.StatusBadRequest, "tooMany")
	r := p.do(http.MethodGet, "/Users?count=5000", nil).Object(t)
	if r["totalResults"] != 1001.0 || r["itemsPerPage"] != 1000.0 {
		t.Fatalf("a page past maxResults: total %v, items %v", r["totalResults"], r["itemsPerPage"])
	}
	r = p.do(http.MethodGet, "/Users?filter="+url.QueryEscape(`userName sw "user09"`), nil).Object(t)
	if r["totalResults"] != 100.0 {
		t.Fatalf("a narrower filter: %v", r["totalResults"])
	}
}

func TestAttributesParameter(t *testing.T) {
	p := newProvisioner(t)
	ids := seedPeople(p)
	for _, tc := range []struct {
		query      string
		want, gone []string
	}{
		{"attributes=userName", []string{"id", "schemas", "userName"}, []string{"emails", "meta", "title"}},
		{"attributes=name.givenName,EMAILS", []string{"id", "name", "emails"}, []string{"userName", "meta"}},
		{"attributes=" + url.QueryEscape(enterprise+":department"), []string{"id", enterprise}, []string{"userName"}},
		{"attributes=" + url.QueryEscape("urn:ietf:params:scim:schemas:core:2.0:User:title"), []string{"id", "title"}, []string{"userName"}},
		{"excludedAttributes=emails,meta,id", []string{"id", "userName", "title"}, []string{"emails", "meta"}},
		{"excludedAttributes=" + url.QueryEscape(enterprise), []string{"userName"}, []string{enterprise}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			for _, path := range []string{"/Users/" + ids["alice"] + "?" + tc.query, "/Users?filter=userName+eq+%22alice%22&" + tc.query} {
				u := p.do(http.MethodGet, path, nil).Object(t)
				if res, ok := u["Resources"].([]any); ok {
					u = res[0].(map[string]any)
				}
				for _, k := range tc.want {
					if _, ok := u[k]; !ok {
						t.Fatalf("%s: no %s in %v", path, k, u)
					}
				}
				for _, k := range tc.gone {
					if _, ok := u[k]; ok {
						t.Fatalf("%s: %s shown in %v", path, k, u)
					}
				}
			}
		})
	}
	u := p.do(http.MethodGet, "/Users/"+ids["alice"]+"?attributes=name.givenName", nil).Object(t)
	if name := u["name"].(map[string]any); len(name) != 1 || name["givenName"] != "Alice" {
		t.Fatalf("name %v", name)
	}
	ext := p.do(http.MethodGet, "/Users/"+ids["alice"]+"?attributes="+url.QueryEscape(enterprise+":department"), nil).Object(t)[enterprise]
	if !slices.Equal([]string{"R&D"}, []string{ext.(map[string]any)["department"].(string)}) || len(ext.(map[string]any)) != 1 {
		t.Fatalf("extension %v", ext)
	}
}
