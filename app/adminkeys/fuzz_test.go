package adminkeys_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/adminkeys"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

// FuzzAdminAPIKey drives the check of a presented admin API key: its
// parser (ParseKey), then GET /admin/auth/me with the input as
// X-Admin-API-Key and as a Bearer token. What parses has the key's exact
// form; the input is accepted only as the key made here (or, in the
// header, the bootstrap key), else answered 401 in the API's shape, never
// a server fault.
func FuzzAdminAPIKey(f *testing.F) {
	s := realapp.New(f, withClock(newClock()))
	r := s.Admin(http.MethodPost, keysPath, map[string]any{"name": "fuzz", "permissions": []string{"users:read"}})
	apptest.MustStatus(f, r, http.StatusCreated)
	var made struct{ ID, APIKey string }
	r.Decode(f, &made)
	key := made.APIKey
	id := made.ID
	for _, seed := range []string{
		key, key[:len(key)-1] + "B", key[:len(key)-1], key + "A", strings.ToUpper(key), "ipk_" + strings.ToUpper(id) + key[20:],
		"ipk_", "ipk_" + id + "_", "ipk_" + id + "-" + key[21:], key[:len(key)-2] + "==", strings.ReplaceAll(key, "_", "/"),
		" " + key, key + "\n", "idp_0123456789ab_" + strings.Repeat("A", 43), apptest.APIKey, "", "Bearer " + key,
		"ipk_" + id + "_" + strings.Repeat("\x00", 43), "ipk_ÿÿÿÿÿÿÿÿ_" + key[21:],
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, presented string) {
		if got := adminkeys.ParseKey(presented); got != "" {
			rest := strings.TrimPrefix(presented, adminkeys.Mark)
			if !strings.HasPrefix(presented, adminkeys.Mark) || len(rest) != 16+1+43 || rest[:16] != got || rest[16] != '_' ||
				strings.Trim(got, "0123456789abcdef") != "" ||
				strings.Trim(rest[17:], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
				t.Fatalf("ParseKey(%q) = %q: not the form ipk_<16 hex>_<43 base64url>", presented, got)
			}
		}
		for _, header := range []string{"X-Admin-API-Key", "Authorization"} {
			req := httptest.NewRequest(http.MethodGet, "/admin/auth/me", nil)
			req.RemoteAddr = apptest.ClientAddr
			value := presented
			if header == "Authorization" {
				value = "Bearer " + presented
			}
			req.Header[header] = []string{value}
			rec := httptest.NewRecorder()
			s.Handler.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusOK:
				var me struct{ ID string }
				if err := json.Unmarshal(rec.Body.Bytes(), &me); err != nil {
					t.Fatalf("%s %q: 200 %s", header, presented, rec.Body)
				}
				named := presented == key && me.ID == id
				bootstrap := header == "X-Admin-API-Key" && presented == apptest.APIKey && me.ID == ""
				if !named && !bootstrap {
					t.Fatalf("%s %q accepted as %s", header, presented, rec.Body)
				}
			case http.StatusUnauthorized:
				if rec.Header().Get("Content-Type") != "application/json" || !strings.Contains(rec.Body.String(), `"error":"unauthorized"`) {
					t.Fatalf("%s %q: 401 %q %s", header, presented, rec.Header().Get("Content-Type"), rec.Body)
				}
			default:
				t.Fatalf("%s %q: %d %s", header, presented, rec.Code, rec.Body)
			}
		}
	})
}
