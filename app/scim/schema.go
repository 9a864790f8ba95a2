package scim

import (
	"strings"
)

// The schemas the server implements, and the resource types built on them.
const (
	schemaUser       = "urn:ietf:params:scim:schemas:core:2.0:User"
	schemaEnterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	schemaGroup      = "urn:ietf:params:scim:schemas:core:2.0:Group"
	schemaSchema     = "urn:ietf:params:scim:schemas:core:2.0:Schema"
	schemaResType    = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
)

// Attribute types (RFC 7643 §2.3).
const (
	typeString    = "string"
	typeBoolean   = "boolean"
	typeComplex   = "complex"
	typeDateTime  = "dateTime"
	typeReference = "reference"
)

// Mutability and returned values (RFC 7643 §7).
const (
	readWrite = "readWrite"
	readOnly  = "readOnly"
	immutable = "immutable"
	writeOnly = "writeOnly"

	returnedDefault = "default"
	returnedAlways  = "always"
	returnedNever   = "never"
)

// attribute is an attribute definition (RFC 7643 §7): what the Schemas
// endpoint shows, and what filters, sorting, PATCH paths and the
// validation of bodies go by.
type attribute struct {
	Name            string      `json:"name"`
	Type            string      `json:"type"`
	SubAttributes   []attribute `json:"subAttributes,omitempty"`
	MultiValued     bool        `json:"multiValued"`
	Description     string      `json:"description"`
	Required        bool        `json:"required"`
	CanonicalValues []string    `json:"canonicalValues,omitempty"`
	CaseExact       bool        `json:"caseExact"`
	Mutability      string      `json:"mutability"`
	Returned        string      `json:"returned"`
	Uniqueness      string      `json:"uniqueness"`
	ReferenceTypes  []string    `json:"referenceTypes,omitempty"`
}

// str is a single-valued, case-insensitive, writable string.
func str(name, desc string) attribute {
	return attribute{Name: name, Type: typeString, Description: desc, Mutability: readWrite, Returned: returnedDefault,
		Uniqueness: "none"}
}

// ref is a single-valued reference to the resource types given.
func ref(name, desc string, types ...string) attribute {
	a := str(name, desc)
	a.Type, a.CaseExact, a.ReferenceTypes = typeReference, true, types
	return a
}

// complexOf is a complex attribute of the sub-attributes given.
func complexOf(name, desc string, multiValued bool, subs ...attribute) attribute {
	a := str(name, desc)
	a.Type, a.MultiValued, a.SubAttributes = typeComplex, multiValued, subs
	return a
}

// multi is a multi-valued complex attribute of value, display, type and
// primary, as emails and phoneNumbers are.
func multi(name, desc string, types ...string) attribute {
	primary := str("primary", "Indicates the primary value; at most one may be true.")
	primary.Type = typeBoolean
	return complexOf(name, desc, true, str("value", "The value."),
		str("display", "A human-readable name, primarily used for display purposes."),
		canonical(str("type", "A label indicating the attribute's function."), types...), primary)
}

func canonical(a attribute, values ...string) attribute { a.CanonicalValues = values; return a }
func exact(a attribute) attribute                       { a.CaseExact = true; return a }
func required(a attribute) attribute                    { a.Required = true; return a }
func mutability(a attribute, m string) attribute        { a.Mutability = m; return a }

// schemaDef is a schema as the Schemas endpoint shows it.
type schemaDef struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Attributes  []attribute `json:"attributes"`
}

