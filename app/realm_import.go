package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authflows"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/ldapfed"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/app/policies"
	"github.com/idenplane/idenplane/app/saml"
	"github.com/idenplane/idenplane/app/scim"
	"github.com/idenplane/idenplane/app/signingkeys"
	"github.com/idenplane/idenplane/store"
)

type userImport struct {
	ID                  *string                       `json:"id"`
	FederationLink      *ldapfed.Link                 `json:"federationLink"`
	CreatedTimestamp    *int64                        `json:"createdTimestamp"`
	Credentials         []credentialRep               `json:"credentials"`
	Groups              []string                      `json:"groups"`
	FederatedIdentities []broker.FederatedIdentityRep `json:"federatedIdentities"`
	roleRefs
	userCreate
}

type mapperImport struct {
	ID               *string           `json:"id"`
	Name             string            `json:"name"`
	MapperType       string            `json:"mapperType"`
	Protocol         string            `json:"protocol"`
	Config           map[string]string `json:"config"`
	CreatedTimestamp *int64            `json:"createdTimestamp"`
}

type scopeImport struct {
	ID               *string        `json:"id"`
	Name             string         `json:"name"`
	Description      string         `json:"description"`
	Protocol         string         `json:"protocol"`
	CreatedTimestamp *int64         `json:"createdTimestamp"`
	ProtocolMappers  []mapperImport `json:"protocolMappers"`
}

type serviceAccountImport struct {
	ID               *string `json:"id"`
	Username         string  `json:"username"`
	Enabled          *bool   `json:"enabled"`
	CreatedTimestamp *int64  `json:"createdTimestamp"`
	roleRefs
}

type clientImport struct {
	ID                               *string               `json:"id"`
	ClientID                         string                `json:"clientId"`
	Name                             string                `json:"name"`
	Description                      string                `json:"description"`
	ClientType                       string                `json:"clientType"`
	Enabled                          *bool                 `json:"enabled"`
	RedirectURIs                     []string              `json:"redirectUris"`
	WebOrigins                       []string              `json:"webOrigins"`
	GrantTypes                       []string              `json:"grantTypes"`
	RequireConsent                   bool                  `json:"requireConsent"`
	BackchannelLogoutURI             string                `json:"backchannelLogoutUri"`
	BackchannelLogoutSessionRequired *bool                 `json:"backchannelLogoutSessionRequired"`
	IDTokenOnRefresh                 *bool                 `json:"idTokenOnRefresh"`
	CreatedTimestamp                 *int64                `json:"createdTimestamp"`
	SecretHash                       string                `json:"secretHash"`
	DefaultClientScopes              []string              `json:"defaultClientScopes"`
	OptionalClientScopes             []string              `json:"optionalClientScopes"`
	ServiceAccount                   *serviceAccountImport `json:"serviceAccount"`
}

type roleImport struct {
	ID               *string   `json:"id"`
	Name             string    `json:"name"`
	Description      string    `json:"description"`
	CreatedTimestamp *int64    `json:"createdTimestamp"`
	Composites       *roleRefs `json:"composites"`
}

type rolesImport struct {
	Realm  []roleImport            `json:"realm"`
	Client map[string][]roleImport `json:"client"`
}

type groupImport struct {
	ID               *string `json:"id"`
	Name             string  `json:"name"`
	Description      string  `json:"description"`
	ParentID         string  `json:"parentId"`
	CreatedTimestamp *int64  `json:"createdTimestamp"`
	roleRefs
}

