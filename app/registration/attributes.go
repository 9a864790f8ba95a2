package registration

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// The realm's custom attributes at registration: those of the schema
// marked onRegistration are fields of the register page and keys of the
// registration API's attributes, checked by the identity core's rules
// (identity.CheckAttributeValues), as the admin API checks them.

// Attributes is the schema's attributes a registration takes: those
// marked onRegistration, save one whose name an administrator's
// registration field already uses as its key (the field keeps it).
func (s *Service) Attributes(ctx context.Context, realm *store.Realm, fields []*store.RegistrationField) ([]*store.CustomAttribute, error) {
	schema, err := s.deps.Store.ListCustomAttributes(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(schema, func(attr *store.CustomAttribute) bool {
		return !attr.OnRegistration || slices.ContainsFunc(fields, func(f *store.RegistrationField) bool { return f.Key == attr.Name })
	}), nil
}

// splitRegistrationValues parts a registration's attributes into the
// registration fields' and the custom attributes' values, an empty value
// being none (an unticked box sends nothing).
func splitRegistrationValues(schema []*store.CustomAttribute, attrs map[string]string) (fields map[string]string, custom map[string][]string) {
	fields, custom = map[string]string{}, map[string][]string{}
	for k, v := range attrs {
		if !slices.ContainsFunc(schema, func(a *store.CustomAttribute) bool { return a.Name == k }) {
			fields[k] = v
		} else if v = strings.TrimSpace(v); v != "" {
			custom[k] = []string{v}
		}
	}
	return fields, custom
}

// checkCustomAttributes checks a registration's custom attribute values,
// normalizing them in place, and lists every one at fault.
func checkCustomAttributes(schema []*store.CustomAttribute, values map[string][]string) Invalid {
	var ae *apperr.Error
	if err := identity.CheckAttributeValues(schema, values); !errors.As(err, &ae) {
		return nil
	}
	out := make(Invalid, 0, len(ae.Fields))
	for _, f := range ae.Fields {
		out = append(out, FieldProblem{Key: f.Key, Err: apperr.Field(f.Field, "%s", f.Message)})
	}
	return out
}
