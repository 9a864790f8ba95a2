package ldapfed

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The realm export and import of providers: the admin API's
// representation, without the sync's state, the bind credential included
// only in an export with secrets.

// Export lists a realm's providers as the realm export writes them.
func Export(ctx context.Context, tx *store.Store, realmID string, includeSecrets bool) ([]Provider, error) {
	ps, err := tx.ListFederationProviders(ctx, realmID)
	if err != nil {
		return nil, err
	}
	out := make([]Provider, 0, len(ps))
	for _, p := range ps {
		r, err := rep(p, includeSecrets)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ImportedProvider is a provider in a realm file: the fields of a create,
// with the ones the export adds.
type ImportedProvider struct {
	ID               *string `json:"id"`
	CreatedTimestamp *int64  `json:"createdTimestamp"`
	Input
}

// PlanImport checks the providers of a realm file and turns them into the
// rows to write into realm realmID: each given ID kept unless asCopy, every
// setting checked as a create checks it, an error's field under
// "userFederationProviders[i]". A redacted bind credential stays empty, for
// KeepCredentials to fill from the realm being overwritten. ids maps the
// file's provider IDs to the ones they get, for the users' links.
func PlanImport(in []ImportedProvider, realmID string, asCopy bool, now int64) (out []*store.FederationProvider, ids map[string]string, err error) {
	out = make([]*store.FederationProvider, 0, len(in))
	ids = map[string]string{}
	for i, ip := range in {
		prefix := fmt.Sprintf("userFederationProviders[%d]", i)
		p := &store.FederationProvider{ID: uuid.NewString(), RealmID: realmID, CreatedAt: now}
		if ip.ID != nil && !asCopy {
			if err := uuid.Validate(*ip.ID); err != nil {
				return nil, nil, apperr.Field(prefix+".id", "must be a UUID")
			}
			p.ID = strings.ToLower(*ip.ID)
		}
		if ip.ID != nil {
			if ids[strings.ToLower(*ip.ID)] != "" {
				return nil, nil, apperr.Conflict(prefix+".id", "%s.id: %s appears twice", prefix, *ip.ID)
			}
			ids[strings.ToLower(*ip.ID)] = p.ID
		}
		if ip.CreatedTimestamp != nil {
			p.CreatedAt = *ip.CreatedTimestamp
		}
		in := ip.Input
		redactedCredential := in.BindCredential == redacted
		if redactedCredential {
			// Checked with a stand-in; KeepCredentials puts back the real one.
			in.BindCredential = "redacted"
		}
		if _, err := in.apply(p); err != nil {
			return nil, nil, apperr.Under(err, prefix)
		}
		if redactedCredential {
			p.BindCredential = ""
		}
		out = append(out, p)
	}
	return out, ids, nil
}

// Link is a user's link to a directory entry, as the realm export writes
// it with the user.
type Link struct {
	ProviderID string `json:"providerId"`
	ExternalID string `json:"externalId"`
	DN         string `json:"dn"`
}

// ExportLinks are the links of a realm's users, by user ID.
func ExportLinks(ctx context.Context, tx *store.Store, realmID string) (map[string]*Link, error) {
	ps, err := tx.ListFederationProviders(ctx, realmID)
	if err != nil {
		return nil, err
	}
	out := map[string]*Link{}
	for _, p := range ps {
		links, err := tx.FederationLinks(ctx, realmID, p.ID)
		if err != nil {
			return nil, err
		}
		for _, l := range links {
			out[l.UserID] = &Link{ProviderID: l.ProviderID, ExternalID: l.ExternalID, DN: l.DN}
		}
	}
	return out, nil
}

// PlanLink checks the link of an imported user (field is its place in
// the file) against the providers of the file (ids, from PlanImport).
func PlanLink(l *Link, field, realmID, userID string, ids map[string]string) (*store.FederationLink, error) {
	providerID := ids[strings.ToLower(l.ProviderID)]
	switch {
	case providerID == "":
		return nil, apperr.Field(field+".providerId", "no user federation provider with id %s in this file", l.ProviderID)
	case l.ExternalID == "" || len(l.ExternalID) > 255:
		return nil, apperr.Field(field+".externalId", "must be the entry's ID, 1 to 255 characters")
	case len(l.DN) > maxDNLength:
		return nil, apperr.Field(field+".dn", "must be at most %d characters", maxDNLength)
	}
	if _, err := ldap.ParseDN(l.DN); err != nil || l.DN == "" {
		return nil, apperr.Field(field+".dn", "is not a distinguished name")
	}
	return &store.FederationLink{UserID: userID, RealmID: realmID, ProviderID: providerID, ExternalID: l.ExternalID, DN: l.DN}, nil
}

// WriteLinks inserts the links of an import, after its users and providers.
func WriteLinks(ctx context.Context, tx *store.Store, links []*store.FederationLink) error {
	for _, l := range links {
		if err := tx.PutFederationLink(ctx, l); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return apperr.Conflict("", "two users of this file are linked to the same directory entry %s", l.ExternalID)
			}
			return err
		}
	}
	return nil
}

// KeepCredentials gives the providers of an import whose bind credential
// the file redacted the one the same provider has in the realm being
// overwritten (existingRealmID, empty for none). One that has none there
// is imported disabled, without a credential: it cannot bind until an
// admin sets one, and enabling it asks for one.
func KeepCredentials(ctx context.Context, tx *store.Store, ps []*store.FederationProvider, existingRealmID string) error {
	for _, p := range ps {
		if p.BindCredential != "" {
			continue
		}
		if existingRealmID != "" {
			old, err := tx.GetFederationProvider(ctx, existingRealmID, p.ID)
			if err == nil {
				p.BindCredential = old.BindCredential
				continue
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		p.Enabled = false
	}
	return nil
}

// Write inserts the providers of an import.
func Write(ctx context.Context, tx *store.Store, ps []*store.FederationProvider) error {
	for i, p := range ps {
		err := tx.CreateFederationProvider(ctx, p)
		var ce *store.ConflictError
		if errors.As(err, &ce) && ce.Column != "name" {
			return apperr.Conflict(fmt.Sprintf("userFederationProviders[%d].id", i),
				"userFederationProviders[%d].id: another realm has a provider with id %s; import the realm as a copy", i, p.ID)
		} else if err != nil {
			return nameConflict(err)
		}
	}
	return nil
}
