package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gorilla/mux"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// The OpenID Connect provider. zitadel/oidc's op.Server parses and answers
// the protocol requests; oidcServer implements the endpoints and mints the
// tokens itself, because the library's own minting fixes `typ: JWT`, skips
// PKCE for confidential clients that send no verifier, and has no password
// grant. Endpoints not implemented yet answer as unsupported, from the
// library's UnimplementedServer, and are neither routed nor advertised.

// Keycloak's paths, relative to the issuer {base}/realms/{realm}.
const (
	pathDiscovery  = "/.well-known/openid-configuration"
	pathAuth       = "protocol/openid-connect/auth"
	pathToken      = "protocol/openid-connect/token"
	pathIntrospect = "protocol/openid-connect/token/introspect"
	pathUserinfo   = "protocol/openid-connect/userinfo"
	pathRevoke     = "protocol/openid-connect/revoke"
	pathLogout     = "protocol/openid-connect/logout"
	pathCerts      = "protocol/openid-connect/certs"
	pathDevice     = "protocol/openid-connect/auth/device"
)

// pathOAuthMetadata is RFC 8414's well-known path, served at both of its
// places (metadataAlias).
const pathOAuthMetadata = "/.well-known/oauth-authorization-server"

var oidcEndpoints = op.Endpoints{
	Authorization:       op.NewEndpoint(pathAuth),
	Token:               op.NewEndpoint(pathToken),
	Introspection:       op.NewEndpoint(pathIntrospect),
	Userinfo:            op.NewEndpoint(pathUserinfo),
	Revocation:          op.NewEndpoint(pathRevoke),
	EndSession:          op.NewEndpoint(pathLogout),
	JwksURI:             op.NewEndpoint(pathCerts),
	DeviceAuthorization: op.NewEndpoint(pathDevice),
}

type oidcServer struct {
	op.UnimplementedServer
	a *App
}

func (a *App) issuer(realm *store.Realm) string { return a.cfg.BaseURL + "/realms/" + realm.Name }

// providerEndpoint is the OpenID Connect provider for every realm: it
// loads the realm of the path (an unknown or disabled realm is a 404 on
// every protocol path), strips the realm's prefix and hands the request to
// the library, after what the library cannot do: refuse malformed client
// forms, require client authentication at introspection, and the password
// grant.
func (a *App) providerEndpoint() http.Handler {
	// CORS for web origins is answered by our own middleware, per client.
	handler := a.logoutEndpoints(op.RegisterServer(&oidcServer{a: a}, oidcEndpoints, op.WithServerCORSOptions(nil)))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name := mux.Vars(req)["realm"]
		realm, err := a.protocolRealm(req.Context(), name)
		if errors.Is(err, store.ErrNotFound) {
			err = apperr.NotFound("realm " + name)
		}
		if err != nil {
			a.writeOAuthError(w, req, err)
			return
		}
		failure := &protocolFailure{}
		ctx := signin.RealmOnly(req.Context(), realm)
		ctx = context.WithValue(ctx, clientIPCtxKey{}, a.clientIP(req))
		ctx = context.WithValue(ctx, protocolFailureKey{}, failure)
		ctx = op.ContextWithIssuer(ctx, a.issuer(realm))
		req = req.WithContext(ctx)
		req.URL.Path = strings.TrimPrefix(req.URL.Path, "/realms/"+name)
		req.URL.RawPath = ""
		cw := &challengeWriter{ResponseWriter: w, realm: name, failure: failure}
		if clientEndpoints[req.URL.Path] {
			setNoStore(cw)
			if err := checkClientForm(req); err != nil {
				a.writeOAuthError(cw, req, err)
				return
			}
		}
		// Introspection needs an authenticated client; the library refuses
		// one without a secret with a 400 before we see it.
		if req.URL.Path == "/"+pathIntrospect && !hasClientSecret(req) {
			a.writeOAuthError(cw, req, errClientAuthRequired)
			return
		}
		// The library has no password grant.
		if req.URL.Path == "/"+pathToken && req.PostFormValue("grant_type") == identity.GrantPassword {
			a.passwordGrant(cw, req)
			return
		}
		handler.ServeHTTP(cw, req)
	})
}

