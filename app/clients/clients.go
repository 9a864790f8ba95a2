// Package clients is the admin API of a realm's OpenID Connect clients:
// create, list, get, update and delete them, give a confidential one a new
// secret, its service-account user, and the client scopes linked to it.
// The rules of a client (validation, the secret, the service-account user,
// the end of access of a disabled client) are the identity core's, which
// realm import and the non-human identities obey too.
package clients

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the clients area uses.
type Deps struct {
	Store *store.Store
	// Core is the identity core: a client's validation, its
	// service-account user, and the end of access of a disabled client.
	Core *identity.Core
	Now  func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for the Location of a new
	// client.
	BaseURL string
	// OutboundAllowed are the non-public networks the server may call
	// (a back-channel logout URI there is accepted).
	OutboundAllowed []netip.Prefix
	// UserRep is a user as the admin API shows one: the service-account
	// user is shown in the users' own representation, which is app's.
	UserRep func(*store.User) any
	// SessionsEnded tells the relying parties, by back-channel logout,
	// of the sessions a client's update ended (it was disabled).
	SessionsEnded func(ctx context.Context, realm *store.Realm, ended []*store.Session)
}

// Service is the clients area: the admin API's handlers.
type Service struct{ deps Deps }

// New builds the clients area.
func New(d Deps) *Service { return &Service{deps: d} }

// client loads the realm and the client named by {clientId} in the path.
func (s *Service) client(r *http.Request) (*store.Realm, *store.Client, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	c, err := httpx.ChildOf(r, realm.ID, "clientId", "client", s.deps.Store.GetClientByClientID)
	return realm, c, err
}

// ClientRep is a client as the admin API shows it and as the realm export
// writes it (docs/realm-format.md): the same fields in the same order. Each
// view adds fields of its own, which the other leaves unset and so out:
//   - the API (toRep) adds publicClient and serviceAccountsEnabled,
//     which follow from clientType and grantTypes, and, in the answers to
//     create and regenerate-secret only, the secret itself: only its hash is
//     kept, so it is shown once;
//   - the export (app's exportClient) adds, with includeSecrets, the
//     secret's hash, and always the linked scopes by name and the
//     service-account user.
//
// An update is read into this type too, the fields updateDefaults names.
// The bodies that create or import a client have types of their own, whose
// pointers tell a field left out from one set to its zero value.
type ClientRep struct {
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
	IDTokenOnRefresh                 bool     `json:"idTokenOnRefresh"`
	PublicClient                     *bool    `json:"publicClient,omitempty"`           // API
	ServiceAccountsEnabled           *bool    `json:"serviceAccountsEnabled,omitempty"` // API
	CreatedTimestamp                 int64    `json:"createdTimestamp"`
	Secret                           string   `json:"secret,omitempty"`     // API: create and regenerate-secret
	SecretHash                       string   `json:"secretHash,omitempty"` // export with includeSecrets: base64 SHA-256
	// omitzero, not omitempty: the export always writes the lists, [] when
	// empty; the API leaves them nil, and out.
	DefaultClientScopes  []string              `json:"defaultClientScopes,omitzero"`  // export: scope names
	OptionalClientScopes []string              `json:"optionalClientScopes,omitzero"` // export: scope names
	ServiceAccount       *ServiceAccountExport `json:"serviceAccount,omitempty"`      // export
}

// ServiceAccountExport is a client's service-account user as the realm
// export writes it, with its roles by name as the export names roles.
type ServiceAccountExport struct {
	ID               string              `json:"id"`
	Username         string              `json:"username"`
	Enabled          bool                `json:"enabled"`
	CreatedTimestamp int64               `json:"createdTimestamp"`
	RealmRoles       []string            `json:"realmRoles,omitempty"`
	ClientRoles      map[string][]string `json:"clientRoles,omitempty"`
}