type realmImport struct {
	FormatVersion    *int    `json:"formatVersion"`
	ID               *string `json:"id"`
	CreatedTimestamp *int64  `json:"createdTimestamp"`
	realmCreate
	// A nil ClientScopes (the key absent) gives the realm the default
	// scopes, as creating a realm does; an empty list gives it none.
	ClientScopes *[]scopeImport `json:"clientScopes"`
	Clients      []clientImport `json:"clients"`
	Roles        rolesImport    `json:"roles"`
	Groups       []groupImport  `json:"groups"`
	Users        []userImport   `json:"users"`
	// SAMLServiceProviders are checked as the admin API checks them.
	SAMLServiceProviders []saml.ImportSP `json:"samlServiceProviders"`
	// IdentityProviders: an export without secrets has them without their
	// client secrets; overwriting a realm keeps those of the same alias.
	IdentityProviders []broker.ProviderImport `json:"identityProviders"`
	// UserFederationProviders are the realm's directories (app/ldapfed).
	UserFederationProviders []ldapfed.ImportedProvider `json:"userFederationProviders"`
	SAMLSettings            *saml.Settings             `json:"samlSettings"`
	// SCIMAttributeMappings are the realm's SCIM attribute mappings (app/scim).
	SCIMAttributeMappings []scim.ImportedMapping `json:"scimAttributeMappings"`
	// Organizations name their members by username and their SSO
	// connections' providers by alias, of this file.
	Organizations []orgs.OrganizationImport `json:"organizations"`
	// AuthFlows bind their clients by clientId and entity ID, of this
	// file.
	AuthFlows []authflows.FlowBody `json:"authFlows"`
	// AuthorizationPolicies are checked as the admin API checks them;
	// AuthorizationSettings absent keep the defaults (app/policies).
	AuthorizationPolicies []policies.ImportedPolicy `json:"authorizationPolicies"`
	AuthorizationSettings *policies.Settings        `json:"authorizationSettings"`
}

// ImportOptions say how an import treats what is already there.
type ImportOptions struct {
	// Overwrite replaces an existing realm of the same name, whole.
	Overwrite bool
	// AsCopy gives the realm and every resource in it new IDs, as a file
	// without a realm id gets, so an export can sit beside the realm it
	// was made from under another name.
	AsCopy bool
	// CheckOutbound checks the settings that name an address the server
	// calls as the admin API does when it saves them, against
	// OutboundAllowed (Config.OutboundAllowed): the admin API's import
	// does; the command-line import, which the operator runs, does not.
	CheckOutbound   bool
	OutboundAllowed []netip.Prefix
	// NoWebAuthn refuses flows with passkey or security-key steps bound
	// to clients: the admin API's import on a server whose base URL is an
	// IP address, where browsers hold no WebAuthn ceremony.
	NoWebAuthn bool
	// SigningKeys makes the realm's first key's (Config.SigningKeys); nil,
	// NewPrivateKey.
	SigningKeys KeyMaker
	// DryRun checks and writes everything in the transaction, Then
	// included, and rolls it back: what would be refused is refused, and
	// nothing is kept.
	DryRun bool
	// Then, when set, writes what the realm format does not carry (an
	// importer's second factors and attributes: app/migration) in the
	// import's transaction, after the realm and its resources.
	Then func(ctx context.Context, tx *store.Store, realm *store.Realm) error
	// Progress, when set, is told after each user written.
	Progress func(done, total int)
}

// errDryRun rolls back the transaction of a dry run.
var errDryRun = errors.New("dry run: rolled back")

// copyHint is how a conflict of kept IDs says what to do instead.
const copyHint = "import it as a copy (asCopy=true, or --as-copy) to give the realm and everything in it new IDs"

