package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// A realm's identity providers in the realm export, in the admin API's
// representation: by alias, the client secret in clear only in an export
// with secrets (else left out, never Redacted, so that an export imported
// and exported again is the same bytes).

// ExportProviders is the realm's providers as the export writes them.
func ExportProviders(ctx context.Context, tx *store.Store, realmID string, withSecrets bool) ([]ProviderRep, error) {
	list, err := tx.ListIdentityProviders(ctx, realmID)
	if err != nil {
		return nil, err
	}
	view := secretOmitted
	if withSecrets {
		view = secretClear
	}
	out := make([]ProviderRep, 0, len(list))
	for _, p := range list {
		rep, err := toRep(p, view)
		if err != nil {
			return nil, err
		}
		out = append(out, rep)
	}
	return out, nil
}

// ProviderImport is a provider as an import reads it: what a create takes,
// with the ID and creation time the export kept.
type ProviderImport struct {
	InternalID       *string `json:"internalId"`
	CreatedTimestamp *int64  `json:"createdTimestamp"`
	ProviderCreate
}

// ImportIDs are how an import gives resources their IDs and times:
// the realm import's rules (a kept UUID, or a new one for a copy).
type ImportIDs struct {
	ID        func(given *string, field string) (string, error)
	Timestamp func(*int64) int64
}

// PlanImport checks imported providers as the admin API would, but fetches
// nothing (no discovery) and accepts a provider without its secret. Errors
// name the field under "identityProviders[i]".
func PlanImport(realmID string, in []ProviderImport, ids ImportIDs) ([]*store.IdentityProvider, error) {
	out := make([]*store.IdentityProvider, 0, len(in))
	seen := map[string]bool{}
	for i, pi := range in {
		field := fmt.Sprintf("identityProviders[%d]", i)
		id, err := ids.ID(pi.InternalID, field+".internalId")
		if err != nil {
			return nil, err
		}
		p := &store.IdentityProvider{ID: id, RealmID: realmID, CreatedAt: ids.Timestamp(pi.CreatedTimestamp)}
		rep := pi.rep()
		if rep.ClientSecret == Redacted {
			rep.ClientSecret = ""
		}
		rep.apply(p)
		st, err := readSettings(p)
		if err != nil {
			return nil, err
		}
		fillPreset(p, st.Tenant)
		if err := validateProvider(p, false); err != nil {
			return nil, apperr.Under(err, field)
		}
		if seen[p.Alias] {
			return nil, apperr.Field(field+".alias", "another identity provider of the file has alias %s", p.Alias)
		}
		seen[p.Alias] = true
		out = append(out, p)
	}
	return out, nil
}

// KeepSecrets gives imported providers without a secret the secret of the
// provider with the same alias in the realm being overwritten.
func KeepSecrets(ctx context.Context, tx *store.Store, existingRealmID string, providers []*store.IdentityProvider) error {
	for _, p := range providers {
		if p.ClientSecret != "" {
			continue
		}
		old, err := tx.GetIdentityProvider(ctx, existingRealmID, p.Alias)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		p.ClientSecret = old.ClientSecret
	}
	return nil
}

// WriteImport stores planned providers inside the import's transaction.
func WriteImport(ctx context.Context, tx *store.Store, providers []*store.IdentityProvider) error {
	for i, p := range providers {
		if err := tx.CreateIdentityProvider(ctx, p); err != nil {
			var ce *store.ConflictError
			if errors.As(err, &ce) {
				field := fmt.Sprintf("identityProviders[%d].internalId", i)
				return &apperr.Error{Status: 409, Code: apperr.CodeConflict, Field: field,
					Message: field + ": another realm has an identity provider with id " + p.ID, Cause: err}
			}
			return err
		}
	}
	return nil
}

// ExportLinks is the realm's users' links as the export writes them, by
// user ID. Kept upstream tokens are not exported.
func ExportLinks(ctx context.Context, tx *store.Store, realmID string) (map[string][]FederatedIdentityRep, error) {
	all, err := tx.AllFederatedIdentities(ctx, realmID)
	if err != nil {
		return nil, err
	}
	out := map[string][]FederatedIdentityRep{}
	for _, f := range all {
		out[f.UserID] = append(out[f.UserID], toFederatedRep(f))
	}
	return out, nil
}

// PlanLinks checks a user's imported links against the file's providers
// (by alias); field is the user's place in the file.
func PlanLinks(providers []*store.IdentityProvider, user *store.User, field string, in []FederatedIdentityRep, createdAt int64) ([]*store.FederatedIdentity, error) {
	var out []*store.FederatedIdentity
	for i, rep := range in {
		f := fmt.Sprintf("%s.federatedIdentities[%d]", field, i)
		var p *store.IdentityProvider
		for _, candidate := range providers {
			if candidate.Alias == rep.IdentityProvider {
				p = candidate
			}
		}
		switch {
		case p == nil:
			return nil, apperr.Field(f+".identityProvider", "no identity provider %q in this file", rep.IdentityProvider)
		case rep.UserID == "":
			return nil, apperr.Field(f+".userId", "is required")
		}
		if err := validate.Setting(f+".userId", rep.UserID, 255); err != nil {
			return nil, err
		}
		if err := validate.Setting(f+".userName", rep.UserName, 255); err != nil {
			return nil, err
		}
		if err := validate.Setting(f+".email", rep.Email, 255); err != nil {
			return nil, err
		}
		at := rep.CreatedTimestamp
		if at == 0 {
			at = createdAt
		}
		out = append(out, &store.FederatedIdentity{ProviderID: p.ID, UserID: user.ID, RealmID: user.RealmID,
			Subject: rep.UserID, Username: rep.UserName, Email: rep.Email, CreatedAt: at})
	}
	return out, nil
}

// WriteLinks stores planned links inside the import's transaction; a user
// linked twice to a provider, or an upstream account linked to two users,
// is a 409 naming the first link at fault.
func WriteLinks(ctx context.Context, tx *store.Store, links []*store.FederatedIdentity, fields []string) error {
	for i, f := range links {
		if err := tx.CreateFederatedIdentity(ctx, f); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return &apperr.Error{Status: 409, Code: apperr.CodeConflict, Field: fields[i],
					Message: fields[i] + ": the user or the upstream account is linked twice to this identity provider", Cause: err}
			}
			return err
		}
	}
	return nil
}
