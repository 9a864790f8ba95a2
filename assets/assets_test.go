package assets_test

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/assets"
)

// Every provider type has an icon: the presets their own mark, the rest
// the generic one. Each is an SVG served by the server that draws only
// shapes, so a sign-in page showing it asks nothing of another server and
// runs nothing.
func TestProviderIcons(t *testing.T) {
	a, err := assets.Load()
	if err != nil {
		t.Fatal(err)
	}
	generic := a.URL("idp/generic.svg")
	seen := map[string]string{}
	for _, tc := range []struct {
		providerType string
		own          bool
	}{
		{"google", true}, {"microsoft", true}, {"github", true}, {"gitlab", true}, {"apple", true},
		{"facebook", true}, {"linkedin", true}, {"discord", true},
		{"oidc", false}, {"oauth2", false}, {"unknown", false}, {"../idenplane.css", false}, {"", false},
	} {
		u := a.ProviderIcon(tc.providerType)
		if want := regexp.MustCompile(`^/assets/idp/[a-z]+\.[0-9a-f]{12}\.svg$`); !want.MatchString(u) {
			t.Errorf("%q: icon %q", tc.providerType, u)
		}
		if (u != generic) != tc.own {
			t.Errorf("%q: icon %q, generic %q, want its own %v", tc.providerType, u, generic, tc.own)
		}
		if other, dup := seen[u]; dup && tc.own {
			t.Errorf("%q and %q share the icon %q", tc.providerType, other, u)
		}
		seen[u] = tc.providerType

		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u, nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" {
			t.Fatalf("%q: GET %s: %d %q", tc.providerType, u, rec.Code, rec.Header().Get("Content-Type"))
		}
		mustDrawOnly(t, u, rec.Body.String())
	}
}

// mustDrawOnly fails unless svg is shapes alone: no script, no element that
// loads or embeds anything, no reference (href, url(…)) in any attribute.
func mustDrawOnly(t *testing.T, name, svg string) {
	t.Helper()
	shapes := map[string]bool{"svg": true, "path": true, "circle": true, "ellipse": true, "rect": true, "g": true}
	d := xml.NewDecoder(strings.NewReader(svg))
	root := true
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: not XML: %v", name, err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root && (el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg") {
			t.Fatalf("%s: root %v, want an SVG", name, el.Name)
		}
		root = false
		if !shapes[el.Name.Local] {
			t.Errorf("%s: element %s", name, el.Name.Local)
		}
		for _, at := range el.Attr {
			if at.Name.Local == "xmlns" {
				continue
			}
			if strings.Contains(strings.ToLower(at.Name.Local), "href") || strings.HasPrefix(at.Name.Local, "on") ||
				strings.Contains(at.Value, "url(") || strings.Contains(at.Value, ":") {
				t.Errorf("%s: attribute %s=%q", name, at.Name.Local, at.Value)
			}
		}
	}
}

// Each asset is served with its type, whatever MIME databases the host
// has, and the hashed name caches for a year.
func TestAssetContentTypes(t *testing.T) {
	a, err := assets.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, contentType string }{
		{"idenplane.css", "text/css; charset=utf-8"},
		{"webauthn.js", "text/javascript; charset=utf-8"},
		{"idp/generic.svg", "image/svg+xml"},
	} {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, a.URL(tc.name), nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != tc.contentType {
			t.Errorf("%s: %d %q, want 200 %q", tc.name, rec.Code, rec.Header().Get("Content-Type"), tc.contentType)
		}
		if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("%s: Cache-Control %q", tc.name, cc)
		}
	}
}