// protocolRealm loads the realm of a protocol path or page: a disabled
// realm is as unknown there as a missing one.
func (a *App) protocolRealm(ctx context.Context, name string) (*store.Realm, error) {
	realm, err := a.cachedRealm(ctx, name)
	if err == nil && !realm.Enabled {
		return nil, fmt.Errorf("realm %s is disabled: %w", name, store.ErrNotFound)
	}
	return realm, err
}

func hasClientSecret(r *http.Request) bool {
	if _, secret, ok := r.BasicAuth(); ok && secret != "" {
		return true
	}
	return r.PostFormValue("client_secret") != ""
}

// challengeWriter adds the WWW-Authenticate challenge RFC 6749 §5.2 asks
// for on every 401 invalid_client; the library sends the status alone. It
// adds the Retry-After of a failure protocolError classified, too.
type challengeWriter struct {
	http.ResponseWriter
	realm   string
	failure *protocolFailure
}

func (w *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="`+w.realm+`"`)
	}
	if w.failure != nil && w.failure.err != nil && code == w.failure.err.Status {
		httpx.SetRetryAfter(w.ResponseWriter, w.failure.err)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// grantsSupported are the grants this provider serves now, as discovery
// advertises them.
var grantsSupported = []oidc.GrantType{oidc.GrantTypeClientCredentials, oidc.GrantTypeCode, oidc.GrantTypeRefreshToken,
	identity.GrantPassword, oidc.GrantTypeDeviceCode, oidc.GrantTypeTokenExchange}

func (s *oidcServer) Discovery(ctx context.Context, _ *op.Request[struct{}]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	realm := signin.RealmFrom(ctx)
	iss := s.a.issuer(realm)
	clientScopes, err := s.a.store.ListClientScopes(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	scopeNames := make([]string, 0, len(clientScopes))
	claims := []string{"iss", "sub", "aud", "exp", "iat", "jti", "azp", "scope", "sid", "auth_time", "nonce", "acr", "amr", "at_hash"}
	for _, sc := range clientScopes {
		// A name stored before names were checked as they are now stays
		// usable, but is not published.
		if !scopes.IsScopeName(sc.Name) {
			continue
		}
		scopeNames = append(scopeNames, sc.Name)
		for _, m := range sc.Mappers {
			name := m.Config[scopes.CfgClaimName]
			if name != "" && !strings.Contains(name, ".") && scopes.CheckClaimName(name, false) == nil {
				claims = append(claims, name)
			}
		}
	}
	key, err := s.a.signingKeys.Active(ctx, realm)
	if err != nil {
		return nil, err
	}
	return op.NewResponse(&oidc.DiscoveryConfiguration{
		Issuer:                                     iss,
		AuthorizationEndpoint:                      oidcEndpoints.Authorization.Absolute(iss),
		TokenEndpoint:                              oidcEndpoints.Token.Absolute(iss),
		IntrospectionEndpoint:                      oidcEndpoints.Introspection.Absolute(iss),
		RevocationEndpoint:                         oidcEndpoints.Revocation.Absolute(iss),
		UserinfoEndpoint:                           oidcEndpoints.Userinfo.Absolute(iss),
		DeviceAuthorizationEndpoint:                oidcEndpoints.DeviceAuthorization.Absolute(iss),
		EndSessionEndpoint:                         oidcEndpoints.EndSession.Absolute(iss),
		BackChannelLogoutSupported:                 true,
		BackChannelLogoutSessionSupported:          true,
		JwksURI:                                    oidcEndpoints.JwksURI.Absolute(iss),
		ScopesSupported:                            scopeNames,
		ResponseTypesSupported:                     []string{string(oidc.ResponseTypeCode)},
		ResponseModesSupported:                     []string{"query", "fragment", "form_post"},
		GrantTypesSupported:                        grantsSupported,
		SubjectTypesSupported:                      []string{"public"},
		IDTokenSigningAlgValuesSupported:           []string{string(key.Algorithm)},
		TokenEndpointAuthMethodsSupported:          []oidc.AuthMethod{oidc.AuthMethodBasic, oidc.AuthMethodPost, oidc.AuthMethodNone, oidc.AuthMethodPrivateKeyJWT},
		TokenEndpointAuthSigningAlgValuesSupported: assertionAlgorithms(),
		IntrospectionEndpointAuthMethodsSupported:  []oidc.AuthMethod{oidc.AuthMethodBasic, oidc.AuthMethodPost},
		ClaimsSupported:                            sortedUnique(claims),
		CodeChallengeMethodsSupported:              []oidc.CodeChallengeMethod{oidc.CodeChallengeMethodS256},
		ACRValuesSupported:                         acrValuesSupported,
		UILocalesSupported:                         oidc.ParseLocales(realmLanguages(realm, s.a.messages)),
	}), nil
}

func (s *oidcServer) Keys(ctx context.Context, _ *op.Request[struct{}]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	keys, err := s.a.signingKeys.Public(ctx, signin.RealmFrom(ctx))
	if err != nil {
		return nil, err
	}
	resp := op.NewResponse(map[string]any{"keys": keys})
	// Short enough that a rotated key is seen well before it signs.
	resp.Header.Set("Cache-Control", "public, max-age=300")
	return resp, nil
}

// VerifyClient authenticates the client of a token or introspection
// request: confidential clients by secret (Basic or form), public ones by
// their clientId alone. Every failure is the same invalid_client.
func (s *oidcServer) VerifyClient(ctx context.Context, r *op.Request[op.ClientCredentials]) (_ op.Client, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	var c *store.Client
	var use *nhiUse
	if r.Data.ClientAssertion != "" {
		c, use, err = s.a.authenticateAssertion(ctx, signin.RealmFrom(ctx), r.Data.ClientID, r.Data.ClientAssertion)
	} else {
		c, use, err = s.a.authenticateClientCredential(ctx, signin.RealmFrom(ctx), r.Data.ClientID, r.Data.ClientSecret)
	}
	if err != nil {
		if typ := grantErrorEvents[oidc.GrantType(r.Form.Get("grant_type"))]; typ != "" {
			s.a.loginEvent(ctx, signin.RealmFrom(ctx), store.LoginEvent{Type: typ, ClientID: r.Data.ClientID, Error: "invalid_client"})
		}
		return nil, err
	}
	oc := s.a.oidcClient(signin.RealmFrom(ctx), c)
	oc.nhi = use
	// A grant records the use with what it gave; elsewhere it is recorded
	// here.
	if use != nil && oidc.GrantType(r.Form.Get("grant_type")) != oidc.GrantTypeClientCredentials {
		s.a.recordNHIUse(ctx, use, store.NHIUsage{})
	}
	return oc, nil
}

// grantErrorEvents is the login event a failed client authentication
// records, by grant, as Keycloak names them.
var grantErrorEvents = map[oidc.GrantType]store.EventType{
	oidc.GrantTypeClientCredentials: store.EventClientLoginError,
	oidc.GrantTypeCode:              store.EventCodeToTokenError,
	oidc.GrantTypeRefreshToken:      store.EventRefreshTokenError,
	oidc.GrantTypeDeviceCode:        store.EventDeviceCodeToTokenError,
	oidc.GrantTypeTokenExchange:     store.EventTokenExchangeError,
}

func (a *App) oidcClient(realm *store.Realm, c *store.Client) *oidcClient {
	return &oidcClient{c: c, realm: realm, baseURL: a.cfg.BaseURL}
}

// errClientAuth is every client authentication failure: one answer, 401
// (RFC 6749 §5.2), whatever was wrong.
var errClientAuth = op.NewStatusError(oidc.ErrInvalidClient().WithDescription("client authentication failed"), http.StatusUnauthorized)

// errClientAuthRequired: introspection without a client's credentials.
var errClientAuthRequired = op.NewStatusError(oidc.ErrInvalidClient().WithDescription("client authentication required"),
	http.StatusUnauthorized)

// protocolFailure is what protocolError learns of a failure that the
// library's answer cannot carry, for challengeWriter: its Retry-After.
type protocolFailure struct{ err *apperr.Error }

type protocolFailureKey struct{}

// protocolError is the renderer of the OpenID Connect endpoints, whose
// answers the library writes: err as oauthFailure makes it, its
// Retry-After kept for challengeWriter to add.
func (a *App) protocolError(ctx context.Context, err error) error {
	e, oauthErr := a.oauthFailure(ctx, err)
	if f, ok := ctx.Value(protocolFailureKey{}).(*protocolFailure); ok && e != nil {
		f.err = e
	}
	return oauthErr
}

// writeOAuthError answers err in RFC 6749's error format where the
// library does not, as protocolError does.
func (a *App) writeOAuthError(w http.ResponseWriter, r *http.Request, err error) {
	e, oauthErr := a.oauthFailure(r.Context(), err)
	if e != nil {
		httpx.SetRetryAfter(w, e)
	}
	op.WriteError(w, r, oauthErr, nil)
}

// oauthFailure is err as an OAuth error with its status: an OAuth error
// as it is (e nil); any other error by its classification e (oauthErrorOf),
// a fault of the server logged with its cause: the library would
// otherwise show the cause's text to the client.
func (a *App) oauthFailure(ctx context.Context, err error) (e *apperr.Error, oauthErr error) {
	var oe *oidc.Error
	var se op.StatusError
	if err == nil || errors.As(err, &oe) || errors.As(err, &se) {
		return nil, err
	}
	e = httpx.Classify(err)
	if e.Status >= http.StatusInternalServerError {
		a.log.ErrorContext(ctx, "protocol request failed", "status", e.Status, "err", err)
	}
	return e, op.NewStatusError(oauthErrorOf(e), e.Status)
}

// oauthCodes are the OAuth errors of the codes of the vocabulary that
// have one of their own.
var oauthCodes = map[apperr.Code]func() *oidc.Error{
	// A path of no realm has no authorization server to answer for.
	apperr.CodeNotFound: func() *oidc.Error { return &oidc.Error{ErrorType: "not_found"} },
	// Only the credential grants are throttled: RFC 6749 names no code for
	// it, and the grant is what is refused.
	apperr.CodeTooManyRequests: oidc.ErrInvalidGrant,
}

// oauthErrorOf is e in OAuth 2.0's error vocabulary (RFC 6749 §5.2): the
// code of its own where it has one (oauthCodes), else invalid_request for
// a fault of the caller (a body over the size limit too) and server_error
// for one of the server (a busy server too), described by e's message,
// which for a fault nobody described is "internal server error".
func oauthErrorOf(e *apperr.Error) *oidc.Error {
	newError, ok := oauthCodes[e.Code]
	switch {
	case ok:
	case e.Status >= http.StatusInternalServerError:
		newError = oidc.ErrServerError
	default:
		newError = oidc.ErrInvalidRequest
	}
	return newError().WithDescription("%s", e.Message)
}

func (a *App) authenticateClient(ctx context.Context, realm *store.Realm, clientID, secret string) (*store.Client, error) {
	c, _, err := a.authenticateClientCredential(ctx, realm, clientID, secret)
	return c, err
}

// authenticateClientCredential authenticates a client by its secret, and
// says which non-human identity and credential authenticated, if one did.
func (a *App) authenticateClientCredential(ctx context.Context, realm *store.Realm, clientID, secret string) (*store.Client, *nhiUse, error) {
	if clientID == "" {
		return nil, nil, errClientAuth
	}
	c, err := a.cachedClient(ctx, realm.ID, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errClientAuth
	} else if err != nil {
		return nil, nil, err
	}
	if !c.Enabled {
		return nil, nil, errClientAuth
	}
	if use, err := a.authenticateNHI(ctx, c, secret); use != nil || err != nil {
		return c, use, err
	}
	switch {
	case c.ClientType == identity.ClientPublic:
		if secret != "" {
			return nil, nil, errClientAuth
		}
	case !identity.CheckClientSecret(c, secret):
		return nil, nil, errClientAuth
	}
	return c, nil, nil
}
