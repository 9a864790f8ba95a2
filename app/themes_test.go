package app

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui/mailtheme"
)

// The realms' themes (app/themes) end to end: through the router, against
// a real database, as an administrator and as the pages and mails wear
// them.

const themesPath = "/admin/realms/acme/themes"

// themeBody is a theme of the tests: a primary colour of its own and the
// sign-in title said its own way.
func themeBody(name string, extra map[string]any) map[string]any {
	b := map[string]any{"name": name, "preset": "idenplane",
		"tokens":   map[string]any{"colors": map[string]any{"primary": "#0b5fff"}, "radius": map[string]any{"control": "6px"}},
		"messages": map[string]any{"en": map[string]any{"login.title": "Welcome to Acme"}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// createTheme creates a theme and answers its ID.
func (s *testServer) createTheme(body map[string]any) string {
	s.t.Helper()
	r := s.admin(http.MethodPost, themesPath, body)
	mustStatus(s.t, r, http.StatusCreated)
	return r.object(s.t)["id"].(string)
}

// themePNG is a w×h PNG.
func themePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload sends data as the file of an image upload, named filename and
// declared as contentType, as a browser's form would.
func (s *testServer) upload(realm, filename, contentType string, data []byte) *testResponse {
	s.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filename))
	h.Set("Content-Type", contentType)
	part, err := w.CreatePart(h)
	if err != nil {
		s.t.Fatal(err)
	}
	part.Write(data)
	w.Close()
	return s.admin(http.MethodPost, "/admin/realms/"+realm+"/themes/assets/upload", body.Bytes(), "Content-Type: "+w.FormDataContentType())
}

// A theme's life: a draft, published as versions 1 and 2 that stay as
// they were, version 1 restored as the draft, and a deletion that a
// realm's pick holds back.
func TestThemeLifecycle(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	r := s.admin(http.MethodPost, themesPath, map[string]any{"name": "brand", "tokens": map[string]any{
		"colors": map[string]any{"primary": "#0b5fff"}}})
	mustStatus(t, r, http.StatusCreated)
	created := r.object(t)
	id := created["id"].(string)
	if created["preset"] != "idenplane" || created["publishedVersion"] != 0.0 || !strings.HasSuffix(r.Header.Get("Location"), "/themes/"+id) {
		t.Fatalf("created %s, Location %s", r.Body, r.Header.Get("Location"))
	}
	if list := s.admin(http.MethodGet, themesPath, nil); list.Status != http.StatusOK || !strings.Contains(string(list.Body), id) {
		t.Fatalf("list %d %s", list.Status, list.Body)
	}

	publish := func(want int) map[string]any {
		t.Helper()
		r := s.admin(http.MethodPost, themesPath+"/"+id+"/publish", nil)
		mustStatus(t, r, want)
		return r.object(t)
	}
	if v := publish(http.StatusCreated); v["version"] != 1.0 || v["themeId"] != id {
		t.Fatalf("version 1: %v", v)
	}
	// Nothing changed: nothing published, the newest version answered.
	if v := publish(http.StatusOK); v["version"] != 1.0 {
		t.Fatalf("publishing the same draft: %v", v)
	}
	mustStatus(t, s.admin(http.MethodPut, themesPath+"/"+id, map[string]any{"name": "brand", "preset": "high-contrast",
		"description": "the second look"}), http.StatusOK)
	if v := publish(http.StatusCreated); v["version"] != 2.0 || v["preset"] != "high-contrast" {
		t.Fatalf("version 2: %v", v)
	}
	var versions []map[string]any
	r = s.admin(http.MethodGet, themesPath+"/"+id+"/versions", nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &versions)
	if len(versions) != 2 || versions[0]["version"] != 2.0 || versions[1]["version"] != 1.0 || versions[1]["preset"] != "idenplane" {
		t.Fatalf("versions %s", r.Body)
	}

	// Restore version 1: the draft wears its look again, under the
	// theme's name and description; the versions stay as they were.
	r = s.admin(http.MethodPost, themesPath+"/"+id+"/restore/1", nil)
	mustStatus(t, r, http.StatusOK)
	restored := r.object(t)
	if restored["preset"] != "idenplane" || restored["description"] != "the second look" || restored["publishedVersion"] != 2.0 {
		t.Fatalf("restored %s", r.Body)
	}
	r = s.admin(http.MethodGet, themesPath+"/"+id+"/versions", nil)
	var after []map[string]any
	r.decode(t, &after)
	if len(after) != 2 || after[0]["preset"] != "high-contrast" || after[1]["preset"] != "idenplane" {
		t.Fatalf("versions after the restore %s", r.Body)
	}
	if v := publish(http.StatusCreated); v["version"] != 3.0 || v["preset"] != "idenplane" {
		t.Fatalf("version 3: %v", v)
	}

	for _, c := range []struct{ method, path string }{
		{http.MethodGet, themesPath + "/no-such-theme"},
		{http.MethodPut, themesPath + "/no-such-theme"},
		{http.MethodDelete, themesPath + "/no-such-theme"},
		{http.MethodPost, themesPath + "/no-such-theme/publish"},
		{http.MethodGet, themesPath + "/no-such-theme/versions"},
		{http.MethodPost, themesPath + "/" + id + "/restore/9"},
		{http.MethodPost, themesPath + "/" + id + "/restore/0"},
		{http.MethodPost, themesPath + "/" + id + "/restore/latest"},
		{http.MethodGet, "/admin/realms/nope/themes"},
	} {
		var body any
		if c.method == http.MethodPut {
			body = map[string]any{"name": "x"}
		}
		mustError(t, s.admin(c.method, c.path, body), http.StatusNotFound, "not_found", "")
	}

	// Picked by the realm's sign-in pages: not deleted, not renamed.
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"loginTheme": "brand"}), http.StatusOK)
	if got := s.admin(http.MethodGet, themesPath+"/"+id, nil).object(t)["usedBy"]; fmt.Sprint(got) != "[loginTheme]" {
		t.Errorf("usedBy %v", got)
	}
	mustError(t, s.admin(http.MethodDelete, themesPath+"/"+id, nil), http.StatusConflict, "conflict", "loginTheme")
	mustError(t, s.admin(http.MethodPut, themesPath+"/"+id, map[string]any{"name": "renamed"}), http.StatusConflict, "conflict", "name")
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"loginTheme": "high-contrast"}), http.StatusOK)
	mustStatus(t, s.admin(http.MethodDelete, themesPath+"/"+id, nil), http.StatusNoContent)
	mustError(t, s.admin(http.MethodGet, themesPath+"/"+id+"/versions", nil), http.StatusNotFound, "not_found", "")

	// The built-in presets, by name and with their tokens.
	var names []string
	s.admin(http.MethodGet, "/admin/realms/themes", nil).decode(t, &names)
	if !slices.Equal(names, []string{"idenplane", "idenplane-dark", "high-contrast"}) {
		t.Errorf("preset names %v", names)
	}
	var builtIn struct {
		Presets []struct {
			Name   string
			Tokens struct{ Colors map[string]string }
		}
		Pages  []string
		Emails []struct {
			Name      string
			Variables []struct{ Name string }
		}
	}
	r = s.admin(http.MethodGet, themesPath+"/built-in", nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &builtIn)
	if len(builtIn.Presets) != 3 || builtIn.Presets[1].Name != "idenplane-dark" || builtIn.Presets[1].Tokens.Colors["background"] != "#0b1220" ||
		len(builtIn.Pages) != 6 || len(builtIn.Emails) != len(mailtheme.Kinds) {
		t.Errorf("built-in %s", r.Body)
	}
}

