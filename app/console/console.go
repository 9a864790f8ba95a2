// Package console is the admin console served at /console: server-rendered
// pages over the admin REST API. It holds no privilege of its own. An
// administrator signs in through the hosted sign-in of the system realm as
// a public client with PKCE, and every page reads and writes through the
// same REST endpoints a script would call, in process, with the
// administrator's own access token: the API's validation and permission
// checks are the console's (docs/console.md).
package console

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
)

// Prefix is where the console is served.
const Prefix = "/console"

// Deps is what the console works with.
type Deps struct {
	// API is the server's router: the console calls the REST API and the
	// system realm's token endpoint through it, never over the network.
	API http.Handler
	// BaseURL is the server's external address, no trailing slash.
	BaseURL string
	// SystemRealm is the realm of the administrators; ClientID is the
	// console's public client there.
	SystemRealm, ClientID string
	// CookieKey seals the console's cookies (AES-256-GCM): 32 bytes.
	CookieKey     []byte
	SecureCookies bool
	Log           *slog.Logger
	Now           func() time.Time
	// RenderPage writes a page with the pages' security policy, language
	// and caching.
	RenderPage func(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error
	// Asset is the address of an embedded static file.
	Asset func(name string) string
}

// Service serves the console's pages.
type Service struct {
	deps   Deps
	cookie *sealer
	origin string // the scheme and host of BaseURL
}

// New builds the console. A key of the wrong length is a defect of the
// caller, reported at start.
func New(deps Deps) (*Service, error) {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	c, err := newSealer(deps.CookieKey)
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(deps.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("console base URL: %w", err)
	}
	return &Service{deps: deps, cookie: c, origin: base.Scheme + "://" + base.Host}, nil
}
