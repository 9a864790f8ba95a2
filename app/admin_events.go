package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/events"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Admin events are recorded here, by the middleware of the admin routes:
// what a write did and to which resource follows from its route template,
// and who did it from the admin credential. Package events lists and
// exports them.

// actionSegments end the paths of writes that do something rather than
// create or change a resource: they are recorded as ACTION whatever their
// method.
var actionSegments = []string{
	"regenerate-secret", "reset-password", "send-verification-email", "execute-actions-email",
	"logout", "unlock", "revoke", "rotate", "enable", "disable", "suspend", "reactivate", "decommission",
	"publish", "restore", "test", "approve", "reject", "accept", "toggle", "initiate", "verify-domain",
	"test-connection", "sync", "seed-defaults", "impersonate", "end",
}

// adminOperation names what a write of method on the route template does.
// An action's segment may be followed by what it acts on: a theme's
// restore/{version}.
func adminOperation(method, template string) string {
	rest, last := template[:strings.LastIndex(template, "/")], template[strings.LastIndex(template, "/")+1:]
	beforeVar := ""
	if strings.HasPrefix(last, "{") {
		beforeVar = rest[strings.LastIndex(rest, "/")+1:]
	}
	switch {
	case method == http.MethodDelete:
		return events.OperationDelete
	case slices.Contains(actionSegments, last), method == http.MethodPost && slices.Contains(actionSegments, beforeVar):
		return events.OperationAction
	case method == http.MethodPost:
		return events.OperationCreate
	}
	return events.OperationUpdate
}

// adminResourceRules map route templates, relative to /admin/realms/{realm}/,
// to resource types. The first match wins; "*" matches one path segment
// and a final "**" any number, none included.
var adminResourceRules = []struct{ pattern, resourceType string }{
	{"users/*/role-mappings/clients/**", "CLIENT_ROLE_MAPPING"},
	{"users/*/role-mappings/**", "REALM_ROLE_MAPPING"},
	{"users/*/groups/*", "GROUP_MEMBERSHIP"},
	{"users/**", "USER"},
	{"clients/*/roles/**", "CLIENT_ROLE"},
	{"clients/*/default-client-scopes/**", "CLIENT_SCOPE_CLIENT_MAPPING"},
	{"clients/*/optional-client-scopes/**", "CLIENT_SCOPE_CLIENT_MAPPING"},
	{"clients/**", "CLIENT"},
	{"roles/**", "REALM_ROLE"},
	{"groups/*/role-mappings/clients/**", "CLIENT_ROLE_MAPPING"},
	{"groups/*/role-mappings/**", "REALM_ROLE_MAPPING"},
	{"groups/**", "GROUP"},
	{"client-scopes/*/protocol-mappers/**", "PROTOCOL_MAPPER"},
	{"client-scopes/**", "CLIENT_SCOPE"},
	{"events/**", "REALM"},
	{"scim/tokens/**", "SCIM_TOKEN"},
	{"scim/attribute-mappings/**", "SCIM_ATTRIBUTE_MAPPING"},
	{"policies/**", "AUTHORIZATION_POLICY"},
	{"policy-settings", "AUTHORIZATION_POLICY"},
}

// adminResourceType names the resource a write on the route template acts on.
func adminResourceType(template string) string {
	switch {
	case strings.HasPrefix(template, "/admin/accounts"):
		return "ADMIN_ACCOUNT"
	case strings.HasPrefix(template, "/admin/api-keys"):
		return "ADMIN_API_KEY"
	}
	rel, ok := strings.CutPrefix(template, "/admin/realms/{realm}/")
	if !ok {
		return "REALM" // the realm itself, its creation and import
	}
	segs := strings.Split(rel, "/")
	for _, rule := range adminResourceRules {
		if matchSegments(strings.Split(rule.pattern, "/"), segs) {
			return rule.resourceType
		}
	}
	// A route without a rule yet is named for its collection, in Keycloak's
	// style: organizations → ORGANIZATION, risk-policies → RISK_POLICY.
	name := segs[0]
	if stem, ok := strings.CutSuffix(name, "ies"); ok {
		name = stem + "y"
	} else {
		name = strings.TrimSuffix(name, "s")
	}
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

func matchSegments(pattern, segs []string) bool {
	for i, p := range pattern {
		switch {
		case p == "**":
			return true
		case i >= len(segs):
			return false
		case p != "*" && p != segs[i]:
			return false
		}
	}
	return len(pattern) == len(segs)
}

// createdKeys names the response field that addresses a created resource in
// paths, where it is not "id": clients go by clientId and roles by name.
var createdKeys = map[string]string{"clients": "clientId", "roles": "name", "identity-providers": "alias"}

// recordAdminEvent records a successful admin write when the realm has
// admin events on. The response is held back until the event is written,
// so the event can show what was created; a failure to record is logged and
// the response still goes out.
func (a *App) recordAdminEvent(next httpx.HandlerFunc) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		route := mux.CurrentRoute(r)
		if route == nil {
			return next(w, r)
		}
		template, err := route.GetPathTemplate()
		if err != nil || r.Method == http.MethodGet || r.Method == http.MethodHead || !recordedTemplate(r.Method, template) {
			return next(w, r)
		}
		reqBody := &cappedBuffer{limit: maxBodyBytes}
		if r.Body != nil {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, reqBody), r.Body}
		}
		res := &bufferedResponse{w: w}
		r = httpx.WithAuditNote(r)
		if err := next(res, r); err != nil {
			return err
		}
		// An import's dry run (200, not 201) wrote nothing to record.
		if res.status >= 200 && res.status < 300 && (!importTemplate(template) || res.status == http.StatusCreated) {
			a.writeAdminEvent(r, template, reqBody, res)
		}
		return res.send()
	}
}