// A realm's fields pick a preset or a published theme of the realm, and
// nothing else.
func TestThemePicks(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	id := s.createTheme(themeBody("brand", nil))
	for _, c := range []struct {
		body        map[string]any
		status      int
		code, field string
	}{
		{map[string]any{"loginTheme": "brand"}, 400, "invalid_field", "loginTheme"}, // not published yet
		{map[string]any{"accountTheme": "nope"}, 400, "invalid_field", "accountTheme"},
		{map[string]any{"emailTheme": "../etc"}, 400, "invalid_field", "emailTheme"},
		{map[string]any{"loginTheme": "idenplane-dark"}, 200, "", ""},
	} {
		r := s.admin(http.MethodPatch, "/admin/realms/acme", c.body)
		if c.status == 200 {
			mustStatus(t, r, 200)
		} else {
			mustError(t, r, c.status, c.code, c.field)
		}
	}
	mustError(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "other", "loginTheme": "brand"}),
		http.StatusBadRequest, "invalid_field", "loginTheme")
	mustStatus(t, s.admin(http.MethodPost, themesPath+"/"+id+"/publish", nil), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"loginTheme": "brand", "accountTheme": "brand",
		"emailTheme": "brand"}), http.StatusOK)
	realm := s.admin(http.MethodGet, "/admin/realms/acme", nil).object(t)
	if realm["loginTheme"] != "brand" || realm["accountTheme"] != "brand" || realm["emailTheme"] != "brand" {
		t.Fatalf("realm %v", realm)
	}
	mustError(t, s.admin(http.MethodDelete, themesPath+"/"+id, nil), http.StatusConflict, "conflict", "loginTheme")

	// Deleting the realm deletes its themes and images.
	asset := s.upload("acme", "logo.png", "image/png", themePNG(t, 8, 8))
	mustStatus(t, asset, http.StatusCreated)
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme", nil), http.StatusOK)
	s.createRealm("acme")
	var list []any
	s.admin(http.MethodGet, themesPath, nil).decode(t, &list)
	if len(list) != 0 {
		t.Errorf("a new realm of the old name has themes: %v", list)
	}
	if r := s.request(http.MethodGet, "/realms/acme/themes/assets/"+asset.object(t)["id"].(string), nil); r.Status != http.StatusNotFound {
		t.Errorf("a deleted realm's image: %d", r.Status)
	}
}

