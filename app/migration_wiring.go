package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/migration"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// MigrationConfig is what the importers of other products' exports
// (app/migration) need beyond the store.
type MigrationConfig struct {
	// Identity is the identity core the users are created through; nil
	// makes one over the store (the command line's).
	Identity *identity.Core
	Log      *slog.Logger
	Now      func() time.Time // nil means time.Now
	// Realm is the {realm} lookup of the admin API; nil for the command
	// line, which has no routes.
	Realm func(r *http.Request) (*store.Realm, error)
	// Import is how a translated realm is imported: the options of the
	// admin API's realm import (the outbound checks, the signing keys),
	// or the command line's.
	Import ImportOptions
}

// NewMigration builds the importers over st: the admin API's (app.New)
// and `idenplane import --from`'s. A Keycloak realm goes through
// ImportRealm, in one transaction with what the importer adds.
func NewMigration(st *store.Store, cfg MigrationConfig) *migration.Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	core := cfg.Identity
	if core == nil {
		core = identity.New(identity.Deps{Store: st, Now: cfg.Now, Log: cfg.Log})
	}
	return migration.New(migration.Deps{Store: st, Identity: core, Log: cfg.Log, Now: cfg.Now, Realm: cfg.Realm,
		RealmNamed: func(ctx context.Context, name string) (*store.Realm, error) { return st.GetRealm(ctx, name) },
		ImportRealm: func(ctx context.Context, data []byte, o migration.RealmImport) (*store.Realm, error) {
			opts := cfg.Import
			opts.DryRun, opts.Then, opts.Progress = o.DryRun, o.Then, o.Progress
			return ImportRealm(ctx, st, data, opts, cfg.Now())
		},
		CheckMapper: func(protocol string, m migration.Mapper) error {
			return scopes.ValidateMapper("", protocol, &store.ProtocolMapper{Name: m.Name, MapperType: m.MapperType,
				Protocol: m.Protocol, Config: m.Config})
		},
		CheckProvider:        checkImportedProvider,
		DefaultScopes:        migrationScopes,
		ClientDefaultScopes:  clients.NewClientDefaultScopes,
		ClientOptionalScopes: clients.NewClientOptionalScopes,
		Locales:              ui.CatalogueTags(),
	})
}

// checkImportedProvider checks one identity provider of the realm format
// as the realm import will, its errors named under the provider.
func checkImportedProvider(raw json.RawMessage) error {
	var pi broker.ProviderImport
	if err := httpx.StrictUnmarshal(raw, &pi); err != nil {
		return err
	}
	ids := broker.ImportIDs{ID: func(*string, string) (string, error) { return uuid.NewString(), nil },
		Timestamp: func(*int64) int64 { return 0 }}
	_, err := broker.PlanImport(uuid.NewString(), []broker.ProviderImport{pi}, ids)
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Field != "" {
		out := *ae
		const prefix = "identityProviders[0]."
		if len(out.Field) > len(prefix) && out.Field[:len(prefix)] == prefix {
			out.Field = out.Field[len(prefix):]
		}
		if len(out.Message) > len(prefix) && out.Message[:len(prefix)] == prefix {
			out.Message = out.Message[len(prefix):]
		}
		return &out
	}
	return err
}

// migrationScopes are the client scopes a new realm starts with, in the
// realm format's shape.
func migrationScopes() []migration.Scope {
	var out []migration.Scope
	for _, sc := range scopes.Defaults(&store.Realm{}) {
		s := migration.Scope{Name: sc.Name, Description: sc.Description, Protocol: sc.Protocol}
		for _, m := range sc.Mappers {
			s.ProtocolMappers = append(s.ProtocolMappers, migration.Mapper{Name: m.Name, MapperType: m.MapperType,
				Protocol: m.Protocol, Config: m.Config})
		}
		out = append(out, s)
	}
	return out
}

// migrationImportOptions are the admin API's realm import options, for a
// realm translated from another product's export.
func migrationImportOptions(outbound []netip.Prefix, makeKey KeyMaker, webAuthn bool) ImportOptions {
	return ImportOptions{CheckOutbound: true, OutboundAllowed: outbound, SigningKeys: makeKey, NoWebAuthn: !webAuthn}
}
