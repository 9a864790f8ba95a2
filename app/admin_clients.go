package app

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// client loads the realm and the client named by {clientId} in the path.
func (a *App) client(r *http.Request) (*store.Realm, *store.Client, error) {
	return realmChild(a, r, "clientId", "client", a.store.GetClientByClientID)
}

// clientRep is a client as the admin API shows it and as the realm export
// writes it (docs/realm-format.md): the same fields in the same order. Each
// view adds fields of its own, which the other leaves unset and so out:
//   - the API (toClientRep) adds publicClient and serviceAccountsEnabled,
//     which follow from clientType and grantTypes, and, in the answers to
//     create and regenerate-secret only, the secret itself: only its hash is
//     kept, so it is shown once;
//   - the export (exportClient) adds, with includeSecrets, the secret's hash,
//     and always the linked scopes by name and the service-account user.
//
// An update is read into this type too, the fields clientUpdateDefaults
// names. The bodies that create or import a client have types of their own,
// whose pointers tell a field left out from one set to its zero value.
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
	ServiceAccount       *serviceAccountExport `json:"serviceAccount,omitempty"`      // export
}

// clientFields is what both views of a client show.
func clientFields(c *store.Client) clientRep {
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
		BackchannelLogoutSessionRequired: c.BackchannelLogoutSessionRequired, IDTokenOnRefresh: !c.OmitIDTokenOnRefresh,
		CreatedTimestamp: c.CreatedAt,
	}
}

// toClientRep shows a client as the admin API does.
func toClientRep(c *store.Client) clientRep {
	rep := clientFields(c)
	public, serviceAccount := c.ClientType == identity.ClientPublic, identity.HasServiceAccount(c)
	rep.PublicClient, rep.ServiceAccountsEnabled = &public, &serviceAccount
	return rep
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
	IDTokenOnRefresh                 *bool     `json:"idTokenOnRefresh"`
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
	if b.IDTokenOnRefresh != nil {
		c.OmitIDTokenOnRefresh = !*b.IDTokenOnRefresh
	}
}

// clientConflict names the field behind a clash of clientIds. A clash of
// the service-account username a clientId leads to is the identity
// core's to name (SyncServiceAccount).
func clientConflict(err error, c *store.Client) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && ce.Column == "client_id" {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "clientId",
			Message: "a client with clientId " + c.ClientID + " already exists in this realm", Cause: err}
	}
	return err
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
	c := store.Client{ID: uuid.NewString(), RealmID: realm.ID, ClientType: identity.ClientConfidential, Enabled: true,
		GrantTypes: identity.DefaultGrantTypes(), BackchannelLogoutSessionRequired: true, CreatedAt: a.now().UnixMilli()}
	body.apply(&c)
	if err := identity.ValidateClient(&c); err != nil {
		return err
	}
	if err := checkClientOutbound(r.Context(), &c, "", a.cfg.OutboundAllowed); err != nil {
		return err
	}
	var secret string
	if c.ClientType == identity.ClientConfidential {
		secret, c.SecretHash = identity.NewClientSecret()
	}
	err = a.store.Tx(r.Context(), func(tx *store.Store) error { return a.storeNewClient(r.Context(), tx, realm, &c) })
	if err != nil {
		return err
	}
	rep := toClientRep(&c)
	rep.Secret = secret
	return httpx.Created(w, a.childURL(r, c.ClientID), rep)
}

// storeNewClient stores a validated new client on tx with the realm's
// standard scopes and, when it has the client_credentials grant, its
// service-account user. The non-human identities make their backing
// clients with it too.
func (a *App) storeNewClient(ctx context.Context, tx *store.Store, realm *store.Realm, c *store.Client) error {
	if err := tx.CreateClient(ctx, c); err != nil {
		return clientConflict(err, c)
	}
	if err := linkNewClientScopes(ctx, tx, c); err != nil {
		return err
	}
	return a.id.SyncServiceAccount(ctx, tx, realm, c)
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
	return httpx.List(w, clients, toClientRep)
}

func (a *App) getClient(w http.ResponseWriter, r *http.Request) error {
	_, c, err := a.client(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toClientRep(c))
}

// clientUpdateDefaults names the fields an update may change, the spec's
// and backchannelLogoutSessionRequired, and what null resets each to: the
// create defaults. clientId and clientType are fixed.
func clientUpdateDefaults() map[string]any {
	return map[string]any{
		"name": nil, "description": nil, "enabled": true, "redirectUris": nil, "webOrigins": nil,
		"grantTypes": identity.DefaultGrantTypes(), "requireConsent": false, "backchannelLogoutUri": nil,
		"backchannelLogoutSessionRequired": true, "idTokenOnRefresh": true,
	}
}

// updateClient answers PUT and PATCH. Adding the client_credentials grant
// gives the client a service-account user; removing the grant deletes that
// user.
func (a *App) updateClient(w http.ResponseWriter, r *http.Request) error {
	realm, c, err := a.client(r)
	if err != nil {
		return err
	}
	u, err := httpx.ReadUpdate[clientRep](r, toClientRep(c), clientUpdateDefaults())
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
	if err := checkClientOutbound(r.Context(), c, storedBackchannel, a.cfg.OutboundAllowed); err != nil {
		return err
	}
	var ended []*store.Session
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if ended, err = a.id.UpdateClient(r.Context(), tx, c); err != nil {
			return err
		}
		return a.id.SyncServiceAccount(r.Context(), tx, realm, c)
	})
	if err != nil {
		return err
	}
	a.backchannelLogout(r.Context(), realm, ended)
	return httpx.OK(w, toClientRep(c))
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
	return httpx.NoContent(w)
}

func (a *App) regenerateClientSecret(w http.ResponseWriter, r *http.Request) error {
	realm, c, err := a.client(r)
	if err != nil {
		return err
	}
	if c.ClientType == identity.ClientPublic {
		return apperr.Invalid("client %s is PUBLIC: public clients have no secret", c.ClientID)
	}
	secret, hash := identity.NewClientSecret()
	if err := a.store.SetClientSecretHash(r.Context(), realm.ID, c.ID, hash); err != nil {
		return err
	}
	c.SecretHash = hash
	rep := toClientRep(c)
	rep.Secret = secret
	return httpx.OK(w, rep)
}

func (a *App) getServiceAccountUser(w http.ResponseWriter, r *http.Request) error {
	_, c, err := a.client(r)
	if err != nil {
		return err
	}
	u, err := a.store.GetServiceAccountUser(r.Context(), c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "client %s has no service-account user: its grantTypes do not include %s", c.ClientID, identity.GrantClientCredentials)
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
		return httpx.List(w, scopes, toLinkedScopeRep)
	}
}

// linkedScopeAdd is the body that assigns a scope to a client.
type linkedScopeAdd struct {
	ClientScopeID *string `json:"clientScopeId"`
}

// addLinkedScope assigns a realm scope to a client as default or optional
// and answers 201 with the scope. A scope is assigned one way at most.
func (a *App) addLinkedScope(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		realm, c, err := a.client(r)
		if err != nil {
			return err
		}
		var body linkedScopeAdd
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
		return httpx.NoContent(w)
	}
}
