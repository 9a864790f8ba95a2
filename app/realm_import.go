package app

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/store"
)

type userImport struct {
	ID               *string         `json:"id"`
	CreatedTimestamp *int64          `json:"createdTimestamp"`
	Credentials      []credentialRep `json:"credentials"`
	Groups           []string        `json:"groups"`
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
}

// ImportRealm creates a realm, with its resources, from the realm JSON
// format. It validates everything before it writes anything, and writes it
// all in one transaction. An existing realm of that name is a conflict
// unless overwrite is set, when the import replaces it whole.
func ImportRealm(ctx context.Context, st *store.Store, data []byte, overwrite bool, now time.Time) (*store.Realm, error) {
	var in realmImport
	if err := strictUnmarshal(data, &in); err != nil {
		return nil, err
	}
	switch {
	case in.FormatVersion == nil:
		return nil, fieldError("formatVersion", "is required")
	case *in.FormatVersion < 1 || *in.FormatVersion > realmFormatVersion:
		return nil, fieldError("formatVersion", "must be between 1 and %d; this export is from a newer Idenplane", realmFormatVersion)
	case in.Name == nil:
		return nil, fieldError("name", "is required")
	}
	p := &importPlan{now: now.UnixMilli(), realmRoles: map[string]string{}, clientRoles: map[string]map[string]string{},
		clients: map[string]*store.Client{}, groupIDs: map[string]string{}}
	if err := p.build(&in); err != nil {
		return nil, err
	}
	err := st.Tx(ctx, func(tx *store.Store) error {
		existing, err := tx.GetRealm(ctx, p.realm.Name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			existing = nil
		case err != nil:
			return err
		case !overwrite:
			return errorf(http.StatusConflict, "conflict", "realm %s already exists; import with overwrite to replace it", p.realm.Name)
		}
		restoreRedacted(p.realm, existing)
		if err := validateRealm(p.realm); err != nil {
			return err
		}
		if existing != nil {
			if err := p.keepSecrets(ctx, tx, existing); err != nil {
				return err
			}
		}
		return p.replace(ctx, tx, existing)
	})
	if err != nil {
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

func (a *App) importRealm(w http.ResponseWriter, r *http.Request) error {
	overwrite, err := boolParam(r.URL.Query().Get("overwrite"), "overwrite")
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	realm, err := ImportRealm(r.Context(), a.store, body, overwrite, a.now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toRealmRep(realm, false))
	return nil
}
