package scim_test

import (
	"net/http"
	"net/url"
	"testing"
)

// The fuzz targets drive the SCIM endpoints through the real router over
// one server each: whatever the input, the answer is a 2xx or a 4xx SCIM
// error, never a server fault; a refused write changes nothing.

// mustBeSCIMAnswer fails on a 5xx or on an error that is no SCIM error.
func mustBeSCIMAnswer(t *testing.T, status int, body []byte, ct string) {
	t.Helper()
	if status >= 500 {
		t.Fatalf("status %d: %s", status, body)
	}
	if status >= 400 && ct != "application/scim+json" {
		t.Fatalf("status %d with %q: %s", status, ct, body)
	}
}

// FuzzUserFilter drives GET /Users?filter= and sortBy: the translation of
// filters to SQL and the SQL itself.
func FuzzUserFilter(f *testing.F) {
	for _, seed := range []string{
		`userName eq "bjensen"`, `name.familyName co "O'Malley"`, `userName sw "J"`, `title pr`,
		`meta.lastModified gt "2011-05-13T04:42:34Z"`, `title pr and userType eq "Employee"`,
		`title pr or userType eq "Intern"`, `userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")`,
		`userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")`,
		`emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]`,
		`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "x"`, `groups eq "x"`,
		`active eq true`, `id eq "%"`, `userName co "\\"`, `emails[not (primary eq true)]`, `x eq`, `((((`,
		`userName eq "ÉMILE"`, `name.givenName eq "ILKER"`, `name.familyName eq "STRAẞE"`, `title co "ΣΟΦ"`,
		`addresses[type eq "work" and locality eq "Paris"]`, `addresses.country eq "FR"`, `addresses pr`,
		`addresses[postalCode sw "7"] and not (addresses.region pr)`,
	} {
		f.Add(seed, "userName")
	}
	p := newProvisioner(f)
	seedPeople(p)
	f.Fuzz(func(t *testing.T, filter, sortBy string) {
		p.T = t
		r := p.do(http.MethodGet, "/Users?count=5&filter="+url.QueryEscape(filter)+"&sortBy="+url.QueryEscape(sortBy), nil)
		mustBeSCIMAnswer(t, r.Status, r.Body, r.Header.Get("Content-Type"))
	})
}

// FuzzCreateMapping drives POST .../scim/attribute-mappings with any SCIM
// path and target: a 201 whose path, given again, is the same mapping
// (409), or a 4xx in the admin API's shape.
func FuzzCreateMapping(f *testing.F) {
	for _, seed := range [][2]string{
		{"title", "attributes.city"}, {`addresses[type eq "work"].locality`, "firstName"},
		{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:costCenter", "lastName"},
		{"urn:ietf:params:scim:schemas:extension:acme:2.0:User:badge", "attributes.city"},
		{`phoneNumbers[type eq "mobile"].value`, "firstName"}, {`addresses[type eq "x" or type eq "y"].locality`, "firstName"},
		{"name.formatted", "attributes.nope"}, {"urn:x", "firstName"}, {`emails[`, ""},
	} {
		f.Add(seed[0], seed[1])
	}
	s := newServer(f)
	s.customAttribute(map[string]any{"name": "city", "type": "string"})
	f.Fuzz(func(t *testing.T, path, target string) {
		s.T = t
		r := s.Admin(http.MethodPost, mappingsPath, map[string]any{"scimPath": path, "target": target})
		if r.Status >= 500 || r.Status >= 400 && r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		if r.Status != http.StatusCreated {
			return
		}
		m := r.Object(t)
		again := s.Admin(http.MethodPost, mappingsPath, map[string]any{"scimPath": m["scimPath"], "target": "lastName"})
		if again.Status != http.StatusConflict {
			t.Fatalf("the canonical path %q of %q is not the same mapping: %d %s", m["scimPath"], path, again.Status, again.Body)
		}
		if d := s.Admin(http.MethodDelete, mappingsPath+"/"+m["id"].(string), nil); d.Status != http.StatusNoContent {
			t.Fatalf("delete: %d", d.Status)
		}
	})
}

// FuzzPatchUser drives PATCH /Users/{id} with any body: PATCH operations,
// their paths and values.
func FuzzPatchUser(f *testing.F) {
	for _, seed := range []string{
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false,"name.givenName":"x"}}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"emails[type eq \"work\"].value","value":"a@b.c"}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"emails[type eq \"home\"]"}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":"m"}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"userName","value":"alice"}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"emails","value":[{"value":"x"}]}]}`,
		`{"Operations":[]}`, `[]`, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"emails[","value":1}]}`,
	} {
		f.Add([]byte(seed))
	}
	p := newProvisioner(f)
	ids := seedPeople(p)
	id := ids["bob"]
	f.Fuzz(func(t *testing.T, body []byte) {
		p.T = t
		before := p.do(http.MethodGet, "/Users/"+id, nil)
		r := p.do(http.MethodPatch, "/Users/"+id, body)
		mustBeSCIMAnswer(t, r.Status, r.Body, r.Header.Get("Content-Type"))
		after := p.do(http.MethodGet, "/Users/"+id, nil)
		if r.Status >= 400 && after.Header.Get("ETag") != before.Header.Get("ETag") {
			t.Fatalf("a refused PATCH (%d %s) changed the user", r.Status, r.Body)
		}
		if r.Status == http.StatusOK && after.Status != http.StatusOK {
			t.Fatalf("the user does not read back after a PATCH: %d %s", after.Status, after.Body)
		}
	})
}

// FuzzCreateUser drives POST /Users with any body.
func FuzzCreateUser(f *testing.F) {
	for _, seed := range []string{
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"bjensen","name":{"givenName":"B"},"emails":[{"value":"b@example.com","primary":true}]}`,
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"userName":"x","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"m"}}}`,
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"alice"}`,
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"y","active":"True","addresses":[{"formatted":"a\nb"}]}`,
		`{"userName":1}`, `null`, `{"schemas":["x"]}`,
	} {
		f.Add([]byte(seed))
	}
	p := newProvisioner(f)
	seedPeople(p)
	f.Fuzz(func(t *testing.T, body []byte) {
		p.T = t
		r := p.do(http.MethodPost, "/Users", body)
		mustBeSCIMAnswer(t, r.Status, r.Body, r.Header.Get("Content-Type"))
		if r.Status == http.StatusCreated {
			loc := r.Header.Get("Location")
			u, _ := url.Parse(loc)
			got := p.scim(http.MethodGet, u.Path, p.cred, nil)
			if got.Status != http.StatusOK {
				t.Fatalf("created at %s, which answers %d", loc, got.Status)
			}
			p.scim(http.MethodDelete, u.Path, p.cred, nil)
		}
	})
}
