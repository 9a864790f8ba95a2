package risk

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/idenplane/idenplane/store"
)

// deviceCookie names the cookie that tells a browser seen before: a
// random ID, of which the server keeps only the SHA-256.
const deviceCookie = "IDENPLANE_DEVICE"

// deviceLifetime is as long as browsers keep a cookie (400 days).
const deviceLifetime = 400 * 24 * time.Hour

// device answers the SHA-256 of the browser's device ID, giving the
// browser one when it has none (w nil: the password grant, which keeps no
// cookie, has none).
func (s *Service) device(w http.ResponseWriter, r *http.Request, realm *store.Realm) []byte {
	if c, err := r.Cookie(deviceCookie); err == nil && len(c.Value) >= 22 && len(c.Value) <= 64 {
		sum := sha256.Sum256([]byte(c.Value))
		return sum[:]
	}
	if w == nil {
		return nil
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	id := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: deviceCookie, Value: id, Path: "/realms/" + url.PathEscape(realm.Name) + "/",
		MaxAge: int(deviceLifetime / time.Second), HttpOnly: true, Secure: strings.HasPrefix(s.deps.BaseURL, "https://"),
		SameSite: http.SameSiteLaxMode})
	// A browser given its first ID now is a device the user was never
	// seen on: its hash is recorded for the next sign-in.
	sum := sha256.Sum256([]byte(id))
	return sum[:]
}

// agentFamily is the browser and system a User-Agent names, coarse on
// purpose: a version changes with every update, a family does not.
func agentFamily(ua string) string {
	browser := "other"
	switch {
	case strings.Contains(ua, "Edg/"):
		browser = "Edge"
	case strings.Contains(ua, "OPR/"):
		browser = "Opera"
	case strings.Contains(ua, "Firefox/"):
		browser = "Firefox"
	case strings.Contains(ua, "Chrome/") || strings.Contains(ua, "CriOS/"):
		browser = "Chrome"
	case strings.Contains(ua, "Safari/"):
		browser = "Safari"
	case ua != "":
		browser, _, _ = strings.Cut(ua, "/")
		if len(browser) > 32 {
			browser = browser[:32]
		}
	}
	system := "other"
	switch {
	case strings.Contains(ua, "Android"):
		system = "Android"
	case strings.Contains(ua, "iPhone") || strings.Contains(ua, "iPad"):
		system = "iOS"
	case strings.Contains(ua, "Windows"):
		system = "Windows"
	case strings.Contains(ua, "Mac OS X") || strings.Contains(ua, "Macintosh"):
		system = "macOS"
	case strings.Contains(ua, "Linux"):
		system = "Linux"
	}
	return browser + " on " + system
}
