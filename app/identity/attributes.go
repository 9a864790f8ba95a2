package identity

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The rules of a realm's custom attributes: what a schema attribute may
// say, and what values a user may hold. Every path that writes a user's
// attributes (the admin API now; registration, the account and SCIM as
// they take them) checks them here.

// The types of a custom attribute.
const (
	AttrString  = "string"
	AttrNumber  = "number"
	AttrBoolean = "boolean"
	AttrDate    = "date" // YYYY-MM-DD
	AttrEnum    = "enum"
)

// Who may change an attribute's value.
const (
	EditableByAdmin = "admin"
	EditableByUser  = "user"
)

var (
	attrTypes          = []string{AttrString, AttrNumber, AttrBoolean, AttrDate, AttrEnum}
	attrNamePattern    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
	maxAttrNameLength  = 64
	maxAttrValues      = 100
	maxAttrValueLength = 2048
	maxAttrOptions     = 200
	maxAttrPattern     = 1024
)

// CheckAttribute checks and normalizes an attribute of a realm's schema;
// its errors name the representation's fields.
func CheckAttribute(a *store.CustomAttribute) error {
	if len(a.Name) > maxAttrNameLength || !attrNamePattern.MatchString(a.Name) {
		return apperr.Field("name", "must be 1 to %d letters, digits, '_', '.' and '-', starting with a letter", maxAttrNameLength)
	}
	if err := validate.DisplayName("displayName", a.DisplayName, 255); err != nil {
		return err
	}
	if !slices.Contains(attrTypes, a.Type) {
		return apperr.Field("type", "must be one of %s", strings.Join(attrTypes, ", "))
	}
	if a.EditableBy == "" {
		a.EditableBy = EditableByAdmin
	}
	if a.EditableBy != EditableByAdmin && a.EditableBy != EditableByUser {
		return apperr.Field("editableBy", "must be admin or user")
	}
	switch {
	case a.Type == AttrEnum && len(a.Options) == 0:
		return apperr.Field("options", "an enum needs its options")
	case a.Type != AttrEnum && len(a.Options) > 0:
		return apperr.Field("options", "only an enum has options")
	case len(a.Options) > maxAttrOptions:
		return apperr.Field("options", "at most %d options", maxAttrOptions)
	}
	for i, o := range a.Options {
		if o == "" || slices.Contains(a.Options[:i], o) {
			return apperr.Field(fmt.Sprintf("options[%d]", i), "must be a non-empty value listed once")
		}
		if err := validate.Text(fmt.Sprintf("options[%d]", i), o, maxAttrValueLength); err != nil {
			return err
		}
	}
	v := a.Validation
	textual := a.Type == AttrString
	switch {
	case v.Pattern != "" && !textual:
		return apperr.Field("validation.pattern", "applies to string attributes only")
	case (v.MinLength != nil || v.MaxLength != nil) && !textual:
		return apperr.Field("validation.minLength", "lengths apply to string attributes only")
	case (v.Min != nil || v.Max != nil) && a.Type != AttrNumber:
		return apperr.Field("validation.min", "bounds apply to number attributes only")
	case v.MinLength != nil && (*v.MinLength < 0 || *v.MinLength > maxAttrValueLength):
		return apperr.Field("validation.minLength", "must be between 0 and %d", maxAttrValueLength)
	case v.MaxLength != nil && (*v.MaxLength < 1 || *v.MaxLength > maxAttrValueLength):
		return apperr.Field("validation.maxLength", "must be between 1 and %d", maxAttrValueLength)
	case v.MinLength != nil && v.MaxLength != nil && *v.MinLength > *v.MaxLength:
		return apperr.Field("validation.minLength", "must not be above maxLength")
	case v.Min != nil && v.Max != nil && *v.Min > *v.Max:
		return apperr.Field("validation.min", "must not be above max")
	case len(v.Pattern) > maxAttrPattern:
		return apperr.Field("validation.pattern", "at most %d characters", maxAttrPattern)
	}
	if v.Pattern != "" {
		if _, err := regexp.Compile(v.Pattern); err != nil {
			return apperr.Field("validation.pattern", "is not a regular expression: %v", err)
		}
	}
	return nil
}

