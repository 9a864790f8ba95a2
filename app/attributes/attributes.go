// Package attributes is the realm's custom attributes: the schema's admin
// API (Keycloak's declarative user profile, reduced to typed attributes)
// and a user's values. The rules of both are the identity core's
// (identity.CheckAttribute, identity.CheckAttributeValues), so that every
// path that writes a user obeys the same ones.
package attributes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the custom attributes area uses.
type Deps struct {
	Store *store.Store
	Now   func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for the Location of a new
	// attribute.
	BaseURL string
	// SetUserAttributes is the identity core's write of a user's values.
	SetUserAttributes func(ctx context.Context, tx *store.Store, u *store.User, schema []*store.CustomAttribute, values map[string][]string) error
}

// Service is the custom attributes area: the admin API's handlers.
type Service struct{ deps Deps }

// New builds the custom attributes area.
func New(d Deps) *Service { return &Service{deps: d} }

// AttributeRep is an attribute of the schema as the API shows it and takes
// it.
type AttributeRep struct {
	ID               string        `json:"id"`
	Name             string        `json:"name"`
	DisplayName      string        `json:"displayName"`
	Type             string        `json:"type"`
	Required         bool          `json:"required"`
	Multivalued      bool          `json:"multivalued"`
	Options          []string      `json:"options"`
	Validation       ValidationRep `json:"validation"`
	EditableBy       string        `json:"editableBy"`
	OnRegistration   bool          `json:"onRegistration"`
	InTokens         bool          `json:"inTokens"`
	CreatedTimestamp int64         `json:"createdTimestamp"`
}

// ValidationRep is an attribute's rules beyond its type.
type ValidationRep struct {
	Pattern   string   `json:"pattern,omitempty"`
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
}

func toRep(a *store.CustomAttribute) AttributeRep {
	opts := a.Options
	if opts == nil {
		opts = []string{}
	}
	v := a.Validation
	return AttributeRep{ID: a.ID, Name: a.Name, DisplayName: a.DisplayName, Type: a.Type, Required: a.Required,
		Multivalued: a.Multivalued, Options: opts, EditableBy: a.EditableBy, OnRegistration: a.OnRegistration,
		InTokens: a.InTokens, CreatedTimestamp: a.CreatedAt,
		Validation: ValidationRep{Pattern: v.Pattern, MinLength: v.MinLength, MaxLength: v.MaxLength, Min: v.Min, Max: v.Max}}
}

// AttributeBody is one attribute in a request: the representation, whose
// id and createdTimestamp are the server's (a body may repeat them).
type AttributeBody struct {
	ID               *string       `json:"id"`
	Name             string        `json:"name"`
	DisplayName      string        `json:"displayName"`
	Type             string        `json:"type"`
	Required         bool          `json:"required"`
	Multivalued      bool          `json:"multivalued"`
	Options          []string      `json:"options"`
	Validation       ValidationRep `json:"validation"`
	EditableBy       string        `json:"editableBy"`
	OnRegistration   bool          `json:"onRegistration"`
	InTokens         bool          `json:"inTokens"`
	CreatedTimestamp *int64        `json:"createdTimestamp"`
}

// apply sets the body's fields on a and checks it; errors are prefixed
// with prefix ("attributes[2]." in a bulk update).
func (b AttributeBody) apply(a *store.CustomAttribute, prefix string) error {
	v := b.Validation
	a.Name, a.DisplayName, a.Type, a.Required, a.Multivalued = b.Name, b.DisplayName, b.Type, b.Required, b.Multivalued
	a.Options, a.EditableBy, a.OnRegistration, a.InTokens = b.Options, b.EditableBy, b.OnRegistration, b.InTokens
	a.Validation = store.AttributeValidation{Pattern: v.Pattern, MinLength: v.MinLength, MaxLength: v.MaxLength, Min: v.Min, Max: v.Max}
	err := identity.CheckAttribute(a)
	var e *apperr.Error
	if prefix != "" && errors.As(err, &e) {
		c := *e
		c.Field = prefix + e.Field
		c.Message = prefix + e.Message
		return &c
	}
	return err
}

func nameConflict(err error, name, field string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: field,
			Message: "an attribute named " + name + " already exists", Cause: err}
	}
	return err
}

