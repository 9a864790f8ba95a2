package bus

import (
	"encoding/json"
	"strings"
)

// The admin events' operations, as store.AdminEvent writes them.
const (
	opCreate = "CREATE"
	opUpdate = "UPDATE"
	opDelete = "DELETE"
)

// Change is the data of admin.change: a write through the admin API
// or SCIM, as its admin event records it, whether or not the realm keeps
// admin events.
type Change struct {
	Operation    string `json:"operation"` // CREATE, UPDATE, DELETE or ACTION
	ResourceType string `json:"resourceType"`
	ResourcePath string `json:"resourcePath"`
	AuthType     string `json:"authType,omitempty"`
	AuthUserID   string `json:"authUserId,omitempty"`
	AuthUsername string `json:"authUsername,omitempty"`
	IPAddress    string `json:"ipAddress,omitempty"`
	// Representation is what the write sent or answered, secrets redacted.
	Representation json.RawMessage `json:"representation,omitempty"`

	// Route is the route's template under /admin/realms/{realm}/ and Vars
	// its variables; Answer is the answer's JSON object, secrets redacted.
	// They say which lifecycle event the change is (OfAdmin).
	Route  string            `json:"-"`
	Vars   map[string]string `json:"-"`
	Answer map[string]any    `json:"-"`
}

// OfAdmin is the lifecycle event an admin change is, beside its
// admin.change, with its data; "" for a change that is none, or whose
// area publishes its event itself (organization memberships, which also
// change outside the admin API).
func OfAdmin(c *Change) (Type, any) {
	v, answer := c.Vars, c.Answer
	switch c.Route {
	case "users":
		if c.Operation == opCreate {
			return UserCreated, userData(str(answer, "id"), answer)
		}
	case "users/{userId}":
		switch c.Operation {
		case opUpdate:
			return UserUpdated, userData(v["userId"], answer)
		case opDelete:
			return UserDeleted, userData(v["userId"], nil)
		}
	case "users/{userId}/reset-password":
		return CredentialRotated, map[string]any{"userId": v["userId"], "credential": "password", "source": "admin"}
	case "clients/{clientId}/regenerate-secret":
		return CredentialRotated, map[string]any{"clientId": v["clientId"], "credential": "client-secret", "source": "admin"}
	case "nhi/{id}/credentials", "nhi/{id}/credentials/{credentialId}/rotate", "nhi/{id}/certificate":
		return NHICredentialIssued, credentialData("nhi", v["id"], answer)
	case "service-accounts/{id}/api-keys", "service-accounts/{id}/api-keys/{keyId}/rotate":
		return NHICredentialIssued, credentialData("service-account", v["id"], answer)
	}
	return "", nil
}

// userData is a user event's data: the user as the answer showed it, when
// it did.
func userData(id string, user map[string]any) map[string]any {
	d := map[string]any{"userId": id, "source": "admin"}
	if user != nil {
		d["user"] = user
	}
	return d
}

// credentialData is nhi.credential.issued's: which identity, and the
// credential as answered, never its secret.
func credentialData(kind, id string, answer map[string]any) map[string]any {
	d := map[string]any{"identityKind": kind, "identityId": id}
	for _, k := range []string{"id", "type", "name", "prefix", "keyId", "replaces", "expiresTimestamp"} {
		if v, ok := answer[k]; ok && v != nil && v != "" {
			d[k] = v
		}
	}
	if id := str(answer, "id"); id != "" {
		d["credentialId"] = id
		delete(d, "id")
	}
	return d
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// Route is template under the realm's admin path, as Change.Route.
func Route(template string) string {
	return strings.TrimPrefix(strings.TrimPrefix(template, "/admin/realms/{realm}"), "/")
}
