package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Client types: a confidential client holds a secret, a public one (a
// browser or native app) cannot keep one and must use PKCE.
const (
	clientConfidential = "CONFIDENTIAL"
	clientPublic       = "PUBLIC"
)

// The grants a client may be allowed.
const (
	grantAuthorizationCode = "authorization_code"
	grantClientCredentials = "client_credentials"
	grantPassword          = "password"
	grantRefreshToken      = "refresh_token"
	grantDeviceCode        = "urn:ietf:params:oauth:grant-type:device_code"
)

var clientGrantTypes = []string{
	grantAuthorizationCode, grantClientCredentials, grantPassword, grantRefreshToken, grantDeviceCode,
}

const (
	maxClientIDLength    = 255
	maxClientURIs        = 100
	maxClientURILength   = 2048
	clientSecretBytes    = 32
	serviceAccountPrefix = "service-account-"
	// webOriginsOfRedirects stands for the origins of every redirect URI, as in Keycloak.
	webOriginsOfRedirects = "+"
)

var clientIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{2,` + strconv.Itoa(maxClientIDLength) + `}$`)

// forbiddenURISchemes run code or read files where a browser lands on them.
var forbiddenURISchemes = []string{"javascript", "data", "vbscript", "file", "blob", "about"}

func defaultGrantTypes() []string { return []string{grantAuthorizationCode, grantRefreshToken} }

// client loads the realm and the client named by {clientId} in the path.
func (a *App) client(r *http.Request) (*store.Realm, *store.Client, error) {
	realm, err := a.realm(r)
	if err != nil {
		return nil, nil, err
	}
	id := mux.Vars(r)["clientId"]
	c, err := a.store.GetClientByClientID(r.Context(), realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apperr.NotFound("client " + id)
	}
	return realm, c, err
}

type clientRep struct {
	ID                               string   `json:"id"`
	ClientID                         string   `json:"clientId"`
	Name                             string   `json:"name"`
	Description                      string   `json:"description"`
	ClientType                       string   `json:"clientType"`
	Enabled                          bool     `json:"enabled"`
	RedirectURIs                     []string `json:"redirectUris"`
	WebOrigins                       []string `json:"webOrigins"`
	GrantTypes                       []string `json:"grantTypes"`
	RequireConsent                   bool     `json:"requireConsent"`
	BackchannelLogoutURI             string   `json:"backchannelLogoutUri"`
	BackchannelLogoutSessionRequired bool     `json:"backchannelLogoutSessionRequired"`
	PublicClient                     bool     `json:"publicClient"`
	ServiceAccountsEnabled           bool     `json:"serviceAccountsEnabled"`
	CreatedTimestamp                 int64    `json:"createdTimestamp"`
}

// clientWithSecret is the one answer that shows a secret: the response to
// create and regenerate-secret. Only its hash is kept, so it is shown once.
type clientWithSecret struct {
	clientRep
	Secret string `json:"secret,omitempty"`
}

func toClientRep(c *store.Client) clientRep {
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return clientRep{
		ID: c.ID, ClientID: c.ClientID, Name: c.Name, Description: c.Description, ClientType: c.ClientType,
		Enabled: c.Enabled, RedirectURIs: orEmpty(c.RedirectURIs), WebOrigins: orEmpty(c.WebOrigins),
		GrantTypes: orEmpty(c.GrantTypes), RequireConsent: c.RequireConsent, BackchannelLogoutURI: c.BackchannelLogoutURI,
		BackchannelLogoutSessionRequired: c.BackchannelLogoutSessionRequired, PublicClient: c.ClientType == clientPublic,
		ServiceAccountsEnabled: hasServiceAccount(c), CreatedTimestamp: c.CreatedAt,
	}
}

// hasServiceAccount says whether the client acts as its own user, which it
// does exactly when it may use the client_credentials grant.
func hasServiceAccount(c *store.Client) bool {
	return slices.Contains(c.GrantTypes, grantClientCredentials)
}

type clientCreate struct {
	ClientID                         *string   `json:"clientId"`
	Name                             *string   `json:"name"`
	Description                      *string   `json:"description"`
	ClientType                       *string   `json:"clientType"`
	Enabled                          *bool     `json:"enabled"`
	RedirectURIs                     *[]string `json:"redirectUris"`
	WebOrigins                       *[]string `json:"webOrigins"`
	GrantTypes                       *[]string `json:"grantTypes"`
	RequireConsent                   *bool     `json:"requireConsent"`
	BackchannelLogoutURI             *string   `json:"backchannelLogoutUri"`
	BackchannelLogoutSessionRequired *bool     `json:"backchannelLogoutSessionRequired"`
}

func (b *clientCreate) apply(c *store.Client) {
	set(&c.ClientID, b.ClientID)
	set(&c.Name, b.Name)
	set(&c.Description, b.Description)
	set(&c.ClientType, b.ClientType)
	set(&c.Enabled, b.Enabled)
	set(&c.RedirectURIs, b.RedirectURIs)
	set(&c.WebOrigins, b.WebOrigins)
	set(&c.GrantTypes, b.GrantTypes)
	set(&c.RequireConsent, b.RequireConsent)
	set(&c.BackchannelLogoutURI, b.BackchannelLogoutURI)
	set(&c.BackchannelLogoutSessionRequired, b.BackchannelLogoutSessionRequired)
}

// validateClient checks and normalizes the fields of a client about to be
// stored. URI lists are deduplicated, keeping their order, as Keycloak keeps
// them as sets.
func validateClient(c *store.Client) error {
	if !clientIDPattern.MatchString(c.ClientID) {
		return apperr.Field("clientId", "must be 2 to %d letters, digits, '-', '_' or '.'", maxClientIDLength)
	}
	if err := validate.DisplayName("name", c.Name, 255); err != nil {
		return err
	}
	if err := validate.Text("description", c.Description, 1024); err != nil {
		return err
	}
	if c.ClientType != clientConfidential && c.ClientType != clientPublic {
		return apperr.Field("clientType", "must be %s or %s", clientConfidential, clientPublic)
	}
	var err error
	if c.RedirectURIs, err = checkClientList("redirectUris", c.RedirectURIs, checkRedirectURI); err != nil {
		return err
	}
	if c.WebOrigins, err = checkClientList("webOrigins", c.WebOrigins, normalizeWebOrigin); err != nil {
		return err
	}
	if c.GrantTypes, err = checkClientList("grantTypes", c.GrantTypes, checkGrantType); err != nil {
		return err
	}
	if c.ClientType == clientPublic && hasServiceAccount(c) {
		return apperr.Field("grantTypes", "a PUBLIC client cannot use %s: it has no secret to authenticate with", grantClientCredentials)
	}
	if c.BackchannelLogoutURI != "" {
		if err := validate.URIChars("backchannelLogoutUri", c.BackchannelLogoutURI); err != nil {
			return err
		}
		if !validate.IsHTTPURL(c.BackchannelLogoutURI) || strings.Contains(c.BackchannelLogoutURI, "#") {
			return apperr.Field("backchannelLogoutUri", "must be an absolute http or https URL without fragment, or empty")
		}
	}
	return nil
}

// checkClientList checks each entry of a list field, names the entry at fault by
// index, and drops repeats.
func checkClientList(field string, list []string, check func(field, s string) (string, error)) ([]string, error) {
	if len(list) > maxClientURIs {
		return nil, apperr.Field(field, "must have at most %d entries", maxClientURIs)
	}
	out := make([]string, 0, len(list))
	for i, s := range list {
		v, err := check(field+"["+strconv.Itoa(i)+"]", s)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

func checkGrantType(field, s string) (string, error) {
	if !slices.Contains(clientGrantTypes, s) {
		return "", apperr.Field(field, "must be one of %s", strings.Join(clientGrantTypes, ", "))
	}
	return s, nil
}

// checkURIText refuses what no URI of ours may hold: wildcards (redirects
// and origins match exactly), spaces, control characters, excess length.
func checkURIText(field, s string) error {
	if strings.Contains(s, "*") {
		return apperr.Field(field, "wildcards are not allowed: URIs are matched exactly, so list each one")
	}
	if len(s) > maxClientURILength {
		return apperr.Field(field, "must be at most %d bytes", maxClientURILength)
	}
	return validate.URIChars(field, s)
}

// checkRedirectURI accepts an absolute URI without fragment (RFC 6749
// §3.1.2): http(s) with a host, or a native app's private-use scheme
// (RFC 8252 §7.1) followed by a path or an authority, such as
// com.example.app:/cb. Requiring the slash refuses mistakes like
// "localhost:8080/cb", which would parse as the scheme "localhost".
func checkRedirectURI(field, s string) (string, error) {
	if err := checkURIText(field, s); err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Scheme == "":
		return "", apperr.Field(field, "must be an absolute URI such as https://app.example.com/callback")
	case strings.Contains(s, "#"):
		return "", apperr.Field(field, "must not contain a fragment")
	case slices.Contains(forbiddenURISchemes, u.Scheme):
		return "", apperr.Field(field, "the %s scheme is not allowed", u.Scheme)
	case u.User != nil:
		return "", apperr.Field(field, "must not contain user information")
	case u.Scheme == "http" || u.Scheme == "https":
		if u.Hostname() == "" {
			return "", apperr.Field(field, "must have a host")
		}
	case u.Opaque != "" || (u.Host == "" && !strings.HasPrefix(u.Path, "/")):
		return "", apperr.Field(field, "a custom-scheme URI must continue with a path or authority, as in com.example.app:/callback")
	}
	return s, nil
}

// normalizeWebOrigin accepts "+" or an origin, scheme://host[:port], and
// lowercases it, as browsers send it in the Origin header.
func normalizeWebOrigin(field, s string) (string, error) {
	if s == webOriginsOfRedirects {
		return s, nil
	}
	if s == "*" {
		return "", apperr.Field(field, `"*" is not allowed: list each origin, or "+" for the origins of the redirect URIs`)
	}
	if err := checkURIText(field, s); err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Hostname() == "" || u.User != nil || u.Opaque != "" || u.Path != "" ||
		strings.ContainsAny(s, "?#") || strings.HasSuffix(u.Host, ":") || slices.Contains(forbiddenURISchemes, u.Scheme) {
		return "", apperr.Field(field, `must be an origin such as https://app.example.com:8443 (no path), or "+"`)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", apperr.Field(field, "port must be between 1 and 65535")
		}
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// newClientSecret makes a secret of 256 random bits and its SHA-256, the
// only form stored. The secret is random, so a fast hash is enough.
func newClientSecret() (secret string, hash []byte) {
	raw := make([]byte, clientSecretBytes)
	_, _ = rand.Read(raw) // never fails: crypto/rand aborts the program instead
	secret = base64.RawURLEncoding.EncodeToString(raw)
	h := sha256.Sum256([]byte(secret))
	return secret, h[:]
}

