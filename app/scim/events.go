package scim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// The admin event of a provisioning write names SCIM as its source: its
// auth type, with the token as the caller.
const authTypeSCIM = "scim"

// maxEventBody bounds the representation an admin event keeps.
const maxEventBody = 1 << 20

// teeWriter passes an answer on and keeps its status and body for the
// admin event.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (t *teeWriter) WriteHeader(code int) {
	if t.status == 0 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	if t.body.Len()+len(p) <= maxEventBody {
		t.body.Write(p)
	}
	return t.ResponseWriter.Write(p)
}

// recordWrite writes the admin event of a successful provisioning write
// (POST, PUT, PATCH, DELETE of a user or group) when the realm keeps admin
// events: CREATE, UPDATE or DELETE of USER or GROUP at users/{id} or
// groups/{id}, by the token, with what the answer showed.
func (s *Service) recordWrite(r *http.Request, c *caller, method, path string, status int, body []byte) {
	if method == http.MethodGet || status < 200 || status > 299 || !c.realm.AdminEventsEnabled {
		return
	}
	kind, id, _ := strings.Cut(strings.Trim(path, "/"), "/")
	var resourceType string
	switch kind {
	case "Users":
		resourceType = "USER"
	case "Groups":
		resourceType = "GROUP"
	default:
		return // Bulk: each of its operations is recorded on its own
	}
	var shown struct {
		ID string `json:"id"`
	}
	op := "UPDATE"
	switch method {
	case http.MethodPost:
		op = "CREATE"
		_ = json.Unmarshal(body, &shown)
		id = shown.ID
	case http.MethodDelete:
		op, body = "DELETE", nil
	}
	e := &store.AdminEvent{ID: uuid.Must(uuid.NewV7()).String(), RealmID: c.realm.ID, Time: s.deps.Now().UnixMilli(),
		OperationType: op, ResourceType: resourceType, ResourcePath: strings.ToLower(kind) + "/" + id,
		AuthType: authTypeSCIM, AuthUserID: c.token.ID, AuthUsername: c.token.Name, Representation: string(body)}
	if s.deps.ClientIP != nil {
		e.IPAddress = s.deps.ClientIP(r)
	}
	// The change is made: record it even if the client has gone.
	if err := s.deps.Store.AddAdminEvent(context.WithoutCancel(r.Context()), e); err != nil {
		s.deps.Log.Error("admin event of a SCIM write not recorded", "realm", c.realm.Name, "path", e.ResourcePath, "err", err)
	}
}

// resourcePath is the request's path under the realm's SCIM base.
func resourcePath(r *http.Request, realm string) string {
	return strings.TrimPrefix(r.URL.Path, "/scim/v2/"+realm)
}