// attribute loads the realm and the attribute {attributeId} names.
func (s *Service) attribute(r *http.Request) (*store.Realm, *store.CustomAttribute, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	a, err := httpx.ChildOf(r, realm.ID, "attributeId", "custom attribute", s.deps.Store.GetCustomAttribute)
	return realm, a, err
}

// CreateAttribute answers POST .../custom-attributes.
func (s *Service) CreateAttribute(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body AttributeBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	a := &store.CustomAttribute{ID: uuid.NewString(), RealmID: realm.ID, CreatedAt: s.deps.Now().UnixMilli()}
	if err := body.apply(a, ""); err != nil {
		return err
	}
	if err := s.deps.Store.CreateCustomAttribute(r.Context(), a); err != nil {
		return nameConflict(err, a.Name, "name")
	}
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+a.ID, toRep(a))
}

// ListAttributes answers the realm's schema, by name.
func (s *Service) ListAttributes(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	list, err := s.deps.Store.ListCustomAttributes(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, list, toRep)
}

// GetAttribute answers one attribute of the schema.
func (s *Service) GetAttribute(w http.ResponseWriter, r *http.Request) error {
	_, a, err := s.attribute(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toRep(a))
}

// UpdateAttribute answers PUT .../custom-attributes/{attributeId}: the
// whole attribute, as POST takes it.
func (s *Service) UpdateAttribute(w http.ResponseWriter, r *http.Request) error {
	_, a, err := s.attribute(r)
	if err != nil {
		return err
	}
	var body AttributeBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.keepsIdentity(a, ""); err != nil {
		return err
	}
	if err := body.apply(a, ""); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateCustomAttribute(r.Context(), a); err != nil {
		return nameConflict(err, a.Name, "name")
	}
	return httpx.OK(w, toRep(a))
}

// keepsIdentity refuses a body that changes an attribute's id or creation
// time.
func (b AttributeBody) keepsIdentity(a *store.CustomAttribute, prefix string) error {
	if b.ID != nil && *b.ID != a.ID {
		return apperr.Field(prefix+"id", "cannot be changed")
	}
	if b.CreatedTimestamp != nil && *b.CreatedTimestamp != a.CreatedAt {
		return apperr.Field(prefix+"createdTimestamp", "cannot be changed")
	}
	return nil
}