// ImportRealm creates a realm, with its resources, from the realm JSON
// format. It validates everything before it writes anything, and writes it
// all in one transaction. An existing realm of that name is a conflict
// unless opts.Overwrite is set, when the import replaces it whole; an
// existing realm of another name with the file's realm id is a conflict
// unless opts.AsCopy is set.
func ImportRealm(ctx context.Context, st *store.Store, data []byte, opts ImportOptions, now time.Time) (*store.Realm, error) {
	if opts.AsCopy && opts.Overwrite {
		return nil, &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidParameter, Field: "asCopy",
			Message: "asCopy: cannot be combined with overwrite: a copy has new IDs, so it would keep none of the " +
				"secrets and second factors of the realm it replaces"}
	}
	var in realmImport
	if err := httpx.StrictUnmarshal(data, &in); err != nil {
		return nil, err
	}
	switch {
	case in.FormatVersion == nil:
		return nil, apperr.Field("formatVersion", "is required")
	case *in.FormatVersion < 1 || *in.FormatVersion > realmFormatVersion:
		return nil, apperr.Field("formatVersion", "must be between 1 and %d; this export is from a newer Idenplane", realmFormatVersion)
	case in.Name == nil:
		return nil, apperr.Field("name", "is required")
	}
	// An import hashes no password: a core of its own, over st and now, has
	// all it needs.
	core := identity.New(identity.Deps{Store: st, Now: func() time.Time { return now }})
	p := &importPlan{core: core, now: now.UnixMilli(), realmRoles: map[string]string{}, clientRoles: map[string]map[string]string{},
		clients: map[string]*store.Client{}, groupIDs: map[string]string{}, copy: opts.AsCopy || in.ID == nil, webAuthn: !opts.NoWebAuthn,
		progress: opts.Progress}
	if err := p.build(&in); err != nil {
		return nil, err
	}
	if opts.CheckOutbound {
		if err := p.checkOutbound(ctx, opts.OutboundAllowed); err != nil {
			return nil, err
		}
	}
	makeKey := opts.SigningKeys
	if makeKey == nil {
		makeKey = NewPrivateKey
	}
	var err error
	if p.keys, err = signingkeys.NewRealmKeys(makeKey, p.realm.ID, now); err != nil {
		return nil, err
	}
	err = st.Tx(ctx, func(tx *store.Store) error {
		existing, err := tx.GetRealm(ctx, p.realm.Name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			existing = nil
		case err != nil:
			return err
		case !opts.Overwrite:
			return apperr.New(http.StatusConflict, apperr.CodeConflict, "realm %s already exists; import with overwrite to replace it", p.realm.Name)
		}
		if p.realm.Name == SystemRealmName {
			return apperr.Field("name", "%s is the system realm, which holds the administrators: an import never replaces it", SystemRealmName)
		}
		if err := p.realmIDFree(ctx, tx, existing); err != nil {
			return err
		}
		restoreRedacted(p.realm, existing)
		if err := validateRealm(p.realm); err != nil {
			return err
		}
		existingID := ""
		if existing != nil {
			if err := p.keepSecrets(ctx, tx, existing); err != nil {
				return err
			}
			if err := broker.KeepSecrets(ctx, tx, existing.ID, p.providers); err != nil {
				return err
			}
			existingID = existing.ID
		}
		if err := ldapfed.KeepCredentials(ctx, tx, p.federation, existingID); err != nil {
			return err
		}
		if err := p.replace(ctx, tx, existing); err != nil {
			return err
		}
		if err := ldapfed.Write(ctx, tx, p.federation); err != nil {
			return err
		}
		if err := ldapfed.WriteLinks(ctx, tx, p.fedLinks); err != nil {
			return err
		}
		if err := scim.WriteMappings(ctx, tx, p.scimMappings); err != nil {
			return err
		}
		if opts.Then != nil {
			if err := opts.Then(ctx, tx, p.realm); err != nil {
				return err
			}
		}
		if opts.DryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, err
	}
	return p.realm, nil
}

// restoreRedacted drops redaction placeholders from an export made without
// secrets, keeping the secrets of the realm being overwritten, if any.
func restoreRedacted(realm, existing *store.Realm) {
	var old store.Realm
	if existing != nil {
		old = *existing
	}
	if realm.SMTPPassword == redacted {
		realm.SMTPPassword = old.SMTPPassword
	}
	realm.EmailProviderConfig = keepRedacted(realm.EmailProviderConfig, old.EmailProviderConfig)
	for k, v := range realm.EmailProviderConfig {
		if v == redacted {
			delete(realm.EmailProviderConfig, k)
		}
	}
}

// realmIDFree refuses a kept realm id that a realm other than the one
// being overwritten holds: the file is an export of that realm, renamed.
func (p *importPlan) realmIDFree(ctx context.Context, tx *store.Store, overwritten *store.Realm) error {
	if p.copy || (overwritten != nil && overwritten.ID == p.realm.ID) {
		return nil
	}
	holder, err := tx.GetRealmByID(ctx, p.realm.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "id",
		Message: fmt.Sprintf("id: realm %s already has id %s, so this file is an export of realm %s under another name; %s",
			holder.Name, p.realm.ID, holder.Name, copyHint)}
}

func (a *App) importRealm(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	opts := ImportOptions{CheckOutbound: true, OutboundAllowed: a.cfg.OutboundAllowed, SigningKeys: a.makeKey,
		NoWebAuthn: !a.webauthn.Available()}
	var err error
	if opts.Overwrite, err = httpx.BoolParam(q.Get("overwrite"), "overwrite"); err != nil {
		return err
	}
	if opts.AsCopy, err = httpx.BoolParam(q.Get("asCopy"), "asCopy"); err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	realm, err := ImportRealm(r.Context(), a.store, body, opts, a.now())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, toRealmRep(realm, false))
	return nil
}
