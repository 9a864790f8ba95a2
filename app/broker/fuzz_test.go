package broker

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/idenplane/idenplane/app/validate"
)

// FuzzCallbackParams drives readCallback, the reading of the query an
// upstream (or anyone) sends to the callback: what it accepts has a state
// of bounded length and either a code or an error, each given once.
func FuzzCallbackParams(f *testing.F) {
	for _, seed := range []string{
		"state=abc&code=xyz",
		"state=abc&error=access_denied&error_description=the+user+said+no",
		"code=xyz", "state=", "state=a&state=b&code=c", "state=a&code=b&code=c",
		"state=" + strings.Repeat("s", 600) + "&code=x", "state=%ZZ&code=x", "state=a;code=b", "error=x&state=y",
		"state=a&code=b&iss=https%3A%2F%2Fidp.example.test&session_state=z",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http hands the handler what it could parse; so do we
		}
		p, err := readCallback(q)
		if err != nil {
			return
		}
		if p.state == "" || len(p.state) > 512 || (p.code == "" && p.err == "") {
			t.Fatalf("accepted %q as %+v", raw, p)
		}
		for name, vs := range q {
			if len(vs) > 1 {
				t.Fatalf("accepted %s twice in %q", name, raw)
			}
		}
	})
}

// FuzzUpstreamProfile drives decodeProfile and mapClaims, the reading of
// an upstream's userinfo answer (or an ID token's claims) through a claim
// mapping with nested paths, attributes and roles: a profile accepted has
// a subject, a username in lower case, an email that is one or none, and
// only the roles the mapping names.
func FuzzUpstreamProfile(f *testing.F) {
	for _, seed := range []string{
		`{"sub":"u1","preferred_username":"Alice","email":"alice@example.test","email_verified":true,"given_name":"Alice"}`,
		`{"id":583231,"login":"octocat","name":"Mona","email":null}`,
		`{"sub":"u2","email":"not an email","groups":["admins","staff"],"dept":"ops"}`,
		`{"sub":"u3","realm_access":{"roles":["admins"]},"email_verified":"true"}`,
		`{"sub":12345678901234567890,"groups":"admins staff"}`,
		`{"sub":""}`, `[]`, `null`, `{"sub":"a\u0000b"}`, `{"sub":{"x":1}}`, `{"sub":"u4"} trailing`,
	} {
		f.Add([]byte(seed))
	}
	m := effectiveMapping(TypeOIDC, ClaimMapping{Attributes: map[string]string{"department": "dept"},
		RolesClaim: "groups", Roles: map[string]string{"admins": "admin", "staff": "user"}})
	f.Fuzz(func(t *testing.T, body []byte) {
		var claims map[string]any
		if err := decodeProfile(body, &claims); err != nil {
			return
		}
		id, err := mapClaims(m, claims)
		if err != nil {
			return
		}
		if id.Subject == "" || !utf8.ValidString(id.Subject) || validate.Setting("subject", id.Subject, 255) != nil {
			t.Fatalf("subject %q accepted", id.Subject)
		}
		if id.Username == "" || id.Username != strings.ToLower(id.Username) {
			t.Fatalf("username %q", id.Username)
		}
		if id.Email != "" {
			if norm, err := validate.NormalizeEmail(id.Email); err != nil || norm != id.Email {
				t.Fatalf("email %q accepted", id.Email)
			}
		}
		for _, role := range id.Roles {
			if role != "admin" && role != "user" {
				t.Fatalf("role %q not in the mapping", role)
			}
		}
	})
}