var userSchema = schemaDef{ID: schemaUser, Name: "User", Description: "User Account", Attributes: []attribute{
	func() attribute {
		a := required(str("userName", "Unique identifier for the User, used to sign in. Stored in lowercase."))
		a.Uniqueness = "server"
		return a
	}(),
	complexOf("name", "The components of the user's real name.", false,
		str("formatted", "The full name."), str("familyName", "The family name."), str("givenName", "The given name."),
		str("middleName", "The middle name."), str("honorificPrefix", "The honorific prefix."),
		str("honorificSuffix", "The honorific suffix.")),
	str("displayName", "The name of the User, suitable for display to end-users."),
	str("nickName", "The casual way to address the user."),
	ref("profileUrl", "A URI of the user's online profile.", "external"),
	str("title", "The user's title, such as \"Vice President\"."),
	str("userType", "The relationship between the organization and the user."),
	str("preferredLanguage", "The user's preferred written or spoken language (RFC 7231 Accept-Language)."),
	str("locale", "The user's default location, for localization."),
	str("timezone", "The User's time zone in the IANA Time Zone database format."),
	func() attribute {
		a := str("active", "The user's administrative status; false disables the user and ends their sessions.")
		a.Type = typeBoolean
		return a
	}(),
	func() attribute {
		a := mutability(exact(str("password", "The user's password, checked against the realm's password policy; never returned.")), writeOnly)
		a.Returned = returnedNever
		return a
	}(),
	multi("emails", "Email addresses for the user. The primary one is the user's email in the realm.", "work", "home", "other"),
	multi("phoneNumbers", "Phone numbers for the user.", "work", "home", "mobile", "fax", "pager", "other"),
	complexOf("addresses", "Physical mailing addresses for the user.", true,
		str("formatted", "The full mailing address, formatted for display."), str("streetAddress", "The street address."),
		str("locality", "The city or locality."), str("region", "The state or region."),
		str("postalCode", "The zip code or postal code."), str("country", "The country name (ISO 3166-1 alpha-2)."),
		canonical(str("type", "A label indicating the attribute's function."), "work", "home", "other"),
		func() attribute {
			a := str("primary", "Indicates the primary address; at most one may be true.")
			a.Type = typeBoolean
			return a
		}()),
	mutability(complexOf("groups", "The groups the user belongs to, directly.", true,
		mutability(exact(str("value", "The identifier of the group.")), readOnly),
		mutability(ref("$ref", "The URI of the group.", "Group"), readOnly),
		mutability(str("display", "The group's name."), readOnly),
		mutability(canonical(str("type", "How the membership came about."), "direct"), readOnly)), readOnly),
}}

var enterpriseSchema = schemaDef{ID: schemaEnterprise, Name: "EnterpriseUser", Description: "Enterprise User", Attributes: []attribute{
	str("employeeNumber", "A string identifier, typically numeric or alphanumeric, assigned to a person by the organization."),
	str("costCenter", "Identifies the name of a cost center."),
	str("organization", "Identifies the name of an organization."),
	str("division", "Identifies the name of a division."),
	str("department", "Identifies the name of a department."),
	complexOf("manager", "The user's manager.", false,
		exact(str("value", "The id of the SCIM resource representing the user's manager.")),
		mutability(ref("$ref", "The URI of the manager.", "User"), readOnly),
		mutability(str("displayName", "The displayName of the user's manager."), readOnly)),
}}

var groupSchema = schemaDef{ID: schemaGroup, Name: "Group", Description: "Group", Attributes: []attribute{
	required(str("displayName", "A human-readable name for the Group; unique among the realm's top-level groups.")),
	complexOf("members", "The users of the group.", true,
		mutability(exact(str("value", "The id of the member.")), immutable),
		mutability(ref("$ref", "The URI of the member.", "User"), immutable),
		mutability(str("display", "The member's userName."), readOnly),
		mutability(canonical(str("type", "The kind of member."), "User"), immutable)),
}}

// commonAttributes are every resource's (RFC 7643 §3.1): not part of any
// schema, but filters and sorting know them.
var commonAttributes = []attribute{
	func() attribute {
		a := mutability(exact(str("id", "The resource's identifier.")), readOnly)
		a.Returned = returnedAlways
		return a
	}(),
	exact(str("externalId", "The provisioning client's identifier of the resource.")),
	mutability(complexOf("meta", "The resource's metadata.", false,
		mutability(str("resourceType", "The resource's type."), readOnly),
		mutability(dateTime("created", "When the resource was created."), readOnly),
		mutability(dateTime("lastModified", "When the resource was last changed."), readOnly),
		mutability(ref("location", "The resource's URI."), readOnly),
		mutability(exact(str("version", "The resource's version, as its ETag.")), readOnly)), readOnly),
}

func dateTime(name, desc string) attribute {
	a := str(name, desc)
	a.Type = typeDateTime
	return a
}

// schemas is every schema, by ID, in the order the Schemas endpoint lists them.
var schemas = []*schemaDef{&userSchema, &enterpriseSchema, &groupSchema}

// find is the attribute of list named name, case-insensitively (RFC 7643
// §2.1: attribute names are case-insensitive).
func find(list []attribute, name string) *attribute {
	for i := range list {
		if strings.EqualFold(list[i].Name, name) {
			return &list[i]
		}
	}
	return nil
}