// checkClientSecret says whether secret is the client's, in constant time.
// A public client has no secret and never matches.
func (a *App) checkClientSecret(c *store.Client, secret string) bool {
	if len(c.SecretHash) == 0 {
		return false
	}
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], c.SecretHash) == 1
}

// clientConflict names the field behind a uniqueness clash: the clientId,
// or the service-account username it leads to.
func clientConflict(err error, c *store.Client) error {
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Column {
	case "client_id":
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "clientId",
			Message: "a client with clientId " + c.ClientID + " already exists in this realm", Cause: err}
	case "username":
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "clientId",
			Message: "the service-account username " + serviceAccountUsername(c) + " is taken by another user", Cause: err}
	}
	return err
}

func serviceAccountUsername(c *store.Client) string {
	return serviceAccountPrefix + strings.ToLower(c.ClientID)
}

// syncServiceAccount gives the client its service-account user when it has
// the client_credentials grant and deletes that user when it no longer has
// it (with the user's role mappings), inside the caller's transaction.
func (a *App) syncServiceAccount(ctx context.Context, tx *store.Store, c *store.Client) error {
	u, err := tx.GetServiceAccountUser(ctx, c.ID)
	exists := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	switch want := hasServiceAccount(c); {
	case want && !exists:
		sa := store.User{ID: uuid.NewString(), RealmID: c.RealmID, Username: serviceAccountUsername(c), Enabled: true,
			CreatedAt: a.now().UnixMilli(), ServiceAccountClientID: c.ID}
		if err := tx.CreateUser(ctx, &sa); err != nil {
			return clientConflict(err, c)
		}
	case !want && exists:
		return tx.DeleteUser(ctx, c.RealmID, u.ID)
	}
	return nil
}

