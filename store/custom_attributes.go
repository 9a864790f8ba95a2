package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// CustomAttribute is one attribute of a realm's user profile schema.
type CustomAttribute struct {
	ID             string
	RealmID        string
	Name           string
	DisplayName    string
	Type           string // string, number, boolean, date, enum
	Required       bool
	Multivalued    bool
	Options        []string // the values of an enum
	Validation     AttributeValidation
	EditableBy     string // admin or user
	OnRegistration bool
	InTokens       bool
	CreatedAt      int64 // Unix milliseconds
}

// AttributeValidation is an attribute's rules beyond its type; a nil bound
// is none.
type AttributeValidation struct {
	Pattern   string   `json:"pattern,omitempty"` // a regular expression each value matches whole
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
	Min       *float64 `json:"min,omitempty"` // of a number
	Max       *float64 `json:"max,omitempty"`
}

const customAttributeColumns = `id, realm_id, name, display_name, type, required, multivalued, options, validation,
	editable_by, on_registration, in_tokens, created_at`

func scanCustomAttribute(row scanner) (*CustomAttribute, error) {
	var a CustomAttribute
	var options, validation string
	if err := row.Scan(&a.ID, &a.RealmID, &a.Name, &a.DisplayName, &a.Type, &a.Required, &a.Multivalued, &options,
		&validation, &a.EditableBy, &a.OnRegistration, &a.InTokens, &a.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(options), &a.Options); err != nil {
		return nil, fmt.Errorf("custom attribute %s options: %w", a.ID, err)
	}
	if err := json.Unmarshal([]byte(validation), &a.Validation); err != nil {
		return nil, fmt.Errorf("custom attribute %s validation: %w", a.ID, err)
	}
	return &a, nil
}

func customAttributeValues(a *CustomAttribute) ([]any, error) {
	opts := a.Options
	if opts == nil {
		opts = []string{}
	}
	options, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	validation, err := json.Marshal(a.Validation)
	if err != nil {
		return nil, err
	}
	return []any{a.ID, a.RealmID, a.Name, a.DisplayName, a.Type, a.Required, a.Multivalued, string(options),
		string(validation), a.EditableBy, a.OnRegistration, a.InTokens, a.CreatedAt}, nil
}

// CreateCustomAttribute inserts a; a name taken in the realm is a
// *ConflictError on "name".
func (s *Store) CreateCustomAttribute(ctx context.Context, a *CustomAttribute) error {
	vals, err := customAttributeValues(a)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, "INSERT INTO custom_attributes ("+customAttributeColumns+") VALUES ("+placeholders(len(vals))+")", vals...)
	if err != nil {
		return fmt.Errorf("create custom attribute %s: %w", a.Name, mapErr(err))
	}
	return nil
}

// GetCustomAttribute finds an attribute of a realm's schema by ID.
func (s *Store) GetCustomAttribute(ctx context.Context, realmID, id string) (*CustomAttribute, error) {
	a, err := scanCustomAttribute(s.r.QueryRowContext(ctx,
		"SELECT "+customAttributeColumns+" FROM custom_attributes WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("custom attribute %s: %w", id, err)
	}
	return a, nil
}

// ListCustomAttributes returns a realm's schema by name.
func (s *Store) ListCustomAttributes(ctx context.Context, realmID string) ([]*CustomAttribute, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+customAttributeColumns+" FROM custom_attributes WHERE realm_id = $1 ORDER BY name", realmID)
	if err != nil {
		return nil, fmt.Errorf("list custom attributes: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*CustomAttribute
	for rows.Next() {
		a, err := scanCustomAttribute(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, mapErr(rows.Err())
}

// UpdateCustomAttribute writes every field of a but its realm, ID and
// creation time.
func (s *Store) UpdateCustomAttribute(ctx context.Context, a *CustomAttribute) error {
	vals, err := customAttributeValues(a)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE custom_attributes SET name = $3, display_name = $4, type = $5, required = $6,
		multivalued = $7, options = $8, validation = $9, editable_by = $10, on_registration = $11, in_tokens = $12
		WHERE id = $1 AND realm_id = $2 AND created_at = $13`, vals...)
	if err != nil {
		return fmt.Errorf("update custom attribute %s: %w", a.Name, mapErr(err))
	}
	return affectedOne(res, "custom attribute "+a.ID)
}

// DeleteCustomAttribute removes an attribute from a realm's schema. The
// values users hold stay stored, unseen, until the user goes.
func (s *Store) DeleteCustomAttribute(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM custom_attributes WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete custom attribute %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "custom attribute "+id)
}

// UserCustomAttributes returns every custom attribute value a user holds,
// in the schema or not.
func (s *Store) UserCustomAttributes(ctx context.Context, userID string) (map[string][]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT name, vals FROM user_custom_attributes WHERE user_id = $1", userID)
	if err != nil {
		return nil, fmt.Errorf("user custom attributes: %w", mapErr(err))
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var name, vals string
		if err := rows.Scan(&name, &vals); err != nil {
			return nil, mapErr(err)
		}
		var list []string
		if err := json.Unmarshal([]byte(vals), &list); err != nil {
			return nil, fmt.Errorf("user custom attribute %s: %w", name, err)
		}
		out[name] = list
	}
	return out, mapErr(rows.Err())
}

// SetUserCustomAttribute stores a user's values of one attribute; none
// removes it.
func (s *Store) SetUserCustomAttribute(ctx context.Context, userID, name string, values []string) error {
	if len(values) == 0 {
		_, err := s.w.ExecContext(ctx, "DELETE FROM user_custom_attributes WHERE user_id = $1 AND name = $2", userID, name)
		return mapErr(err)
	}
	b, err := json.Marshal(values)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO user_custom_attributes (user_id, name, vals) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, name) DO UPDATE SET vals = excluded.vals`, userID, name, string(b))
	if err != nil {
		return fmt.Errorf("set user custom attribute %s: %w", name, mapErr(err))
	}
	return nil
}

// UsersCustomAttributes returns every custom attribute value each of the
// given users holds, in the schema or not, by user ID.
func (s *Store) UsersCustomAttributes(ctx context.Context, userIDs []string) (map[string]map[string][]string, error) {
	out := make(map[string]map[string][]string, len(userIDs))
	for chunk := range chunks(userIDs, 500) {
		rows, err := s.r.QueryContext(ctx, "SELECT user_id, name, vals FROM user_custom_attributes WHERE user_id IN ("+
			placeholders(len(chunk))+")", anys(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("users' custom attributes: %w", mapErr(err))
		}
		for rows.Next() {
			var id, name, vals string
			var list []string
			err := rows.Scan(&id, &name, &vals)
			if err == nil {
				err = json.Unmarshal([]byte(vals), &list)
			}
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("user custom attribute %s: %w", name, mapErr(err))
			}
			if out[id] == nil {
				out[id] = map[string][]string{}
			}
			out[id][name] = list
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, mapErr(err)
		}
	}
	return out, nil
}
