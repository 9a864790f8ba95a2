package openapi

import (
	"regexp"
	"strings"
)

// Access is who may call a route, as the route table says.
type Access string

const (
	// Public routes ask nothing (a protocol endpoint may still
	// authenticate its client).
	Public Access = "public"
	// Admin routes ask an admin credential holding the route's permission.
	Admin Access = "admin"
	// User routes ask a realm user's access token.
	User Access = "user"
	// SCIM routes ask a SCIM token of the realm.
	SCIM Access = "scim"
	// Setup routes ask the setup wizard's bootstrap token.
	Setup Access = "setup"
)

// Errors is the shape a route's errors take.
type Errors string

const (
	// APIErrors is the admin and registration APIs' JSON error (apperr).
	APIErrors Errors = "api"
	// OAuthErrors is RFC 6749 §5.2's error of the OpenID Connect endpoints.
	OAuthErrors Errors = "oauth"
	// SCIMErrors is RFC 7644 §3.12's error.
	SCIMErrors Errors = "scim"
)

// Route is one entry of the route table, as the document sees it.
type Route struct {
	Method, Path string
	Access       Access
	// Permission is the admin permission the route asks (Admin only).
	Permission string
	Errors     Errors
	// Pages says the route answers a signed-in browser with HTML pages
	// and redirects besides its JSON (the account).
	Pages bool
}

// Op is what the document says of one route beyond the table: its
// summary, parameters and bodies. A route without an Op is documented by
// its status classes and error shape alone.
type Op struct {
	Summary     string
	Description string
	Query       []Param
	// Request is the JSON body: a value of the Go type the handler
	// decodes, or a Schema.
	Request any
	// RequestOptional says the body may be left out (a rotation without
	// one takes its defaults).
	RequestOptional bool
	// RequestTypes are Request's media types (application/json and
	// application/merge-patch+json when empty).
	RequestTypes []string
	// Form is an application/x-www-form-urlencoded body's Schema.
	Form Schema
	// Status is the success status (200 when zero).
	Status int
	// Response is the success body: a value of the Go type the handler
	// encodes, or a Schema; nil is no body.
	Response any
	// ResponseType is the answer's media type (application/json when
	// empty).
	ResponseType string
	// Example is an answer as the handler gives it.
	Example any
	// Also are answers of other statuses in a shape of the route's own
	// rather than the error's (a readiness check's 503), by status, in
	// the route's media type; nil is no body (a PATCH's 204).
	Also map[int]any
}

// Param is a query parameter.
type Param struct {
	Name, Description string
	Schema            Schema
	Required          bool
}

// Query parameters several routes share.
var (
	ParamFirst = Param{Name: "first", Description: "Items to skip.", Schema: Schema{"type": "integer", "minimum": 0}}
	ParamMax   = Param{Name: "max", Description: "Items to answer at most.", Schema: Schema{"type": "integer", "minimum": 1}}
)

// pathParam matches gorilla/mux's {name} and {name:pattern}.
var pathParam = regexp.MustCompile(`\{([^{}:]+)(?::([^{}]*))?\}`)

// templatePath turns a gorilla/mux template into an OpenAPI path (its
// variables' patterns dropped) and lists the variables with their
// patterns.
func templatePath(tpl string) (string, [][2]string) {
	var vars [][2]string
	for _, m := range pathParam.FindAllStringSubmatch(tpl, -1) {
		vars = append(vars, [2]string{m[1], m[2]})
	}
	return pathParam.ReplaceAllString(tpl, "{$1}"), vars
}

// tagOf groups a route by its area: the first fixed segment after the
// realm (users, clients) or after /admin, the OpenID Connect endpoints
// together, SCIM together.
func tagOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/scim/"):
		return "scim"
	case strings.Contains(path, "/protocol/openid-connect/"), strings.Contains(path, "/.well-known/"):
		return "openid-connect"
	case path == "/admin/realms/{realm}" || path == "/admin/realms":
		return "realms"
	}
	for _, p := range []string{"/admin/realms/{realm}/", "/realms/{realm}/", "/admin/realms/", "/admin/"} {
		if rest, ok := strings.CutPrefix(path, p); ok {
			seg, _, _ := strings.Cut(rest, "/")
			if seg != "" && !strings.HasPrefix(seg, "{") {
				return strings.TrimSuffix(strings.TrimSuffix(seg, ".json"), ".yaml")
			}
		}
	}
	if seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/"); seg != "" {
		return seg
	}
	return "server"
}

// operationID names an operation after its method and path: get_admin_realms_realm_users.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	sep := true
	for _, r := range path {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !ok {
			sep = true
			continue
		}
		if sep {
			b.WriteByte('_')
			sep = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
