package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// BenchmarkRenderLoginPage is the cost of one hosted page on top of its
// handler's reads: nonce, language negotiation, the realm's theme, the
// templ render.
func BenchmarkRenderLoginPage(b *testing.B) {
	s := newTestServer(b)
	realm := &store.Realm{Name: "acme", DisplayName: "Acme Corp", ThemeName: "idenplane-dark",
		Theme: map[string]any{"primaryColor": "#ff5500", "logoUrl": "https://cdn.example.test/acme.png"}}
	req := signin.WithRealm(httptest.NewRequest(http.MethodGet, "/realms/acme/login", nil), realm)
	req.Header.Set("Accept-Language", "de-CH, de;q=0.9, en;q=0.5")
	form := ui.LoginForm{Action: "/realms/acme/login", AuthRequestID: "0b3f2a1e", CSRFToken: "token",
		ClientName: "Shop", Username: "alice", Error: "login.error.invalid", ForgotURL: "/realms/acme/forgot-password"}
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		if err := s.app.pages.Render(w, req, http.StatusOK, ui.Login(s.app.pages.Page("login.title"), form)); err != nil {
			b.Fatal(err)
		}
	}
}