// systemTemplate says whether a route changes the administration itself:
// admin accounts and named API keys.
func systemTemplate(template string) bool {
	return strings.HasPrefix(template, "/admin/accounts") || strings.HasPrefix(template, "/admin/api-keys")
}

// readOnlyPosts are the POST routes that change nothing: an evaluation
// of the authorization policies and a policy's test.
var readOnlyPosts = []string{"/admin/realms/{realm}/policies/evaluate", "/admin/realms/{realm}/policies/{id}/test",
	"/admin/realms/{realm}/themes/preview"}

// importTemplate says whether a route imports another product's export
// (app/migration), whose dry runs answer 200 and write nothing.
func importTemplate(template string) bool {
	return strings.HasPrefix(template, "/admin/migration/") || template == "/admin/realms/{realm}/users/import"
}

// recordedTemplate says whether writes on a route are realm changes that
// admin events record. Deleting a realm is not: its events go with it;
// nor the POSTs that change nothing.
func recordedTemplate(method, template string) bool {
	if systemTemplate(template) {
		return true
	}
	if method == http.MethodPost && slices.Contains(readOnlyPosts, template) {
		return false
	}
	switch template {
	case "/admin/realms", "/admin/realms/import", "/admin/migration/keycloak", "/admin/migration/auth0":
		return method == http.MethodPost
	case "/admin/realms/{realm}":
		return method != http.MethodDelete
	}
	return strings.HasPrefix(template, "/admin/realms/{realm}/")
}