// CheckAttributeValues checks a user's values against the realm's schema,
// every attribute at once: the error lists each value at fault
// (apperr.Error.Fields, named "attributes.<name>"). Values come as text:
// a number in decimal, a boolean as true or false, a date as YYYY-MM-DD.
// A number and a boolean are normalized ("1.50" is 1.5). A name the schema
// does not have is refused.
func CheckAttributeValues(schema []*store.CustomAttribute, values map[string][]string) error {
	var problems []apperr.FieldError
	bad := func(name, key, format string, args ...any) {
		problems = append(problems, apperr.FieldError{Field: "attributes." + name, Message: fmt.Sprintf(format, args...),
			Key: "attribute.error." + key})
	}
	for _, name := range sortedKeys(values) {
		if !slices.ContainsFunc(schema, func(a *store.CustomAttribute) bool { return a.Name == name }) {
			bad(name, "unknown", "is not an attribute of the realm's schema")
		}
	}
	for _, a := range schema {
		vals := values[a.Name]
		switch {
		case len(vals) == 0 && a.Required:
			bad(a.Name, "required", "is required")
		case len(vals) > 1 && !a.Multivalued:
			bad(a.Name, "single", "takes one value")
		case len(vals) > maxAttrValues:
			bad(a.Name, "tooMany", "at most %d values", maxAttrValues)
		}
		for i, v := range vals {
			norm, key, msg := checkAttributeValue(a, v)
			if msg != "" {
				bad(a.Name, key, "%s", msg)
				continue
			}
			vals[i] = norm
		}
	}
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Field + ": " + p.Message
	}
	return &apperr.Error{Status: 400, Code: apperr.CodeInvalidField, Field: problems[0].Field,
		Message: strings.Join(msgs, "; "), Fields: problems}
}

// checkAttributeValue is v normalized, or why it is refused: a message
// key's last part and the message.
func checkAttributeValue(a *store.CustomAttribute, v string) (norm, key, msg string) {
	if err := validate.Text("value", v, maxAttrValueLength); err != nil {
		return "", "text", "must be text of at most 2048 characters, without control characters"
	}
	rules := a.Validation
	switch a.Type {
	case AttrNumber:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", "number", fmt.Sprintf("%q is not a number", v)
		}
		if rules.Min != nil && f < *rules.Min || rules.Max != nil && f > *rules.Max {
			return "", "bounds", fmt.Sprintf("%v is outside %s", f, bounds(rules.Min, rules.Max))
		}
		return strconv.FormatFloat(f, 'f', -1, 64), "", ""
	case AttrBoolean:
		b, err := strconv.ParseBool(v)
		if err != nil || v != "true" && v != "false" {
			return "", "boolean", fmt.Sprintf("%q is not true or false", v)
		}
		return strconv.FormatBool(b), "", ""
	case AttrDate:
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return "", "date", fmt.Sprintf("%q is not a date (YYYY-MM-DD)", v)
		}
	case AttrEnum:
		if !slices.Contains(a.Options, v) {
			return "", "option", fmt.Sprintf("%q is not one of %s", v, strings.Join(a.Options, ", "))
		}
	case AttrString:
		n := len([]rune(v))
		if rules.MinLength != nil && n < *rules.MinLength || rules.MaxLength != nil && n > *rules.MaxLength {
			return "", "length", fmt.Sprintf("must be %s characters long", lengthBounds(rules.MinLength, rules.MaxLength))
		}
		if rules.Pattern != "" {
			// CheckAttribute compiled the pattern; anchored, it still does.
			re, err := regexp.Compile(`^(?:` + rules.Pattern + `)$`)
			if err != nil || !re.MatchString(v) {
				return "", "pattern", fmt.Sprintf("%q does not match %s", v, rules.Pattern)
			}
		}
	}
	return v, "", ""
}

func bounds(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%v to %v", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf("%v and above", *lo)
	}
	return fmt.Sprintf("%v and below", *hi)
}

func lengthBounds(lo, hi *int) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%d to %d", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf("at least %d", *lo)
	}
	return fmt.Sprintf("at most %d", *hi)
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SetUserAttributes checks a user's custom attribute values against the
// realm's schema (CheckAttributeValues) and stores them through tx, in
// place of the values they had: an attribute of the schema left out loses
// its values. Values of attributes no longer in the schema are kept,
// unseen.
func (c *Core) SetUserAttributes(ctx context.Context, tx *store.Store, u *store.User, schema []*store.CustomAttribute, values map[string][]string) error {
	if err := CheckAttributeValues(schema, values); err != nil {
		return err
	}
	for _, a := range schema {
		if err := tx.SetUserCustomAttribute(ctx, u.ID, a.Name, values[a.Name]); err != nil {
			return err
		}
	}
	return nil
}