// linkNewClientScopes assigns a new client the realm's standard scopes,
// those of them that exist, as Keycloak does.
func linkNewClientScopes(ctx context.Context, tx *store.Store, c *store.Client) error {
	scopes, err := tx.ListClientScopes(ctx, c.RealmID)
	if err != nil {
		return err
	}
	for _, s := range scopes {
		kind := ""
		switch {
		case slices.Contains(newClientDefaultScopes, s.Name):
			kind = store.ScopeDefault
		case slices.Contains(newClientOptionalScopes, s.Name):
			kind = store.ScopeOptional
		default:
			continue
		}
		if err := tx.LinkClientScope(ctx, c.ID, s.ID, kind); err != nil {
			return err
		}
	}
	return nil
}

func (a *App) createClient(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var body clientCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.ClientID == nil {
		return apperr.Field("clientId", "is required")
	}
	c := store.Client{ID: uuid.NewString(), RealmID: realm.ID, ClientType: clientConfidential, Enabled: true,
		GrantTypes: defaultGrantTypes(), BackchannelLogoutSessionRequired: true, CreatedAt: a.now().UnixMilli()}
	body.apply(&c)
	if err := validateClient(&c); err != nil {
		return err
	}
	var secret string
	if c.ClientType == clientConfidential {
		secret, c.SecretHash = newClientSecret()
	}
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.CreateClient(r.Context(), &c); err != nil {
			return clientConflict(err, &c)
		}
		if err := linkNewClientScopes(r.Context(), tx, &c); err != nil {
			return err
		}
		return a.syncServiceAccount(r.Context(), tx, &c)
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", a.cfg.BaseURL+r.URL.Path+"/"+c.ClientID)
	httpx.WriteJSON(w, http.StatusCreated, clientWithSecret{toClientRep(&c), secret})
	return nil
}

