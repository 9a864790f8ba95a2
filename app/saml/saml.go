// Package saml is the realm's SAML 2.0 identity provider: its signing keys
// and metadata, the service providers it serves (admin API), single
// sign-on over the HTTP-Redirect and HTTP-POST bindings, and single logout.
// It is built on crewjam/saml for the protocol's types and on goxmldsig
// for XML signatures (their verification, and the canonicalization of
// what sign.go signs), with what the library leaves out added here: the
// check of signed requests, a replay cache of request IDs and the
// identity provider's side of single logout.
package saml

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the SAML identity provider uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// BaseURL is the server's external address, no trailing slash: the
	// realm's entity ID is BaseURL/realms/{realm}.
	BaseURL string
	// Realm is the enabled realm a protocol path names, or the not-found
	// error every protocol path answers for an unknown realm.
	Realm func(r *http.Request) (*store.Realm, error)
	// AdminRealm is the realm an admin path names ({realm}), enabled or not.
	AdminRealm func(r *http.Request) (*store.Realm, error)
	// RotationDays is how often the realm's keys rotate (its OIDC key
	// settings, which the SAML key follows); 0 is only on request.
	RotationDays func(ctx context.Context, realmID string) (int, error)
	// ErrorPage answers a browser with the realm's error page (realm may be
	// nil when the path named none that exists).
	ErrorPage func(w http.ResponseWriter, r *http.Request, realm *store.Realm, err error)
	// Session is the browser's live SSO session in the realm and its user,
	// or nil for both.
	Session func(r *http.Request, realm *store.Realm) (*store.Session, *store.User, error)
	// SignIn sends the browser through the realm's hosted sign-in for sp
	// (again, when force), back to the SSO endpoint with state: the
	// authentication flow bound to sp, or the server's own.
	SignIn func(w http.ResponseWriter, r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider, state string, force bool) error
	// Land gives a browser that passed an authentication flow its SSO
	// session: the user, signed in as the flow's steps said.
	Land func(w http.ResponseWriter, r *http.Request, f *signin.Flow) error
	// PostForm answers with the page that POSTs params to target.
	PostForm func(w http.ResponseWriter, r *http.Request, realm *store.Realm, target string, params url.Values) error
	// NameIDKey keys the persistent NameIDs (an HMAC of realm, SP and user).
	NameIDKey []byte
	// EndSession ends the browser's SSO session sess because the SP of
	// entity ID sp asked: the session and its cookie go, its OIDC clients
	// are told by back channel, a LOGOUT event is recorded.
	EndSession func(w http.ResponseWriter, r *http.Request, realm *store.Realm, sess *store.Session, sp string) error
	// LoggedOut answers with the realm's "you are signed out" page.
	LoggedOut func(w http.ResponseWriter, r *http.Request, realm *store.Realm) error
	// TwoFactors says whether a session's amr is a two-factor sign-in (the
	// server's acr 2), which the REFEDS MFA class states.
	TwoFactors func(amr []string) bool
	// LoginEvent records a login event (the events module's writer).
	LoginEvent func(context.Context, *store.Realm, store.LoginEvent)
	// LoginEventIn records a login event in tx, the transaction of the
	// sign-in it reports; a failure of the event alone is logged, not
	// returned. committed is called once tx has committed.
	LoginEventIn func(ctx context.Context, tx *store.Store, realm *store.Realm, e store.LoginEvent) (committed func(), err error)
	// Client fetches an SP's metadata from its metadataUrl: the server's
	// outbound client (httpx.OutboundClient), which refuses non-public
	// addresses but those of OutboundAllowed.
	Client          *http.Client
	OutboundAllowed []netip.Prefix
}

// Service is the SAML identity provider of every realm.
type Service struct {
	deps Deps
	keys *keyCache
	// sps and realmSettings hold what every request reads: the service
	// provider it names, by realm ID and entity ID (spByEntityID), and the
	// realm's settings (settings).
	sps           *store.LookupCache[*store.SAMLServiceProvider]
	realmSettings *store.LookupCache[*store.SAMLSettings]
}

// New builds the SAML identity provider.
func New(d Deps) *Service {
	return &Service{deps: d, keys: newKeyCache(), sps: store.NewLookupCache[*store.SAMLServiceProvider](),
		realmSettings: store.NewLookupCache[*store.SAMLSettings]()}
}

// spByEntityID is the realm's service provider of that entity ID, cached
// under the store's generation (store.Cached). The value is shared: it
// must not be changed.
func (s *Service) spByEntityID(ctx context.Context, realmID, entityID string) (*store.SAMLServiceProvider, error) {
	return store.Cached(s.deps.Store, s.sps, realmID+"\x00"+entityID, func() (*store.SAMLServiceProvider, error) {
		return s.deps.Store.GetSAMLServiceProviderByEntityID(ctx, realmID, entityID)
	})
}

// entityID is the realm's SAML entity ID, which is also its issuer.
func (s *Service) entityID(realm *store.Realm) string {
	return s.deps.BaseURL + "/realms/" + realm.Name
}

// ssoURL is the realm's single sign-on (and single logout) service.
func (s *Service) ssoURL(realm *store.Realm) string {
	return s.entityID(realm) + "/protocol/saml"
}
