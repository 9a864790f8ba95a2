// Package assets holds the static files of the hosted pages, embedded in the
// binary and served under names that carry a hash of their content, so they
// can be cached for a year and still change with every release.
package assets

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// Prefix is where assets are served.
const Prefix = "/assets/"

type file struct {
	data        []byte
	contentType string
}

// Assets serves the embedded files by their hashed names.
type Assets struct {
	urls   map[string]string // "idenplane.css" -> "/assets/idenplane.1a2b3c4d5e6f.css"
	byName map[string]file   // "idenplane.1a2b3c4d5e6f.css" -> contents
}

// contentTypes are the types of the embedded files, by extension. The
// mime package's would read the host's MIME databases (/etc/mime.types,
// /usr/share/mime/globs2) at the first look-up: 5 % of the server's start,
// and an asset's type that changes with the machine it runs on.
var contentTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
}

// Load reads and hashes every embedded file.
func Load() (*Assets, error) {
	a := &Assets{urls: map[string]string{}, byName: map[string]file{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		name := strings.TrimPrefix(p, "static/")
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		contentType, ok := contentTypes[ext]
		if !ok {
			return fmt.Errorf("asset %s: no content type for %q", name, ext)
		}
		a.urls[name] = Prefix + hashed
		a.byName[hashed] = file{data: data, contentType: contentType}
		return nil
	})
	return a, err
}

// URL is the address of a named asset; it panics on a name that is not
// embedded, which tests of every page catch.
func (a *Assets) URL(name string) string {
	u, ok := a.urls[name]
	if !ok {
		panic("assets: no embedded file " + name)
	}
	return u
}

// ProviderIcon is the address of the icon of an identity provider type:
// its preset's mark (idp/{type}.svg), or the generic one for oidc, oauth2
// and any type without its own.
func (a *Assets) ProviderIcon(providerType string) string {
	if u, ok := a.urls["idp/"+providerType+".svg"]; ok {
		return u
	}
	return a.URL("idp/generic.svg")
}

// ServeHTTP serves an asset by the hashed name after Prefix.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, ok := a.byName[strings.TrimPrefix(r.URL.Path, Prefix)]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(f.data)
}
