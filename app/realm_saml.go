package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/saml"
	"github.com/idenplane/idenplane/store"
)

// The realm's SAML service providers in the realm export and import, in
// the representation of the admin API (package saml).

func exportSAML(ctx context.Context, tx *store.Store, realm *store.Realm, out *realmExport) error {
	sps, err := tx.ListSAMLServiceProviders(ctx, realm.ID)
	if err != nil {
		return err
	}
	out.SAMLServiceProviders = make([]saml.SP, len(sps))
	for i, sp := range sps {
		out.SAMLServiceProviders[i] = saml.ExportSP(sp)
	}
	settings, err := tx.GetSAMLSettings(ctx, realm.ID)
	if err != nil {
		return err
	}
	out.SAMLSettings = saml.ToSettings(settings)
	return nil
}

func (p *importPlan) buildSAMLServiceProviders(in *realmImport) error {
	seen := map[string]bool{}
	for i := range in.SAMLServiceProviders {
		prefix := fmt.Sprintf("samlServiceProviders[%d]", i)
		si := &in.SAMLServiceProviders[i]
		id, err := p.id(si.ID, prefix+".id")
		if err != nil {
			return err
		}
		sp, err := saml.ImportedSP(si, id, p.realm.ID, p.timestamp(si.CreatedTimestamp))
		if err != nil {
			return withPrefix(err, prefix)
		}
		if seen[sp.EntityID] {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: prefix + ".entityId",
				Message: fmt.Sprintf("%s.entityId: service provider %s appears twice", prefix, sp.EntityID)}
		}
		seen[sp.EntityID] = true
		p.samlSPs = append(p.samlSPs, sp)
	}
	if in.SAMLSettings != nil {
		p.samlSettings = saml.StoreSettings(p.realm.ID, *in.SAMLSettings)
	}
	return nil
}

func (p *importPlan) writeSAMLServiceProviders(ctx context.Context, tx *store.Store) error {
	if p.samlSettings != nil {
		if err := tx.PutSAMLSettings(ctx, p.samlSettings); err != nil {
			return err
		}
	}
	for i, sp := range p.samlSPs {
		if err := tx.CreateSAMLServiceProvider(ctx, sp); err != nil {
			return idConflict(err, fmt.Sprintf("samlServiceProviders[%d].id", i), "another realm has a SAML service provider with id "+sp.ID)
		}
	}
	return nil
}
