package migration

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/idenplane/idenplane/app/apperr"
)

// The parsers of other products' exports take what an administrator
// uploads: whatever the bytes, they answer a translation or a 400 naming
// the JSON path at fault, never a panic or a server error.

// fixture reads a file of ../shared/fixtures for a seed, nil when the
// fixtures are not there (the HTTP tests of app say so).
func fixture(parts ...string) []byte {
	for _, up := range []string{filepath.Join("..", "..", ".."), filepath.Join("..", "..", "..", "..")} {
		b, err := os.ReadFile(filepath.Join(append([]string{up, "shared", "fixtures"}, parts...)...))
		if err == nil {
			return b
		}
	}
	return nil
}

func mustRefuseWithPath(t *testing.T, err error) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Field == "" {
		t.Fatalf("refusal %v (%T), want a 400 naming a path", err, err)
	}
}

func FuzzKeycloakExport(f *testing.F) {
	for _, name := range []string{"quickstart-device.json", "quickstart-authz.json", "quickstart-spa.json", "hashed-credentials-realm.json"} {
		if b := fixture("keycloak", name); b != nil {
			f.Add(b)
		}
	}
	for _, s := range []string{`{}`, `{"realm":"a"}`, `[]`, `null`, `{"realm":"a","users":[{"username":"u","credentials":[{"type":"password",` +
		`"secretData":"{\"value\":\"AAAA\",\"salt\":\"AAAA\"}","credentialData":"{\"hashIterations\":1,\"algorithm\":\"pbkdf2-sha256\"}"}]}]}`,
		`{"realm":"a","users":[{"username":"u","credentials":[{"type":"otp","secretData":"{\"value\":\"x\"}",` +
			`"credentialData":"{\"subType\":\"totp\",\"secretEncoding\":\"BASE32\"}"}]}]}`,
		`{"realm":"a","groups":[{"name":"g","subGroups":[{"name":"h","realmRoles":["r"]}]}],"roles":{"realm":[{"name":"r",` +
			`"composites":{"realm":["r","s"],"client":{"c":["x"]}}}]}}`,
		`{"realm":"a","clients":[{"clientId":"c","redirectUris":["/x","*"],"attributes":{"k":1},"protocolMappers":[{}]}]}`,
		`{"realm":"a","passwordPolicy":"length(x) and digits(2","smtpServer":{"port":"70000"}}`,
		`{"realm":"a","users":[{"username":"u","credentials":[{"type":"password","hashedSaltedValue":"AAAA","salt":"AAAA",` +
			`"algorithm":"argon2","hashIterations":1}]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ReadKeycloak(data)
		if err != nil {
			mustRefuseWithPath(t, err)
			return
		}
		var out outRealm
		if err := json.Unmarshal(doc, &out); err != nil || out.Name == "" || out.FormatVersion != 1 {
			t.Fatalf("translation %s: %v", doc, err)
		}
	})
}

func FuzzAuth0Export(f *testing.F) {
	if u, p := fixture("auth0", "users.ndjson"), fixture("auth0", "passwords.ndjson"); u != nil {
		f.Add(u, p)
	}
	f.Add([]byte(`{"email":"a@example.test","custom_password_hash":{"algorithm":"pbkdf2","hash":{"value":"$pbkdf2-sha512$i=1,l=64$AA$AA"}}}`),
		[]byte(`{"_id":{"$oid":"1"},"passwordHash":"$2b$10$x"}`))
	f.Add([]byte("[{\"email\":\"a@example.test\",\"blocked\":\"no\"}]"), []byte(""))
	f.Add([]byte("{\"email\":\n"), []byte("{}"))
	f.Fuzz(func(t *testing.T, users, passwords []byte) {
		if _, err := ReadAuth0(users, passwords); err != nil {
			mustRefuseWithPath(t, err)
		}
	})
}

func FuzzUserList(f *testing.F) {
	for _, s := range []string{`[]`, `[{"username":"a","passwordHash":"$argon2id$v=19$m=1,t=1,p=1$$"}]`, `{}`,
		`[{"username":"a","attributes":{"x":["1"],"y":"2","1z":[]},"clientRoles":{"c":["r"]},"groups":["/g"]}]`,
		`[{"username":"a"},{"username":"A"}]`, `[{"username":"a","id":"not-a-uuid"}]`, `[{"username":"a","requiredActions":[1]}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ReadUserList(data); err != nil {
			mustRefuseWithPath(t, err)
		}
	})
}