// Fields is what both views of a client show.
func Fields(c *store.Client) ClientRep {
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return ClientRep{
		ID: c.ID, ClientID: c.ClientID, Name: c.Name, Description: c.Description, ClientType: c.ClientType,
		Enabled: c.Enabled, RedirectURIs: orEmpty(c.RedirectURIs), WebOrigins: orEmpty(c.WebOrigins),
		GrantTypes: orEmpty(c.GrantTypes), RequireConsent: c.RequireConsent, BackchannelLogoutURI: c.BackchannelLogoutURI,
		BackchannelLogoutSessionRequired: c.BackchannelLogoutSessionRequired, IDTokenOnRefresh: !c.OmitIDTokenOnRefresh,
		CreatedTimestamp: c.CreatedAt,
	}
}

// toRep shows a client as the admin API does.
func toRep(c *store.Client) ClientRep {
	rep := Fields(c)
	public, serviceAccount := c.ClientType == identity.ClientPublic, identity.HasServiceAccount(c)
	rep.PublicClient, rep.ServiceAccountsEnabled = &public, &serviceAccount
	return rep
}

// ClientCreate is the body that creates a client.
type ClientCreate struct {
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
	IDTokenOnRefresh                 *bool     `json:"idTokenOnRefresh"`
}

func (b *ClientCreate) apply(c *store.Client) {
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
	if b.IDTokenOnRefresh != nil {
		c.OmitIDTokenOnRefresh = !*b.IDTokenOnRefresh
	}
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// conflict names the field behind a clash of clientIds. A clash of
// the service-account username a clientId leads to is the identity
// core's to name (SyncServiceAccount).
func conflict(err error, c *store.Client) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && ce.Column == "client_id" {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "clientId",
			Message: "a client with clientId " + c.ClientID + " already exists in this realm", Cause: err}
	}
	return err
}

// CreateClient creates a client from the body and answers 201 with it,
// and with its secret, shown this once, when it is confidential.
func (s *Service) CreateClient(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body ClientCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.ClientID == nil {
		return apperr.Field("clientId", "is required")
	}
	c := store.Client{ID: uuid.NewString(), RealmID: realm.ID, ClientType: identity.ClientConfidential, Enabled: true,
		GrantTypes: identity.DefaultGrantTypes(), BackchannelLogoutSessionRequired: true, CreatedAt: s.deps.Now().UnixMilli()}
	body.apply(&c)
	if err := identity.ValidateClient(&c); err != nil {
		return err
	}
	if err := CheckOutbound(r.Context(), &c, "", s.deps.OutboundAllowed); err != nil {
		return err
	}
	var secret string
	if c.ClientType == identity.ClientConfidential {
		secret, c.SecretHash = identity.NewClientSecret()
	}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error { return s.StoreNew(r.Context(), tx, realm, &c) })
	if err != nil {
		return err
	}
	rep := toRep(&c)
	rep.Secret = secret
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+c.ClientID, rep)
}

// StoreNew stores a validated new client on tx with the realm's standard
// scopes and, when it has the client_credentials grant, its
// service-account user. The non-human identities make their backing
// clients with it too.
func (s *Service) StoreNew(ctx context.Context, tx *store.Store, realm *store.Realm, c *store.Client) error {
	if err := tx.CreateClient(ctx, c); err != nil {
		return conflict(err, c)
	}
	if err := LinkNewScopes(ctx, tx, c); err != nil {
		return err
	}
	return s.deps.Core.SyncServiceAccount(ctx, tx, realm, c)
}

