package saml

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The admin API of service providers:
// /admin/realms/{realm}/saml-service-providers[/{id}].

// spConflict names the field of an entity ID another SP of the realm has.
func spConflict(err error) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && ce.Column == "entity_id" {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "entityId",
			Message: "a SAML service provider with this entityId already exists in the realm", Cause: err}
	}
	return err
}

// SPCreate is the body of POST .../saml-service-providers: the fields of
// a service provider and its metadata, or the metadata's address.
type SPCreate struct {
	spCreate
	// MetadataURL is where the SP publishes its metadata, fetched once,
	// now, instead of the document given as metadata.
	MetadataURL *string `json:"metadataUrl"`
}

// CreateServiceProvider answers POST .../saml-service-providers.
func (s *Service) CreateServiceProvider(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.AdminRealm(r)
	if err != nil {
		return err
	}
	var body SPCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.MetadataURL != nil {
		if body.Metadata != nil {
			return apperr.Field("metadataUrl", "give the metadata or its address, not both")
		}
		doc, err := s.fetchMetadata(r.Context(), *body.MetadataURL)
		if err != nil {
			return err
		}
		body.Metadata = &doc
	}
	sp, err := newSP(uuid.NewString(), realm.ID, &body.spCreate, s.deps.Now().UnixMilli())
	if err != nil {
		return err
	}
	if err := s.deps.Store.CreateSAMLServiceProvider(r.Context(), sp); err != nil {
		return spConflict(err)
	}
	return httpx.Created(w, r.URL.Path+"/"+sp.ID, ToSP(sp))
}

// ListServiceProviders answers GET .../saml-service-providers.
func (s *Service) ListServiceProviders(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.AdminRealm(r)
	if err != nil {
		return err
	}
	sps, err := s.deps.Store.ListSAMLServiceProviders(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, sps, ToSP)
}

// serviceProvider loads the realm and the SP the path names ({id}).
func (s *Service) serviceProvider(r *http.Request) (*store.Realm, *store.SAMLServiceProvider, error) {
	realm, err := s.deps.AdminRealm(r)
	if err != nil {
		return nil, nil, err
	}
	id := mux.Vars(r)["id"]
	if uuid.Validate(id) != nil {
		return nil, nil, apperr.NotFound("SAML service provider " + id)
	}
	sp, err := s.deps.Store.GetSAMLServiceProvider(r.Context(), realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apperr.NotFound("SAML service provider " + id)
	}
	return realm, sp, err
}

// GetServiceProvider answers GET .../saml-service-providers/{id}.
func (s *Service) GetServiceProvider(w http.ResponseWriter, r *http.Request) error {
	_, sp, err := s.serviceProvider(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, ToSP(sp))
}

// SPUpdate is the body of a PUT: the representation's fields, each one
// the body names replacing the stored one, and the SP's metadata, whose
// values come first.
type SPUpdate struct {
	SP
	Metadata *string `json:"metadata"`
}

// spUpdatable are the fields a PUT may name, with what null sets them to
// (nil: the field's zero value).
var spUpdatable = map[string]any{
	"entityId": nil, "name": nil, "enabled": true, "acsUrl": nil, "sloUrl": "", "sloBinding": store.SLOBindingPOST,
	"certificate": "", "requestsSigned": false,
	"encryptionCertificate": "", "encryptAssertions": false, "nameIdFormat": NameIDEmail, "signAssertions": true,
	"signResponses": true, "attributeStatements": map[string]any{}, "idpInitiatedSso": false, "metadata": nil,
}

// UpdateServiceProvider answers PUT .../saml-service-providers/{id}.
func (s *Service) UpdateServiceProvider(w http.ResponseWriter, r *http.Request) error {
	_, sp, err := s.serviceProvider(r)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	var peek struct {
		Metadata *string `json:"metadata"`
	}
	if httpx.IsObject(body) {
		_ = json.Unmarshal(body, &peek) // a malformed body is reported by Update
	}
	if peek.Metadata != nil {
		// Metadata may ask for signed requests, never drop them: most SPs
		// leave AuthnRequestsSigned out, and a refresh of their metadata
		// must not turn off what an admin (or the upgrade, for an SP with
		// a certificate) required. The body's own requestsSigned decides.
		signed := sp.RequestsSigned
		if err := applyMetadata(sp, *peek.Metadata); err != nil {
			return err
		}
		sp.RequestsSigned = sp.RequestsSigned || signed && sp.Certificate != ""
	}
	current, err := httpx.AsJSONMap(ToSP(sp), spUpdatable)
	if err != nil {
		return err
	}
	var u SPUpdate
	if err := httpx.Update(body, current, spUpdatable, r.Method == http.MethodPatch, &u); err != nil {
		return err
	}
	sp.EntityID, sp.Name, sp.Enabled, sp.ACSURL, sp.SLOURL = u.EntityID, u.Name, u.Enabled, u.ACSURL, u.SLOURL
	sp.SLOBinding, sp.RequestsSigned = u.SLOBinding, u.RequestsSigned
	sp.Certificate, sp.EncryptionCertificate, sp.EncryptAssertions = u.Certificate, u.EncryptionCertificate, u.EncryptAssertions
	sp.NameIDFormat, sp.SignAssertions, sp.SignResponses = u.NameIDFormat, u.SignAssertions, u.SignResponses
	sp.AttributeStatements, sp.IDPInitiated = u.AttributeStatements, u.IDPInitiated
	if sp.AttributeStatements == nil {
		sp.AttributeStatements = map[string]string{}
	}
	if err := validateSP(sp); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateSAMLServiceProvider(r.Context(), sp); err != nil {
		return spConflict(err)
	}
	return httpx.OK(w, ToSP(sp))
}

// DeleteServiceProvider answers DELETE .../saml-service-providers/{id}.
func (s *Service) DeleteServiceProvider(w http.ResponseWriter, r *http.Request) error {
	realm, sp, err := s.serviceProvider(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteSAMLServiceProvider(r.Context(), realm.ID, sp.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}