func (a *App) writeAdminEvent(r *http.Request, template string, reqBody *cappedBuffer, res *bufferedResponse) {
	// The change is made: record it even if the client has gone.
	ctx := context.WithoutCancel(r.Context())
	op := adminOperation(r.Method, template)
	var created map[string]any
	if r.Method == http.MethodPost && res.status == http.StatusCreated {
		_ = json.Unmarshal(res.body.Bytes(), &created)
	}
	realmName, path := mux.Vars(r)["realm"], ""
	if systemTemplate(template) {
		// The administrators and their keys: the system realm's trail.
		realmName, path = SystemRealmName, strings.TrimPrefix(r.URL.Path, "/admin/")
		if id, ok := created["id"].(string); ok && id != "" {
			path += "/" + id
		}
	} else if realmName == "" {
		realmName, _ = created["name"].(string) // a realm created or imported
		if importTemplate(template) {
			realmName, _ = created["realm"].(string) // an import's report
		}
	} else {
		path = strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/admin/realms/"+realmName), "/")
		collection := template[strings.LastIndex(template, "/")+1:]
		key := createdKeys[collection]
		if key == "" {
			key = "id"
		}
		if id, ok := created[key].(string); ok && id != "" {
			path += "/" + id
		}
	}
	// A credential in the path (an invitation's token) is the route's
	// variable in the trail, as in the logs.
	path = httpx.RedactPath(path, mux.Vars(r))
	realm, err := a.store.GetRealm(ctx, realmName)
	if err != nil {
		a.log.Error("admin event not recorded: realm lookup failed", "realm", realmName, "path", httpx.LoggedPath(r), "err", err)
		return
	}
	change := &bus.Change{Operation: op, ResourceType: adminResourceType(template), ResourcePath: path}
	if !systemTemplate(template) {
		change.Route, change.Vars = bus.Route(template), mux.Vars(r)
	}
	typed, typedData := bus.Type(""), any(nil)
	if change.Route != "" {
		var answer map[string]any
		if json.Unmarshal([]byte(redactedJSON(res.body.Bytes())), &answer) == nil {
			change.Answer = answer
		}
		typed, typedData = bus.OfAdmin(change)
	}
	publish := a.bus.Wants(ctx, realm, bus.AdminChange)
	typed = wanted(a.bus.Wants(ctx, realm, typed), typed)
	if !realm.AdminEventsEnabled && !publish && typed == "" {
		return
	}
	rep := res.body.Bytes()
	if (op != events.OperationCreate && op != events.OperationUpdate) || len(bytes.TrimSpace(rep)) == 0 {
		rep = nil
		if !reqBody.overflow {
			rep = reqBody.Bytes()
		}
	}
	if note := httpx.AuditNote(r); note != nil {
		rep = note
	}
	p := principalFrom(ctx)
	e := &store.AdminEvent{
		// Version 7 IDs grow with time, so events of the same millisecond
		// still list in the order they happened.
		ID: uuid.Must(uuid.NewV7()).String(), RealmID: realm.ID, Time: a.now().UnixMilli(), OperationType: op,
		ResourceType: change.ResourceType, ResourcePath: path, AuthType: p.Kind, AuthUserID: p.UserID,
		AuthUsername: p.Username, IPAddress: a.clientIP(r), Representation: redactedJSON(rep),
	}
	change.AuthType, change.AuthUserID, change.AuthUsername, change.IPAddress = e.AuthType, e.AuthUserID, e.AuthUsername, e.IPAddress
	if e.Representation != "" {
		change.Representation = json.RawMessage(e.Representation)
	}
	// The admin event and what the bus makes of it commit together:
	// neither is written without the other.
	var pending bus.Pending
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if realm.AdminEventsEnabled {
			if err := tx.AddAdminEvent(ctx, e); err != nil {
				return err
			}
		}
		if publish {
			p, err := a.bus.Queue(ctx, tx, realm, bus.AdminChange, change)
			if err != nil {
				return err
			}
			pending = append(pending, p...)
		}
		p, err := a.bus.Queue(ctx, tx, realm, typed, typedData)
		pending = append(pending, p...)
		return err
	})
	if err != nil {
		a.log.Error("admin event not recorded", "realm", realm.Name, "operation", op, "path", httpx.LoggedPath(r), "err", err)
		return
	}
	pending.Wake()
}

// wanted is t when a subscriber wants it, else "".
func wanted(wants bool, t bus.Type) bus.Type {
	if !wants {
		return ""
	}
	return t
}

// redactedJSON is body with every secret hidden, or "" when body is not JSON.
func redactedJSON(body []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // keep numbers exactly as sent
	if err := dec.Decode(&v); err != nil {
		return ""
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redactSecrets(v)); err != nil {
		return ""
	}
	return strings.TrimSuffix(out.String(), "\n")
}

// redactSecrets hides the values under secret-named keys (isSecretKey) at
// any depth of a decoded JSON value.
func redactSecrets(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			if isSecretKey(k) {
				t[k] = redactAll(sub)
			} else {
				t[k] = redactSecrets(sub)
			}
		}
	case []any:
		for i, sub := range t {
			t[i] = redactSecrets(sub)
		}
	}
	return v
}

// redactAll hides every string in v. Numbers and booleans stay: no
// credential is one, while settings under secret-sounding names are
// (accessTokenLifespan, passwordMinLength, requirePasswordReset).
func redactAll(v any) any {
	switch t := v.(type) {
	case string:
		if t != "" {
			return redacted
		}
	case map[string]any:
		for k, sub := range t {
			t[k] = redactAll(sub)
		}
	case []any:
		for i, sub := range t {
			t[i] = redactAll(sub)
		}
	}
	return v
}

// cappedBuffer keeps what is written to it up to limit bytes, and notes
// if there was more: an oversized request body is not worth recording.
type cappedBuffer struct {
	bytes.Buffer
	limit    int
	overflow bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.overflow || c.Len()+len(p) > c.limit {
		c.overflow = true
		c.Reset()
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// bufferedResponse holds a handler's response until send. Headers go
// straight to the real writer's map: nothing is sent before WriteHeader.
type bufferedResponse struct {
	w      http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.w.Header() }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedResponse) send() error {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	b.w.WriteHeader(b.status)
	_, _ = b.w.Write(b.body.Bytes()) // a client that has gone cannot be answered anyway
	return nil
}
