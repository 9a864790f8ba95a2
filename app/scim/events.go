package scim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/bus"
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
// groups/{id}, by the token, with what the answer showed. It publishes
// the write on the bus in the same transaction, whether or not the realm
// keeps it.
func (s *Service) recordWrite(r *http.Request, c *caller, method, path string, status int, body []byte) {
	if method == http.MethodGet || status < 200 || status > 299 {
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
	published := s.published(r.Context(), c.realm, e, kind == "Users")
	if !c.realm.AdminEventsEnabled && len(published) == 0 {
		return
	}
	// The change is made: record it even if the client has gone.
	ctx := context.WithoutCancel(r.Context())
	var pending bus.Pending
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if c.realm.AdminEventsEnabled {
			if err := tx.AddAdminEvent(ctx, e); err != nil {
				return err
			}
		}
		for _, ev := range published {
			p, err := s.deps.Bus.Queue(ctx, tx, c.realm, ev.t, ev.data)
			if err != nil {
				return err
			}
			pending = append(pending, p...)
		}
		return nil
	})
	if err != nil {
		s.deps.Log.Error("admin event of a SCIM write not recorded", "realm", c.realm.Name, "path", e.ResourcePath, "err", err)
		return
	}
	pending.Wake()
}

// busEvent is one event for the bus.
type busEvent struct {
	t    bus.Type
	data any
}

// published are the bus's events of the write e records that a subscriber
// takes: scim.provisioned, admin.change and, for a user, its user event.
func (s *Service) published(ctx context.Context, realm *store.Realm, e *store.AdminEvent, user bool) []busEvent {
	id := e.ResourcePath[strings.Index(e.ResourcePath, "/")+1:]
	var out []busEvent
	add := func(t bus.Type, data func() any) {
		if s.deps.Bus.Wants(ctx, realm, t) {
			out = append(out, busEvent{t, data()})
		}
	}
	add(bus.SCIMProvisioned, func() any {
		return map[string]any{"operation": e.OperationType, "resourceType": e.ResourceType, "id": id,
			"tokenId": e.AuthUserID, "tokenName": e.AuthUsername}
	})
	add(bus.AdminChange, func() any {
		return &bus.Change{Operation: e.OperationType, ResourceType: e.ResourceType, ResourcePath: e.ResourcePath,
			AuthType: e.AuthType, AuthUserID: e.AuthUserID, AuthUsername: e.AuthUsername, IPAddress: e.IPAddress,
			Representation: rawJSON(e.Representation)}
	})
	if t := userEventType(e.OperationType); user && t != "" {
		add(t, func() any { return map[string]any{"userId": id, "source": "scim"} })
	}
	return out
}

// userEventType is the user event of a SCIM write of a user.
func userEventType(op string) bus.Type {
	switch op {
	case "CREATE":
		return bus.UserCreated
	case "DELETE":
		return bus.UserDeleted
	case "UPDATE":
		return bus.UserUpdated
	}
	return ""
}

// rawJSON is s as JSON, or nothing when it is not.
func rawJSON(s string) json.RawMessage {
	if !json.Valid([]byte(s)) {
		return nil
	}
	return json.RawMessage(s)
}

// resourcePath is the request's path under the realm's SCIM base.
func resourcePath(r *http.Request, realm string) string {
	return strings.TrimPrefix(r.URL.Path, "/scim/v2/"+realm)
}