// listClients lists a realm's clients by clientId; ?clientId= keeps only
// the client with exactly that clientId, as in Keycloak.
func (a *App) listClients(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var clients []*store.Client
	if id := r.URL.Query().Get("clientId"); id != "" {
		c, err := a.store.GetClientByClientID(r.Context(), realm.ID, id)
		switch {
		case err == nil:
			clients = append(clients, c)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	} else if clients, err = a.store.ListClients(r.Context(), realm.ID); err != nil {
		return err
	}
	reps := make([]clientRep, len(clients))
	for i, c := range clients {
		reps[i] = toClientRep(c)
	}
	httpx.WriteJSON(w, http.StatusOK, reps)
	return nil
}

func (a *App) getClient(w http.ResponseWriter, r *http.Request) error {
	_, c, err := a.client(r)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toClientRep(c))
	return nil
}

// clientUpdate is the update body: the spec's update fields and
// backchannelLogoutSessionRequired. clientId and clientType are fixed.
type clientUpdate struct {
	Name                             string   `json:"name"`
	Description                      string   `json:"description"`
	Enabled                          bool     `json:"enabled"`
	RedirectURIs                     []string `json:"redirectUris"`
	WebOrigins                       []string `json:"webOrigins"`
	GrantTypes                       []string `json:"grantTypes"`
	RequireConsent                   bool     `json:"requireConsent"`
	BackchannelLogoutURI             string   `json:"backchannelLogoutUri"`
	BackchannelLogoutSessionRequired bool     `json:"backchannelLogoutSessionRequired"`
}

// clientUpdateDefaults names the updatable fields and what null resets each
// to: the create defaults.
func clientUpdateDefaults() map[string]any {
	return map[string]any{
		"name": nil, "description": nil, "enabled": true, "redirectUris": nil, "webOrigins": nil,
		"grantTypes": defaultGrantTypes(), "requireConsent": false, "backchannelLogoutUri": nil,
		"backchannelLogoutSessionRequired": true,
	}
}

func (a *App) putClient(w http.ResponseWriter, r *http.Request) error {
	return a.updateClient(w, r, false)
}
func (a *App) patchClient(w http.ResponseWriter, r *http.Request) error {
	return a.updateClient(w, r, true)
}