// What could break a page or a mail is refused at save, naming the field.
func TestThemeRefusals(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createTheme(themeBody("taken", nil))
	colors := func(c map[string]any) map[string]any { return map[string]any{"tokens": map[string]any{"colors": c}} }
	for _, c := range []struct {
		name        string
		body        map[string]any
		status      int
		code, field string
		says        string
	}{
		{"no name", map[string]any{"preset": "idenplane"}, 400, "invalid_field", "name", ""},
		{"a preset's name", themeBody("high-contrast", nil), 400, "invalid_field", "name", "preset"},
		{"a name taken", themeBody("taken", nil), 409, "conflict", "name", ""},
		{"an unknown preset", themeBody("x", map[string]any{"preset": "keycloak"}), 400, "invalid_field", "preset", ""},
		{"an unknown token", themeBody("x", colors(map[string]any{"buttonGlow": "#fff"})), 400, "unknown_field", "tokens.colors.buttonGlow", "not a design token"},
		{"an unknown group", themeBody("x", map[string]any{"tokens": map[string]any{"shadows": map[string]any{}}}), 400, "unknown_field", "shadows", ""},
		{"a colour that is CSS", themeBody("x", colors(map[string]any{"primary": "#fff;}body{display:none"})), 400, "invalid_field", "tokens.colors.primary", ""},
		{"a colour with alpha", themeBody("x", colors(map[string]any{"card": "#ffffff80"})), 400, "invalid_field", "tokens.colors.card", ""},
		{"unreadable text", themeBody("x", colors(map[string]any{"text": "#eeeeee"})), 400, "invalid_field", "tokens.colors.text", "contrast"},
		{"a font with markup", themeBody("x", map[string]any{"tokens": map[string]any{"fonts": map[string]any{"body": "x</style>"}}}), 400, "invalid_field", "tokens.fonts.body", ""},
		{"a radius too large", themeBody("x", map[string]any{"tokens": map[string]any{"radius": map[string]any{"card": "200px"}}}), 400, "invalid_field", "tokens.radius.card", ""},
		{"an unknown message key", themeBody("x", map[string]any{"messages": map[string]any{"en": map[string]any{"login.titel": "Hi"}}}), 400, "unknown_field", "messages.en.login.titel", "no message"},
		{"a language not shipped", themeBody("x", map[string]any{"messages": map[string]any{"xx": map[string]any{"login.title": "Hi"}}}), 400, "invalid_field", "messages.xx", ""},
		{"a placeholder the message lacks", themeBody("x", map[string]any{"messages": map[string]any{"de": map[string]any{"login.title": "Hallo {0}"}}}), 400, "invalid_field", "messages.de.login.title", "{0}"},
		{"an empty message", themeBody("x", map[string]any{"messages": map[string]any{"en": map[string]any{"login.submit": " "}}}), 400, "invalid_field", "messages.en.login.submit", ""},
		{"an email template using an unknown variable", themeBody("x", map[string]any{"emails": map[string]any{"verify-email": map[string]any{
			"html": `<p>{{.Greeting}}</p><p>{{.Password}}</p>`}}}), 400, "invalid_field", "emails.verify-email.html", "unknown variable .Password"},
		{"an email template that loops", themeBody("x", map[string]any{"emails": map[string]any{"test": map[string]any{
			"text": `{{range .Realm}}x{{end}}`}}}), 400, "invalid_field", "emails.test.text", "range"},
		{"an email template that does not parse", themeBody("x", map[string]any{"emails": map[string]any{"test": map[string]any{
			"subject": `{{.Realm`}}}), 400, "invalid_field", "emails.test.subject", ""},
		{"an unknown mail", themeBody("x", map[string]any{"emails": map[string]any{"welcome": map[string]any{"subject": "Hi"}}}), 400, "unknown_field", "emails.welcome", ""},
		{"a logo over http", themeBody("x", map[string]any{"logo": map[string]any{"url": "http://cdn.example.test/logo.png"}}), 400, "invalid_field", "logo.url", ""},
		{"a logo that is script", themeBody("x", map[string]any{"logo": map[string]any{"url": "javascript:alert(1)"}}), 400, "invalid_field", "logo.url", ""},
		{"a logo both ways", themeBody("x", map[string]any{"logo": map[string]any{"url": "https://cdn.example.test/l.png", "assetId": "a"}}), 400, "invalid_field", "logo", ""},
		{"a favicon never uploaded", themeBody("x", map[string]any{"favicon": map[string]any{"assetId": "6f1c7a43-0000-4000-8000-000000000000"}}), 400, "invalid_field", "favicon.assetId", ""},
		{"a field of no theme", themeBody("x", map[string]any{"css": "body{}"}), 400, "unknown_field", "css", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.admin(http.MethodPost, themesPath, c.body)
			mustError(t, r, c.status, c.code, c.field)
			if !strings.Contains(string(r.Body), c.says) {
				t.Errorf("%s does not say %q", r.Body, c.says)
			}
		})
	}
	// A refused draft leaves the stored one as it was.
	id := s.createTheme(themeBody("kept", nil))
	mustError(t, s.admin(http.MethodPut, themesPath+"/"+id, themeBody("kept", map[string]any{"preset": "nope"})),
		http.StatusBadRequest, "invalid_field", "preset")
	if got := s.admin(http.MethodGet, themesPath+"/"+id, nil).object(t)["preset"]; got != "idenplane" {
		t.Errorf("preset after a refused write: %v", got)
	}
}

