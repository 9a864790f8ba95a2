package app

import (
	"context"
	"encoding/json"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/attributes"
	"github.com/idenplane/idenplane/store"
)

// The realm's custom attributes in the admin user API: a user's
// representation (GET, and the answers of POST, PUT and PATCH) carries the
// values of the schema's attributes under attributes, lists of strings as
// GET .../users/{id}/attributes answers them; POST, PUT and PATCH may send
// attributes, each a value or a list of values, checked against the
// schema all at once and stored in place of the values the user held, as
// PUT .../users/{id}/attributes does. A body without attributes leaves
// them. Lists of users and the realm export leave them out.

// withAttributes is u's representation with its values of the schema's
// attributes.
func (a *App) withAttributes(ctx context.Context, realmID string, u *store.User) (userRep, error) {
	rep := toUserRep(u)
	schema, err := a.store.ListCustomAttributes(ctx, realmID)
	if err != nil || len(schema) == 0 {
		return rep, err
	}
	held, err := a.store.UserCustomAttributes(ctx, u.ID)
	if err != nil {
		return rep, err
	}
	rep.Attributes = map[string][]string{}
	for _, attr := range schema {
		if v := held[attr.Name]; len(v) > 0 {
			rep.Attributes[attr.Name] = v
		}
	}
	return rep, nil
}

var attributesNotObject = apperr.Field("attributes", "must be an object of attribute names to values")

// userAttributeValues reads a body's attributes; nil when it has none.
func userAttributeValues(raw json.RawMessage) (map[string][]string, error) {
	if raw == nil {
		return nil, nil
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, attributesNotObject
	}
	values, err := attributes.TextValues(body)
	if err != nil {
		return nil, err
	}
	return values, nil
}

// setUserAttributes stores values through tx after checking them against
// the realm's schema; nil values change nothing.
func (a *App) setUserAttributes(ctx context.Context, tx *store.Store, realmID string, u *store.User, values map[string][]string) error {
	if values == nil {
		return nil
	}
	schema, err := tx.ListCustomAttributes(ctx, realmID)
	if err != nil {
		return err
	}
	return a.id.SetUserAttributes(ctx, tx, u, schema, values)
}

// splitAttributes takes attributes out of a JSON object body, returning
// the rest and the attributes (nil when absent). A body that is not an
// object is returned whole, for the update to refuse.
func splitAttributes(body []byte) ([]byte, json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return body, nil, nil
	}
	raw, ok := fields["attributes"]
	if !ok {
		return body, nil, nil
	}
	delete(fields, "attributes")
	if string(raw) == "null" {
		raw = nil
	}
	rest, err := json.Marshal(fields)
	return rest, raw, err
}