// DeleteAttribute answers DELETE .../custom-attributes/{attributeId}. Users
// keep their values, unseen: the attribute added again shows them again.
func (s *Service) DeleteAttribute(w http.ResponseWriter, r *http.Request) error {
	realm, a, err := s.attribute(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteCustomAttribute(r.Context(), realm.ID, a.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// SchemaBody is the body of the bulk PUT: the whole schema, as Keycloak's
// user profile configuration holds its attributes.
type SchemaBody struct {
	Attributes []AttributeBody `json:"attributes"`
}

// PutAttributes answers PUT .../custom-attributes: the schema becomes the
// attributes listed. One named as an existing one (by id, else by name)
// is updated and keeps its id; a new one is created; one left out is
// removed. Nothing changes unless all of it is valid.
func (s *Service) PutAttributes(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body SchemaBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Attributes == nil {
		return apperr.Field("attributes", "is required: the whole schema, [] for none")
	}
	ctx := r.Context()
	var out []*store.CustomAttribute
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		current, err := tx.ListCustomAttributes(ctx, realm.ID)
		if err != nil {
			return err
		}
		now := s.deps.Now().UnixMilli()
		var kept []string
		for i, b := range body.Attributes {
			prefix := fmt.Sprintf("attributes[%d].", i)
			j := slices.IndexFunc(current, func(a *store.CustomAttribute) bool {
				if b.ID != nil {
					return a.ID == *b.ID
				}
				return a.Name == b.Name
			})
			a := &store.CustomAttribute{ID: uuid.NewString(), RealmID: realm.ID, CreatedAt: now}
			switch {
			case j >= 0:
				a = current[j]
			case b.ID != nil:
				return &apperr.Error{Status: http.StatusNotFound, Code: apperr.CodeNotFound, Field: prefix + "id",
					Message: prefix + "id: custom attribute " + *b.ID + " not found"}
			}
			if err := b.keepsIdentity(a, prefix); err != nil {
				return err
			}
			if err := b.apply(a, prefix); err != nil {
				return err
			}
			if slices.ContainsFunc(out, func(o *store.CustomAttribute) bool { return o.Name == a.Name || o.ID == a.ID }) {
				return apperr.Field(prefix+"name", "%s is listed twice", a.Name)
			}
			out = append(out, a)
			kept = append(kept, a.ID)
		}
		// Removals first, then renames and additions: a name may move from
		// one attribute to another.
		for _, a := range current {
			if !slices.Contains(kept, a.ID) {
				if err := tx.DeleteCustomAttribute(ctx, realm.ID, a.ID); err != nil {
					return err
				}
			}
		}
		for i, a := range out {
			if slices.ContainsFunc(current, func(c *store.CustomAttribute) bool { return c.ID == a.ID }) {
				err = tx.UpdateCustomAttribute(ctx, a)
			} else {
				err = tx.CreateCustomAttribute(ctx, a)
			}
			if err != nil {
				return nameConflict(err, a.Name, fmt.Sprintf("attributes[%d].name", i))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(out, func(a, b *store.CustomAttribute) int { return strings.Compare(a.Name, b.Name) })
	return httpx.List(w, out, toRep)
}

// user loads the realm and the user {userId} names.
func (s *Service) user(r *http.Request) (*store.Realm, *store.User, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	u, err := httpx.ChildOf(r, realm.ID, "userId", "user", s.deps.Store.GetUser)
	return realm, u, err
}

// GetUserAttributes answers a user's values of the schema's attributes,
// each a list of strings as Keycloak's user attributes are; values of
// attributes no longer in the schema are left out.
func (s *Service) GetUserAttributes(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	schema, err := s.deps.Store.ListCustomAttributes(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	held, err := s.deps.Store.UserCustomAttributes(r.Context(), u.ID)
	if err != nil {
		return err
	}
	out := map[string][]string{}
	for _, a := range schema {
		if v := held[a.Name]; len(v) > 0 {
			out[a.Name] = v
		}
	}
	return httpx.OK(w, out)
}

// PutUserAttributes answers PUT .../users/{userId}/attributes: the user's
// values of every attribute of the schema, each a value or a list of
// values (strings, numbers, booleans), checked all at once: the answer
// lists every value at fault.
func (s *Service) PutUserAttributes(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.user(r)
	if err != nil {
		return err
	}
	var body map[string]json.RawMessage
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	values, err := TextValues(body)
	if err != nil {
		return err
	}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		schema, err := tx.ListCustomAttributes(r.Context(), realm.ID)
		if err != nil {
			return err
		}
		return s.deps.SetUserAttributes(r.Context(), tx, u, schema, values)
	})
	if err != nil {
		return err
	}
	return s.GetUserAttributes(w, r)
}

// TextValues reads each attribute's JSON value as text: a string as it
// is, a number as written, a boolean as true or false, null as no value,
// a list of those as several. Anything else is refused, every such
// attribute named at once. The admin user API reads its users'
// attributes with it too.
func TextValues(body map[string]json.RawMessage) (map[string][]string, error) {
	out := map[string][]string{}
	var problems []apperr.FieldError
	for name, raw := range body {
		var items []json.RawMessage
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
			if err := json.Unmarshal(t, &items); err != nil {
				problems = append(problems, apperr.FieldError{Field: "attributes." + name, Message: "is not a list of values"})
				continue
			}
		} else {
			items = []json.RawMessage{raw}
		}
		for _, item := range items {
			v, ok := scalarText(item)
			if !ok {
				problems = append(problems, apperr.FieldError{Field: "attributes." + name,
					Message: "takes strings, numbers or booleans, or a list of them"})
				break
			}
			if v != nil {
				out[name] = append(out[name], *v)
			}
		}
	}
	if len(problems) == 0 {
		return out, nil
	}
	slices.SortFunc(problems, func(a, b apperr.FieldError) int { return strings.Compare(a.Field, b.Field) })
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Field + ": " + p.Message
	}
	return nil, &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidField, Field: problems[0].Field,
		Message: strings.Join(msgs, "; "), Fields: problems}
}

// scalarText is a JSON string, number or boolean as text; nil for null.
func scalarText(raw json.RawMessage) (*string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	var s string
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool:
		s = fmt.Sprint(x)
	default:
		return nil, false
	}
	return &s, true
}