// Images are told from their bytes, kept within their limits, and served
// to anyone with their type, hash and a long cache life.
func TestThemeAssets(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	logo := themePNG(t, 120, 40)
	r := s.upload("acme", "logo.bin", "application/octet-stream", logo)
	mustStatus(t, r, http.StatusCreated)
	a := r.object(t)
	if a["contentType"] != "image/png" || a["width"] != 120.0 || a["height"] != 40.0 || a["size"] != float64(len(logo)) {
		t.Fatalf("asset %s", r.Body)
	}
	path := strings.TrimPrefix(a["url"].(string), "http://localhost:3000")
	if !strings.HasPrefix(path, "/realms/acme/themes/assets/") || r.Header.Get("Location") != a["url"] {
		t.Fatalf("url %v, Location %s", a["url"], r.Header.Get("Location"))
	}
	got := s.request(http.MethodGet, path, nil)
	mustStatus(t, got, http.StatusOK)
	etag := `"` + a["sha256"].(string) + `"`
	for k, want := range map[string]string{"Content-Type": "image/png", "X-Content-Type-Options": "nosniff", "ETag": etag,
		"Cache-Control": "public, max-age=31536000, immutable"} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s: %q, want %q", k, v, want)
		}
	}
	if !bytes.Equal(got.Body, logo) {
		t.Error("served other bytes")
	}
	mustStatus(t, s.request(http.MethodGet, path, nil, "If-None-Match: "+etag), http.StatusNotModified)
	if r := s.request(http.MethodHead, path, nil); r.Status != http.StatusOK || len(r.Body) != 0 {
		t.Errorf("HEAD: %d %d bytes", r.Status, len(r.Body))
	}
	for _, p := range []string{"/realms/acme/themes/assets/no-such-image", "/realms/nope/themes/assets/" + a["id"].(string)} {
		r := s.request(http.MethodGet, p, nil)
		if r.Status != http.StatusNotFound || strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s", p, r.Status, r.Header.Get("Content-Type"))
		}
	}

	svg := []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>`)
	for _, c := range []struct {
		name, filename, ct string
		data               []byte
		status             int
		code, says         string
	}{
		{"svg with a script", "logo.svg", "image/svg+xml", svg, 400, "invalid_field", "SVG is refused"},
		{"svg named png", "logo.png", "image/png", svg, 400, "invalid_field", "SVG is refused"},
		{"html named png", "logo.png", "image/png", []byte("<!DOCTYPE html><html><body><script>alert(1)</script></body></html>"), 400,
			"invalid_field", "text/html"},
		{"too many pixels", "big.png", "image/png", themePNG(t, 2000, 10), 400, "invalid_field", "2000×10"},
		{"too many bytes", "big.png", "image/png", append(themePNG(t, 10, 10), make([]byte, 600<<10)...), 413, "payload_too_large", "512 KiB"},
		{"nothing", "empty.png", "image/png", nil, 400, "invalid_field", "empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.upload("acme", c.filename, c.ct, c.data)
			mustError(t, r, c.status, c.code, "file")
			if !strings.Contains(string(r.Body), c.says) {
				t.Errorf("%s does not say %q", r.Body, c.says)
			}
		})
	}
	mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/themes/assets/upload", map[string]any{"file": "x"}),
		http.StatusUnsupportedMediaType, "unsupported_media_type", "")
}

// Every page and every mail renders with a draft, the stored one or one
// sent along, through the real components; nothing is stored.
func TestThemePreview(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	// A template of each mail that prints every variable it offers, so a
	// variable a mail does not fill fails here.
	emails := map[string]any{}
	for _, k := range mailtheme.Kinds {
		var b strings.Builder
		b.WriteString("<p>THEMED ")
		for _, v := range k.VariableNames(mailtheme.PartHTML) {
			b.WriteString(v + "=[{{." + v + "}}] ")
		}
		b.WriteString("</p>")
		emails[k.Name] = map[string]any{"subject": "Themed {{.Realm}}", "html": b.String(), "text": "THEMED {{.Subject}}"}
	}
	id := s.createTheme(themeBody("brand", map[string]any{"emails": emails,
		"messages": map[string]any{"en": map[string]any{"login.title": "Welcome to Acme"}, "de": map[string]any{"login.title": "Willkommen bei Acme"}}}))
	var builtIn struct{ Pages []string }
	s.admin(http.MethodGet, themesPath+"/built-in", nil).decode(t, &builtIn)
	for _, page := range builtIn.Pages {
		t.Run(page, func(t *testing.T) {
			r := s.admin(http.MethodPost, themesPath+"/preview", map[string]any{"page": page, "themeId": id})
			mustStatus(t, r, http.StatusOK)
			var p struct{ HTML, ContentSecurityPolicy, Locale string }
			r.decode(t, &p)
			nonce := cspNonce.FindStringSubmatch(p.ContentSecurityPolicy)
			if nonce == nil || p.Locale != "en" || !strings.Contains(p.HTML, `<html lang="en"`) ||
				!strings.Contains(p.HTML, `<style nonce="`+nonce[1]+`">body{--primary:#0b5fff;--radius:6px;}</style>`) ||
				strings.Contains(p.HTML, "<script") {
				t.Fatalf("preview %s", r.Body)
			}
			if page == "sign-in" && !strings.Contains(p.HTML, "<h1>Welcome to Acme</h1>") {
				t.Errorf("the theme's title is not on the sign-in page: %s", p.HTML)
			}
		})
	}
	for _, k := range mailtheme.Kinds {
		t.Run(k.Name, func(t *testing.T) {
			r := s.admin(http.MethodPost, themesPath+"/preview", map[string]any{"email": k.Name, "themeId": id})
			mustStatus(t, r, http.StatusOK)
			var p struct{ Subject, HTML, Text string }
			r.decode(t, &p)
			// Every variable has a value, but the logo the theme has none of.
			if p.Subject != "Themed acme" || !strings.Contains(p.HTML, "THEMED ") || p.Text != "THEMED Themed acme" ||
				strings.Count(p.HTML, "=[]") != 1 || !strings.Contains(p.HTML, "LogoURL=[]") {
				t.Fatalf("preview %s", r.Body)
			}
		})
	}
	// In German, and with a draft sent along, the preset's own look.
	r := s.admin(http.MethodPost, themesPath+"/preview", map[string]any{"page": "sign-in", "themeId": id, "locale": "de"})
	mustStatus(t, r, http.StatusOK)
	if body := string(r.Body); !strings.Contains(body, "Willkommen bei Acme") || !strings.Contains(body, `lang=\"de\"`) {
		t.Errorf("German preview %s", body)
	}
	r = s.admin(http.MethodPost, themesPath+"/preview", map[string]any{"page": "error", "theme": map[string]any{"preset": "idenplane-dark"}})
	mustStatus(t, r, http.StatusOK)
	if body := string(r.Body); !strings.Contains(body, `data-theme=\"idenplane-dark\"`) {
		t.Errorf("inline preview %s", body)
	}
	r = s.admin(http.MethodPost, themesPath+"/preview", map[string]any{"email": "verify-email", "theme": map[string]any{
		"tokens": map[string]any{"colors": map[string]any{"primary": "#7c2d12"}}}})
	mustStatus(t, r, http.StatusOK)
	if body := string(r.Body); !strings.Contains(body, "background:#7c2d12") {
		t.Errorf("a mail in the draft's colour: %s", body)
	}
	for _, c := range []struct {
		body  map[string]any
		code  string
		field string
	}{
		{map[string]any{"themeId": id}, "invalid_field", "page"},
		{map[string]any{"page": "sign-in", "email": "test", "themeId": id}, "invalid_field", "page"},
		{map[string]any{"page": "dashboard", "themeId": id}, "invalid_field", "page"},
		{map[string]any{"email": "welcome", "themeId": id}, "invalid_field", "email"},
		{map[string]any{"page": "sign-in"}, "invalid_field", "themeId"},
		{map[string]any{"page": "sign-in", "themeId": id, "locale": "tlh"}, "invalid_field", "locale"},
		{map[string]any{"page": "sign-in", "theme": map[string]any{"tokens": map[string]any{"colors": map[string]any{"nope": "#fff"}}}},
			"unknown_field", "theme.tokens.colors.nope"},
	} {
		mustError(t, s.admin(http.MethodPost, themesPath+"/preview", c.body), http.StatusBadRequest, c.code, c.field)
	}
	mustError(t, s.admin(http.MethodPost, themesPath+"/preview", map[string]any{"page": "sign-in", "themeId": "nope"}),
		http.StatusNotFound, "not_found", "")
}