// ListClients lists a realm's clients by clientId; ?clientId= keeps only
// the client with exactly that clientId, as in Keycloak.
func (s *Service) ListClients(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var clients []*store.Client
	if id := r.URL.Query().Get("clientId"); id != "" {
		c, err := s.deps.Store.GetClientByClientID(r.Context(), realm.ID, id)
		switch {
		case err == nil:
			clients = append(clients, c)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	} else if clients, err = s.deps.Store.ListClients(r.Context(), realm.ID); err != nil {
		return err
	}
	return httpx.List(w, clients, toRep)
}

// GetClient answers the client the path names.
func (s *Service) GetClient(w http.ResponseWriter, r *http.Request) error {
	_, c, err := s.client(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toRep(c))
}

// updateDefaults names the fields an update may change, the spec's and
// backchannelLogoutSessionRequired, and what null resets each to: the
// create defaults. clientId and clientType are fixed.
func updateDefaults() map[string]any {
	return map[string]any{
		"name": nil, "description": nil, "enabled": true, "redirectUris": nil, "webOrigins": nil,
		"grantTypes": identity.DefaultGrantTypes(), "requireConsent": false, "backchannelLogoutUri": nil,
		"backchannelLogoutSessionRequired": true, "idTokenOnRefresh": true,
	}
}

// UpdateClient answers PUT and PATCH. Adding the client_credentials grant
// gives the client a service-account user; removing the grant deletes that
// user. Disabling the client ends its sessions and tokens in the
// transaction of the write (identity.Core.UpdateClient), and the relying
// parties hear of the sessions ended.
func (s *Service) UpdateClient(w http.ResponseWriter, r *http.Request) error {
	realm, c, err := s.client(r)
	if err != nil {
		return err
	}
	u, err := httpx.ReadUpdate[ClientRep](r, toRep(c), updateDefaults())
	if err != nil {
		return err
	}
	storedBackchannel := c.BackchannelLogoutURI
	c.Name, c.Description, c.Enabled, c.RequireConsent = u.Name, u.Description, u.Enabled, u.RequireConsent
	c.RedirectURIs, c.WebOrigins, c.GrantTypes = u.RedirectURIs, u.WebOrigins, u.GrantTypes
	c.BackchannelLogoutURI, c.BackchannelLogoutSessionRequired = u.BackchannelLogoutURI, u.BackchannelLogoutSessionRequired
	c.OmitIDTokenOnRefresh = !u.IDTokenOnRefresh
	if err := identity.ValidateClient(c); err != nil {
		return err
	}
	if err := CheckOutbound(r.Context(), c, storedBackchannel, s.deps.OutboundAllowed); err != nil {
		return err
	}
	var ended []*store.Session
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if ended, err = s.deps.Core.UpdateClient(r.Context(), tx, c); err != nil {
			return err
		}
		return s.deps.Core.SyncServiceAccount(r.Context(), tx, realm, c)
	})
	if err != nil {
		return err
	}
	s.deps.SessionsEnded(r.Context(), realm, ended)
	return httpx.OK(w, toRep(c))
}

// DeleteClient removes a client; the database cascades to its roles, scope
// links, service-account user, sessions and consents.
func (s *Service) DeleteClient(w http.ResponseWriter, r *http.Request) error {
	realm, c, err := s.client(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteClient(r.Context(), realm.ID, c.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// RegenerateSecret gives a confidential client a new secret, shown in the
// answer this once; only its hash is kept.
func (s *Service) RegenerateSecret(w http.ResponseWriter, r *http.Request) error {
	realm, c, err := s.client(r)
	if err != nil {
		return err
	}
	if c.ClientType == identity.ClientPublic {
		return apperr.Invalid("client %s is PUBLIC: public clients have no secret", c.ClientID)
	}
	secret, hash := identity.NewClientSecret()
	if err := s.deps.Store.SetClientSecretHash(r.Context(), realm.ID, c.ID, hash); err != nil {
		return err
	}
	c.SecretHash = hash
	rep := toRep(c)
	rep.Secret = secret
	return httpx.OK(w, rep)
}

// GetServiceAccountUser answers the client's service-account user, which
// only a client with the client_credentials grant has.
func (s *Service) GetServiceAccountUser(w http.ResponseWriter, r *http.Request) error {
	_, c, err := s.client(r)
	if err != nil {
		return err
	}
	u, err := s.deps.Store.GetServiceAccountUser(r.Context(), c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "client %s has no service-account user: its grantTypes do not include %s", c.ClientID, identity.GrantClientCredentials)
	} else if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.deps.UserRep(u))
	return nil
}

// CheckOutbound checks a client's back-channel logout URI, which the
// server posts logout tokens to, when it is new (before is the URI as
// stored; "" for a new client): disabling a client whose URI the guard
// refuses must not need that URI removed first. Realm import checks the
// clients it brings with it too.
func CheckOutbound(ctx context.Context, c *store.Client, before string, allowed []netip.Prefix) error {
	if c.BackchannelLogoutURI == before {
		return nil
	}
	return httpx.CheckOutboundURL(ctx, "backchannelLogoutUri", c.BackchannelLogoutURI, allowed)
}