// updateClient changes a client. Adding the client_credentials grant gives
// it a service-account user; removing the grant deletes that user.
func (a *App) updateClient(w http.ResponseWriter, r *http.Request, merge bool) error {
	_, c, err := a.client(r)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	defaults := clientUpdateDefaults()
	current, err := httpx.AsJSONMap(toClientRep(c), defaults)
	if err != nil {
		return err
	}
	var u clientUpdate
	if err := httpx.Update(body, current, defaults, merge, &u); err != nil {
		return err
	}
	c.Name, c.Description, c.Enabled, c.RequireConsent = u.Name, u.Description, u.Enabled, u.RequireConsent
	c.RedirectURIs, c.WebOrigins, c.GrantTypes = u.RedirectURIs, u.WebOrigins, u.GrantTypes
	c.BackchannelLogoutURI, c.BackchannelLogoutSessionRequired = u.BackchannelLogoutURI, u.BackchannelLogoutSessionRequired
	if err := validateClient(c); err != nil {
		return err
	}
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.UpdateClient(r.Context(), c); err != nil {
			return err
		}
		return a.syncServiceAccount(r.Context(), tx, c)
	})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toClientRep(c))
	return nil
}

// deleteClient removes a client; the database cascades to its roles, scope
// links, service-account user, sessions and consents.
func (a *App) deleteClient(w http.ResponseWriter, r *http.Request) error {
	realm, c, err := a.client(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteClient(r.Context(), realm.ID, c.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *App) regenerateClientSecret(w http.ResponseWriter, r *http.Request) error {
	realm, c, err := a.client(r)
	if err != nil {
		return err
	}
	if c.ClientType == clientPublic {
		return apperr.Invalid("client %s is PUBLIC: public clients have no secret", c.ClientID)
	}
	secret, hash := newClientSecret()
	if err := a.store.SetClientSecretHash(r.Context(), realm.ID, c.ID, hash); err != nil {
		return err
	}
	c.SecretHash = hash
	httpx.WriteJSON(w, http.StatusOK, clientWithSecret{toClientRep(c), secret})
	return nil
}

func (a *App) getServiceAccountUser(w http.ResponseWriter, r *http.Request) error {
	_, c, err := a.client(r)
	if err != nil {
		return err
	}
	u, err := a.store.GetServiceAccountUser(r.Context(), c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "client %s has no service-account user: its grantTypes do not include %s", c.ClientID, grantClientCredentials)
	} else if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toUserRep(u))
	return nil
}

// linkedScopeRep is a client scope as a client's scope lists show it.
type linkedScopeRep struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Protocol    string `json:"protocol"`
}

func toLinkedScopeRep(s *store.ClientScope) linkedScopeRep {
	return linkedScopeRep{ID: s.ID, Name: s.Name, Description: s.Description, Protocol: s.Protocol}
}

// listLinkedScopes lists a client's default or optional scopes by name.
func (a *App) listLinkedScopes(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		realm, c, err := a.client(r)
		if err != nil {
			return err
		}
		scopes, err := a.store.ListLinkedScopes(r.Context(), realm.ID, c.ID, kind)
		if err != nil {
			return err
		}
		reps := make([]linkedScopeRep, len(scopes))
		for i, s := range scopes {
			reps[i] = toLinkedScopeRep(s)
		}
		httpx.WriteJSON(w, http.StatusOK, reps)
		return nil
	}
}

// addLinkedScope assigns a realm scope to a client as default or optional
// and answers 201 with the scope. A scope is assigned one way at most.
func (a *App) addLinkedScope(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		realm, c, err := a.client(r)
		if err != nil {
			return err
		}
		var body struct {
			ClientScopeID *string `json:"clientScopeId"`
		}
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
		if body.ClientScopeID == nil {
			return apperr.Field("clientScopeId", "is required")
		}
		id := *body.ClientScopeID
		if err := uuid.Validate(id); err != nil || len(id) != 36 {
			return apperr.Field("clientScopeId", "must be a UUID")
		}
		scope, err := a.store.GetClientScope(r.Context(), realm.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("client scope " + id)
		} else if err != nil {
			return err
		}
		err = a.store.LinkClientScope(r.Context(), c.ID, scope.ID, kind)
		if errors.Is(err, store.ErrConflict) {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "clientScopeId", Cause: err,
				Message: "client scope " + scope.Name + " is already assigned to client " + c.ClientID +
					" as a default or optional scope; remove it first to change how"}
		} else if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusCreated, toLinkedScopeRep(scope))
		return nil
	}
}

// removeLinkedScope unassigns a scope; it must be assigned as that kind.
func (a *App) removeLinkedScope(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		_, c, err := a.client(r)
		if err != nil {
			return err
		}
		id := mux.Vars(r)["scopeId"]
		err = a.store.UnlinkClientScope(r.Context(), c.ID, id, kind)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "client scope %s is not a %s scope of client %s", id, kind, c.ClientID)
		} else if err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