// A realm whose loginTheme picks a published theme shows its tokens, its
// logo and its texts on the sign-in page, under the same security
// policy; its accountTheme dresses the account pages.
func TestThemeWornBySignInPage(t *testing.T) {
	e := newCodeflowEnv(t)
	e.client("web", nil)
	up := e.upload("acme", "logo.png", "image/png", themePNG(t, 64, 64))
	mustStatus(t, up, http.StatusCreated)
	assetID := up.object(t)["id"].(string)
	brand := e.createTheme(themeBody("brand", map[string]any{"logo": map[string]any{"assetId": assetID},
		"favicon": map[string]any{"url": "https://cdn.example.test/favicon.ico"}}))
	account := e.createTheme(map[string]any{"name": "account-look", "preset": "idenplane-dark",
		"tokens": map[string]any{"colors": map[string]any{"primary": "#fbbf24"}}})
	for _, id := range []string{brand, account} {
		mustStatus(t, e.admin(http.MethodPost, themesPath+"/"+id+"/publish", nil), http.StatusCreated)
	}
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"displayName": "Acme Corp",
		"loginTheme": "brand", "accountTheme": "account-look", "theme": map[string]any{"primaryColor": "#ff5500"}}), http.StatusOK)

	cfg := e.oauth2Config("web", "", "openid")
	authURL := cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	b := e.browser()
	page := b.follow(e.url, authURL)
	mustStatus(t, &testResponse{Status: page.status, Body: page.body}, http.StatusOK)
	checkPageCSP(t, page.header, true)
	body := string(page.body)
	nonce := cspNonce.FindStringSubmatch(page.header.Get("Content-Security-Policy"))[1]
	for _, want := range []string{
		`data-theme="idenplane"`,
		// The theme's tokens replace the realm's own colour.
		`<style nonce="` + nonce + `">body{--primary:#0b5fff;--radius:6px;}</style>`,
		`<img src="/realms/acme/themes/assets/` + assetID + `" alt="" class="logo">`,
		`<link rel="icon" href="https://cdn.example.test/favicon.ico">`,
		`<h1>Welcome to Acme</h1>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("sign-in page lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "#ff5500") || regexp.MustCompile(`<script(?: [^>]*)?>[^<]`).MatchString(body) {
		t.Errorf("the realm's colour, or an inline script, on the page:\n%s", body)
	}
	if logo := b.get(e.url + "/realms/acme/themes/assets/" + assetID); logo.status != http.StatusOK || logo.header.Get("Content-Type") != "image/png" {
		t.Errorf("the logo: %d %s", logo.status, logo.header.Get("Content-Type"))
	}

	// The account pages wear the accountTheme.
	e.signIn(b, authURL, "alice")
	acct := b.get(e.url + "/realms/acme/account")
	if acct.status != http.StatusOK || !strings.Contains(string(acct.body), `data-theme="idenplane-dark"`) ||
		!strings.Contains(string(acct.body), "--primary:#fbbf24;") {
		t.Errorf("account page %d:\n%s", acct.status, acct.body)
	}

	// A new version is worn at once; unpicked, the realm's own look is back.
	mustStatus(t, e.admin(http.MethodPut, themesPath+"/"+brand, themeBody("brand", map[string]any{"tokens": map[string]any{
		"colors": map[string]any{"primary": "#14532d"}}})), http.StatusOK)
	mustStatus(t, e.admin(http.MethodPost, themesPath+"/"+brand+"/publish", nil), http.StatusCreated)
	b = e.browser() // signed out: the sign-in page again
	if body := string(b.follow(e.url, authURL).body); !strings.Contains(body, "--primary:#14532d;") {
		t.Errorf("version 2 not worn:\n%s", body)
	}
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"loginTheme": ""}), http.StatusOK)
	if body := string(b.follow(e.url, authURL).body); !strings.Contains(body, "--primary:#ff5500;") || strings.Contains(body, "Welcome to Acme") {
		t.Errorf("the realm's own look not back:\n%s", body)
	}
}

// A realm whose emailTheme picks a published theme sends its mails as the
// theme has them: a template's subject, HTML and text, the theme's texts
// of the catalogues, and its colour and logo in the frame of the others.
func TestThemeWornByMail(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.setRealmEmail("acme", func(r *store.Realm) {})
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "firstName": "Alice"})
	up := s.upload("acme", "logo.png", "image/png", themePNG(t, 64, 64))
	mustStatus(t, up, http.StatusCreated)
	id := s.createTheme(map[string]any{"name": "mails", "tokens": map[string]any{"colors": map[string]any{"primary": "#7c2d12"}},
		"logo":     map[string]any{"assetId": up.object(t)["id"]},
		"messages": map[string]any{"en": map[string]any{"mail.resetPassword.intro": "Acme's own words: reset your {0} password."}},
		"emails": map[string]any{"verify-email": map[string]any{
			"subject": "{{.Name}}, confirm your address at {{.Realm}}",
			"html":    `<h1>{{.Subject}}</h1><p><a href="{{.Link}}">{{.Action}}</a></p>`,
			"text":    "Open {{.Link}} to confirm {{.Email}}.",
		}}})
	mustStatus(t, s.admin(http.MethodPost, themesPath+"/"+id+"/publish", nil), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"emailTheme": "mails"}), http.StatusOK)

	user := "/admin/realms/acme/users/" + alice["id"].(string)
	mustStatus(t, s.admin(http.MethodPost, user+"/send-verification-email", nil), http.StatusOK)
	mustStatus(t, s.admin(http.MethodPut, user+"/reset-password-email", nil), http.StatusNoContent)
	due, err := s.store.DueEmails(context.Background(), s.app.now().UnixMilli(), 10)
	if err != nil || len(due) != 2 {
		t.Fatalf("outbox %v %v", due, err)
	}
	byTemplate := map[string]*store.OutboxEmail{}
	for _, m := range due {
		byTemplate[m.Template] = m
	}
	v := byTemplate["verify-email"]
	token := verificationToken(t, v.TextBody)
	if v.Subject != "Alice, confirm your address at Acme Corp" ||
		!strings.HasPrefix(v.HTMLBody, "<h1>Alice, confirm your address at Acme Corp</h1><p><a href=\"http://") ||
		!strings.Contains(v.HTMLBody, "token="+token) || !strings.HasSuffix(v.TextBody, "token="+token+" to confirm alice@example.test.") {
		t.Errorf("verify-email:\nsubject %s\nhtml %s\ntext %s", v.Subject, v.HTMLBody, v.TextBody)
	}
	rp := byTemplate["reset-password"]
	if !strings.Contains(rp.HTMLBody, "background:#7c2d12") || !strings.Contains(rp.HTMLBody, `<img src="`+up.object(t)["url"].(string)+`"`) ||
		!strings.Contains(rp.TextBody, "Acme's own words: reset your Acme Corp password.") ||
		!strings.Contains(rp.HTMLBody, "Acme&#39;s own words: reset your Acme Corp password.") {
		t.Errorf("reset-password:\nhtml %s\ntext %s", rp.HTMLBody, rp.TextBody)
	}
}
