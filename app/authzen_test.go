package app

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The shapes of OpenID AuthZEN Authorization API 1.0, as its text gives
// them (written here from the specification, not from the server):
//
//   - Subject: an object with REQUIRED "type" and "id" (strings) and
//     OPTIONAL "properties" (an object). Resource: the same. Action: an
//     object with REQUIRED "name" (a string) and OPTIONAL "properties".
//     Context: an object.
//   - Access Evaluation request (§6.1): REQUIRED "subject", "action",
//     "resource"; OPTIONAL "context".
//   - Decision (§5.5), the Access Evaluation response (§6.2): REQUIRED
//     "decision", a boolean; OPTIONAL "context", an object.
//   - Access Evaluations request (§7.1): OPTIONAL "evaluations", an array
//     of Access Evaluation requests; the top-level "subject", "action",
//     "resource" and "context" are the defaults of each, which an
//     evaluation's own key overrides; OPTIONAL "options", an object whose
//     "evaluations_semantic" is exactly one of "execute_all" (the default),
//     "deny_on_first_deny", "permit_on_first_permit". No evaluations (or
//     none): the request behaves as an Access Evaluation request.
//   - Access Evaluations response (§7.2): "evaluations", an array of
//     Decisions in the order of the request's; the top-level "decision"
//     RECOMMENDED omitted. deny_on_first_deny stops after the first
//     denial, permit_on_first_permit after the first permit.
//   - PDP metadata (§9): at /.well-known/authzen-configuration inserted
//     into the PDP's identifier; REQUIRED "policy_decision_point" (the
//     identifier) and "access_evaluation_endpoint"; OPTIONAL
//     "access_evaluations_endpoint"; parameters without a value omitted;
//     200 and application/json.
//   - Transport (§12): POST with application/json; success is 200 with
//     application/json; unknown fields of a request are ignored; a
//     missing required attribute is a 400; 401 when the PEP did not
//     authenticate, with a WWW-Authenticate header; 403 forbidden; a
//     request's X-Request-ID is echoed in the response's.
var (
	authzenEntityKeys   = map[string][]string{"subject": {"type", "id"}, "resource": {"type", "id"}, "action": {"name"}}
	authzenSemantics    = []string{"execute_all", "deny_on_first_deny", "permit_on_first_permit"}
	authzenDecisionKeys = []string{"decision", "context"}
	authzenMetadataKeys = []string{"policy_decision_point", "access_evaluation_endpoint", "access_evaluations_endpoint",
		"search_subject_endpoint", "search_action_endpoint", "search_resource_endpoint", "capabilities", "signed_metadata"}
)

// authzenDecision checks a Decision's shape and answers it.
func authzenDecision(t *testing.T, v any) bool {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("a decision that is no object: %v", v)
	}
	for k := range obj {
		if !slices.Contains(authzenDecisionKeys, k) {
			t.Errorf("a decision with the key %q: %v", k, obj)
		}
	}
	d, ok := obj["decision"].(bool)
	if !ok {
		t.Fatalf("decision %v is no boolean", obj["decision"])
	}
	if c, present := obj["context"]; present {
		if _, ok := c.(map[string]any); !ok {
			t.Errorf("context %v is no object", c)
		}
	}
	return d
}

// authzenEvaluations checks an Access Evaluations response's shape and
// answers its decisions.
func authzenEvaluations(t *testing.T, r *testResponse) []bool {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	obj := r.object(t)
	if _, present := obj["decision"]; present {
		t.Errorf("a batch's answer carries a top-level decision: %v", obj)
	}
	list, ok := obj["evaluations"].([]any)
	if !ok {
		t.Fatalf("evaluations %v is no array", obj["evaluations"])
	}
	out := make([]bool, len(list))
	for i, e := range list {
		out[i] = authzenDecision(t, e)
	}
	return out
}

// authzenRequestOK checks that a request the test sends has the
// specification's shape, so the test exercises the API as written.
func authzenRequestOK(t *testing.T, q map[string]any, batch bool) {
	t.Helper()
	for key, required := range authzenEntityKeys {
		v, present := q[key]
		if !present {
			if !batch {
				t.Fatalf("the test's request lacks %s", key)
			}
			continue
		}
		e := v.(map[string]any)
		for _, k := range required {
			if _, ok := e[k].(string); !ok {
				t.Fatalf("the test's %s lacks %s", key, k)
			}
		}
	}
	if batch {
		if o, ok := q["options"].(map[string]any); ok {
			if s, ok := o["evaluations_semantic"].(string); ok && !slices.Contains(authzenSemantics, s) {
				t.Fatalf("the test's semantic %q", s)
			}
		}
	}
}

// authzenEnv is the policy decision table's realm with callers:
//   - pep: confidential, its service account holds the realm role authzen;
//   - pep-scope: confidential, the client scope authzen linked by default;
//   - other: confidential, neither;
//   - spa: public.
type authzenEnv struct {
	*policyEnv
	o       *oidcTestServer
	secrets map[string]string
}

func newAuthZENEnv(t *testing.T) *authzenEnv {
	t.Helper()
	o := newOIDCTestServer(t)
	e := &authzenEnv{policyEnv: newPolicyEnvOn(t, o.testServer), o: o, secrets: map[string]string{}}
	post := func(path string, body any) map[string]any {
		t.Helper()
		r := e.admin(http.MethodPost, "/admin/realms/acme"+path, body)
		if r.Status >= 300 {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
		}
		if len(r.Body) > 0 && r.Body[0] == '{' {
			return r.object(t)
		}
		return nil
	}
	for _, id := range []string{"pep", "pep-scope", "other"} {
		e.secrets[id] = post("/clients", map[string]any{"clientId": id, "grantTypes": []string{"client_credentials"}})["secret"].(string)
	}
	post("/clients", map[string]any{"clientId": "spa", "clientType": "PUBLIC"})
	post("/roles", map[string]any{"name": "authzen"})
	sa := e.admin(http.MethodGet, "/admin/realms/acme/clients/pep/service-account-user", nil).object(t)["id"].(string)
	post("/users/"+sa+"/role-mappings/realm", map[string]any{"roleNames": []string{"authzen"}})
	scope := post("/client-scopes", map[string]any{"name": "authzen"})["id"].(string)
	post("/clients/pep-scope/default-client-scopes", map[string]any{"clientScopeId": scope})

	e.policy("editors edit documents", "permit", []string{"document"}, []string{"edit", "read"}, `"editor" in subject.roles`)
	e.policy("owners read their documents", "permit", []string{"document"}, []string{"read"},
		`"ownerID" in resource.properties && resource.properties.ownerID == subject.email`)
	e.policy("no contractors", "deny", []string{"document"}, []string{"*"}, `subject.groups.exists(g, g.startsWith("/contractors"))`)
	e.policy("office network", "deny", []string{"console"}, []string{"*"},
		`!(isIP(context.clientAddress) && cidr("10.0.0.0/8").containsIP(ip(context.clientAddress)))`)
	e.policy("editors use the console", "permit", []string{"console"}, []string{"*"}, `"editor" in subject.roles`)
	return e
}

func (e *authzenEnv) basic(clientID string) string {
	return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(clientID+":"+e.secrets[clientID]))
}

func (e *authzenEnv) bearer(clientID string) string {
	e.t.Helper()
	r := clientCredentialsGrant(e.o, clientID, e.secrets[clientID])
	mustStatus(e.t, r, http.StatusOK)
	return "Authorization: Bearer " + r.object(e.t)["access_token"].(string)
}

const (
	authzenPathOne   = "/realms/acme/access/v1/evaluation"
	authzenPathBatch = "/realms/acme/access/v1/evaluations"
)

func authzenQuery(subject, action, rtype, id string) map[string]any {
	return map[string]any{"subject": map[string]any{"type": "user", "id": subject}, "action": map[string]any{"name": action},
		"resource": map[string]any{"type": rtype, "id": id}}
}

// The Access Evaluation API answers the realm's decision to a client
// entitled by a role or a scope, by token or by credentials, in the
// specification's shape; it ignores unknown fields and echoes
// X-Request-ID.
func TestAuthZENEvaluation(t *testing.T) {
	e := newAuthZENEnv(t)
	callers := map[string]string{"pep by token": e.bearer("pep"), "pep by credentials": e.basic("pep"),
		"pep-scope by token": e.bearer("pep-scope"), "pep-scope by credentials": e.basic("pep-scope")}
	for name, cred := range callers {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				q    map[string]any
				want bool
			}{
				{authzenQuery("alice@acme.test", "edit", "document", "d1"), true},
				{authzenQuery("dave", "edit", "document", "d1"), false},
				{authzenQuery("carol", "read", "document", "d1"), false},
				{authzenQuery("nobody", "read", "document", "d1"), false},
			} {
				authzenRequestOK(t, c.q, false)
				r := e.request(http.MethodPost, authzenPathOne, c.q, cred, "X-Request-ID: bfe9eb29-ab87-4ca3-be83-a1d5d8305716")
				mustStatus(t, r, http.StatusOK)
				if got := r.Header.Get("X-Request-ID"); got != "bfe9eb29-ab87-4ca3-be83-a1d5d8305716" {
					t.Errorf("X-Request-ID %q", got)
				}
				if got := authzenDecision(t, r.object(t)); got != c.want {
					t.Errorf("%v: %v, want %v (%s)", c.q, got, c.want, r.Body)
				}
			}
		})
	}
	cred := callers["pep by credentials"]
	// The context says why, for the enforcement point's operators.
	r := e.request(http.MethodPost, authzenPathOne, authzenQuery("carol", "edit", "document", "d1"), cred)
	ctx, _ := r.object(t)["context"].(map[string]any)
	if reason, _ := ctx["reason_admin"].(map[string]any); !strings.Contains(fmt.Sprint(reason["en"]), "no contractors") || ctx["id"] == nil {
		t.Errorf("context %v", ctx)
	}
	// Properties and context reach the conditions; the subject's
	// ip_address is the client address.
	q := authzenQuery("dave", "read", "document", "d1")
	q["resource"].(map[string]any)["properties"] = map[string]any{"ownerID": "dave@acme.test"}
	if !authzenDecision(t, e.request(http.MethodPost, authzenPathOne, q, cred).object(t)) {
		t.Error("the owner was denied")
	}
	q = authzenQuery("alice", "open", "console", "c")
	q["subject"].(map[string]any)["properties"] = map[string]any{"ip_address": "10.2.3.4"}
	if !authzenDecision(t, e.request(http.MethodPost, authzenPathOne, q, cred).object(t)) {
		t.Error("the console from the office was denied")
	}
	q["subject"].(map[string]any)["properties"] = map[string]any{"ip_address": "192.0.2.1"}
	if authzenDecision(t, e.request(http.MethodPost, authzenPathOne, q, cred).object(t)) {
		t.Error("the console from outside was permitted")
	}
	q["context"] = map[string]any{"clientAddress": "10.9.9.9"}
	if !authzenDecision(t, e.request(http.MethodPost, authzenPathOne, q, cred).object(t)) {
		t.Error("the context's address did not stand")
	}
	// Unknown fields are ignored, at every level.
	q = authzenQuery("alice", "edit", "document", "d1")
	q["page"], q["subject"].(map[string]any)["tenant"], q["action"].(map[string]any)["verb"] = map[string]any{"token": "x"}, "t", "PUT"
	r = e.request(http.MethodPost, authzenPathOne, q, cred)
	if !authzenDecision(t, r.object(t)) {
		t.Errorf("unknown fields: %s", r.Body)
	}
}

// The Access Evaluations API: each semantic, defaults inherited from the
// top level and overridden by an evaluation, and a request without
// evaluations answered as a single one.
func TestAuthZENEvaluations(t *testing.T) {
	e := newAuthZENEnv(t)
	cred := e.bearer("pep")
	doc := func(id string) map[string]any {
		return map[string]any{"resource": map[string]any{"type": "document", "id": id}}
	}
	batch := func(semantic string, evaluations ...any) map[string]any {
		q := map[string]any{"subject": map[string]any{"type": "user", "id": "alice"}, "action": map[string]any{"name": "read"},
			"evaluations": evaluations}
		if semantic != "" {
			q["options"] = map[string]any{"evaluations_semantic": semantic}
		}
		return q
	}
	// permit (alice edits), deny (she deletes: no policy), permit
	// (dave reads his own), deny (carol, a contractor).
	mixed := []any{
		map[string]any{"action": map[string]any{"name": "edit"}, "resource": map[string]any{"type": "document", "id": "1"}},
		map[string]any{"action": map[string]any{"name": "delete"}, "resource": map[string]any{"type": "document", "id": "2"}},
		map[string]any{"subject": map[string]any{"type": "user", "id": "dave"},
			"resource": map[string]any{"type": "document", "id": "3", "properties": map[string]any{"ownerID": "dave@acme.test"}}},
		map[string]any{"subject": map[string]any{"type": "user", "id": "carol"}, "resource": map[string]any{"type": "document", "id": "4"}},
	}
	for _, c := range []struct {
		name string
		q    map[string]any
		want []bool
	}{
		{"execute_all by default", batch("", mixed...), []bool{true, false, true, false}},
		{"execute_all", batch("execute_all", mixed...), []bool{true, false, true, false}},
		{"deny_on_first_deny", batch("deny_on_first_deny", mixed...), []bool{true, false}},
		{"deny_on_first_deny, none denied", batch("deny_on_first_deny", mixed[0], mixed[2]), []bool{true, true}},
		{"permit_on_first_permit", batch("permit_on_first_permit", mixed[1], mixed[3], mixed[0], mixed[2]), []bool{false, false, true}},
		{"permit_on_first_permit, none permitted", batch("permit_on_first_permit", mixed[1], mixed[3]), []bool{false, false}},
		{"the top level's defaults", batch("", doc("a"), doc("b")), []bool{true, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			authzenRequestOK(t, c.q, true)
			if got := authzenEvaluations(t, e.request(http.MethodPost, authzenPathBatch, c.q, cred)); !slices.Equal(got, c.want) {
				t.Errorf("decisions %v, want %v", got, c.want)
			}
		})
	}

	// The top-level context is a default, which an evaluation's own
	// context replaces whole.
	q := map[string]any{"subject": map[string]any{"type": "user", "id": "alice"}, "action": map[string]any{"name": "open"},
		"resource": map[string]any{"type": "console", "id": "c"}, "context": map[string]any{"clientAddress": "10.0.0.1"},
		"evaluations": []any{map[string]any{}, map[string]any{"context": map[string]any{"clientAddress": "192.0.2.1"}},
			map[string]any{"context": map[string]any{"other": true}}}}
	authzenRequestOK(t, q, true)
	if got := authzenEvaluations(t, e.request(http.MethodPost, authzenPathBatch, q, cred)); !slices.Equal(got, []bool{true, false, false}) {
		t.Errorf("contexts: %v", got)
	}

	// Without evaluations (or with none), one decision.
	for _, evs := range []any{nil, []any{}} {
		q := authzenQuery("alice", "edit", "document", "d1")
		if evs != nil {
			q["evaluations"] = evs
		}
		r := e.request(http.MethodPost, authzenPathBatch, q, cred)
		mustStatus(t, r, http.StatusOK)
		if !authzenDecision(t, r.object(t)) {
			t.Errorf("a single evaluation: %s", r.Body)
		}
	}

	// What a default cannot fill is a 400 naming it; so is an unknown
	// semantic.
	noSubject := map[string]any{"action": map[string]any{"name": "read"}, "evaluations": []any{
		map[string]any{"subject": map[string]any{"type": "user", "id": "alice"}, "resource": map[string]any{"type": "document", "id": "1"}},
		doc("2")}}
	mustError(t, e.request(http.MethodPost, authzenPathBatch, noSubject, cred), http.StatusBadRequest, "invalid_field",
		"evaluations[1].subject")
	mustError(t, e.request(http.MethodPost, authzenPathBatch, batch("first_come", doc("1")), cred), http.StatusBadRequest,
		"invalid_field", "options.evaluations_semantic")
	many := make([]any, 101)
	for i := range many {
		many[i] = doc(fmt.Sprint(i))
	}
	mustError(t, e.request(http.MethodPost, authzenPathBatch, batch("", many...), cred), http.StatusBadRequest, "invalid_field",
		"evaluations")
}

// The policy decision point's metadata, under the realm and where RFC
// 8615 puts it, public.
func TestAuthZENMetadata(t *testing.T) {
	e := newAuthZENEnv(t)
	issuer := e.o.issuer("acme")
	for _, path := range []string{"/realms/acme/.well-known/authzen-configuration", "/.well-known/authzen-configuration/realms/acme"} {
		r := e.request(http.MethodGet, path, nil)
		mustStatus(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		obj := r.object(t)
		for k, v := range obj {
			if !slices.Contains(authzenMetadataKeys, k) {
				t.Errorf("%s: the unregistered parameter %q", path, k)
			}
			if s, ok := v.(string); !ok || s == "" {
				t.Errorf("%s: %s is %v; a parameter without a value is omitted", path, k, v)
			}
		}
		if obj["policy_decision_point"] != issuer || obj["access_evaluation_endpoint"] != issuer+"/access/v1/evaluation" ||
			obj["access_evaluations_endpoint"] != issuer+"/access/v1/evaluations" {
			t.Errorf("%s: %v", path, obj)
		}
	}
	mustError(t, e.request(http.MethodGet, "/realms/nope/.well-known/authzen-configuration", nil), http.StatusNotFound, "not_found", "")
	// The endpoints it names answer.
	var meta map[string]string
	e.request(http.MethodGet, "/realms/acme/.well-known/authzen-configuration", nil).decode(t, &meta)
	path := strings.TrimPrefix(meta["access_evaluation_endpoint"], e.o.url)
	mustStatus(t, e.request(http.MethodPost, path, authzenQuery("alice", "edit", "document", "1"), e.basic("pep")), http.StatusOK)
}

// Without a credential, with a bad one, or as a public client: 401 with
// a Bearer challenge; a client not entitled: 403; neither answer carries
// anything of a decision, and X-Request-ID is still echoed.
func TestAuthZENAuthentication(t *testing.T) {
	e := newAuthZENEnv(t)
	e.createRealm("beta")
	r := e.admin(http.MethodPost, "/admin/realms/beta/clients", map[string]any{"clientId": "pep",
		"grantTypes": []string{"client_credentials"}})
	mustStatus(t, r, http.StatusCreated)
	otherRealm := clientCredentialsGrantIn(e.o, "beta", "pep", r.object(t)["secret"].(string))
	q := authzenQuery("carol", "edit", "document", "d1")
	for _, c := range []struct {
		name   string
		cred   string
		status int
	}{
		{"no credential", "", 401},
		{"a garbage token", "Authorization: Bearer garbage", 401},
		{"a forged token", "Authorization: Bearer eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.e30.AAAA", 401},
		{"another realm's token", "Authorization: Bearer " + otherRealm, 401},
		{"a wrong secret", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("pep:wrong")), 401},
		{"an unknown client", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("ghost:x")), 401},
		{"a public client", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("spa:")), 401},
		{"the admin API key", "X-Admin-API-Key: " + testAPIKey, 401},
		{"an unknown scheme", "Authorization: Digest x", 401},
		{"a client not entitled, by token", e.bearer("other"), 403},
		{"a client not entitled, by credentials", e.basic("other"), 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []string{authzenPathOne, authzenPathBatch} {
				headers := []string{"X-Request-ID: req-42"}
				if c.cred != "" {
					headers = append(headers, c.cred)
				}
				r := e.request(http.MethodPost, path, q, headers...)
				code := map[int]string{401: "unauthorized", 403: "forbidden"}[c.status]
				mustError(t, r, c.status, code, "")
				if c.status == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer realm=") {
					t.Errorf("%s: WWW-Authenticate %q", path, r.Header.Get("WWW-Authenticate"))
				}
				if strings.Contains(string(r.Body), `"decision"`) || strings.Contains(string(r.Body), "contractors") {
					t.Errorf("%s: the refusal says something of the decision: %s", path, r.Body)
				}
				if r.Header.Get("X-Request-ID") != "req-42" {
					t.Errorf("%s: X-Request-ID %q", path, r.Header.Get("X-Request-ID"))
				}
			}
		})
	}
	// Entitlement follows the role: taken away, the client is refused.
	sa := e.admin(http.MethodGet, "/admin/realms/acme/clients/pep/service-account-user", nil).object(t)["id"].(string)
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+sa+"/role-mappings/realm",
		map[string]any{"roleNames": []string{"authzen"}}), http.StatusOK)
	mustError(t, e.request(http.MethodPost, authzenPathOne, q, e.basic("pep")), http.StatusForbidden, "forbidden", "")
}

func clientCredentialsGrantIn(s *oidcTestServer, realm, clientID, secret string) string {
	r := s.request(http.MethodPost, "/realms/"+realm+"/protocol/openid-connect/token", "grant_type=client_credentials",
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte(clientID+":"+secret)))
	mustStatus(s.t, r, http.StatusOK)
	return r.object(s.t)["access_token"].(string)
}

// Bad input on the AuthZEN endpoints is a 400 naming the field, or the
// status the API gives it; unknown fields are not bad input there (the
// specification asks that they be ignored).
func TestAuthZENBadInput(t *testing.T) {
	e := newAuthZENEnv(t)
	cred := e.basic("pep")
	var deep any = "x"
	for range 40 {
		deep = map[string]any{"a": deep}
	}
	for _, c := range []struct {
		name        string
		path        string
		body        any
		headers     []string
		status      int
		code, field string
	}{
		{"no subject", authzenPathOne, map[string]any{"action": map[string]any{"name": "read"},
			"resource": map[string]any{"type": "d", "id": "1"}}, nil, 400, "invalid_field", "subject"},
		{"a subject without id", authzenPathOne, map[string]any{"subject": map[string]any{"type": "user"},
			"action": map[string]any{"name": "read"}, "resource": map[string]any{"type": "d", "id": "1"}}, nil, 400, "invalid_field", "subject.id"},
		{"an action without name", authzenPathOne, map[string]any{"subject": map[string]any{"type": "user", "id": "a"},
			"action": map[string]any{}, "resource": map[string]any{"type": "d", "id": "1"}}, nil, 400, "invalid_field", "action.name"},
		{"a subject that is a string", authzenPathOne, map[string]any{"subject": "alice", "action": map[string]any{"name": "read"},
			"resource": map[string]any{"type": "d", "id": "1"}}, nil, 400, "invalid_field", "subject"},
		{"an id that is a number", authzenPathOne, map[string]any{"subject": map[string]any{"type": "user", "id": 7},
			"action": map[string]any{"name": "read"}, "resource": map[string]any{"type": "d", "id": "1"}}, nil, 400, "invalid_field", "subject.id"},
		{"a context nested too deep", authzenPathOne, map[string]any{"subject": map[string]any{"type": "user", "id": "a"},
			"action": map[string]any{"name": "read"}, "resource": map[string]any{"type": "d", "id": "1"}, "context": deep}, nil,
			400, "invalid_field", "context"},
		{"a batch nested too deep", authzenPathBatch, map[string]any{"evaluations": []any{map[string]any{
			"subject": map[string]any{"type": "user", "id": "a", "properties": deep}}}}, nil, 400, "invalid_field",
			"evaluations[0].subject.properties"},
		{"evaluations that are no list", authzenPathBatch, map[string]any{"evaluations": "all"}, nil, 400, "invalid_field", "evaluations"},
		{"options that are no object", authzenPathBatch, map[string]any{"evaluations": []any{}, "options": []any{}}, nil, 400,
			"invalid_field", "options"},
		{"not JSON", authzenPathOne, "{", nil, 400, "invalid_json", ""},
		{"an array", authzenPathOne, "[]", nil, 400, "invalid_json", ""},
		{"not application/json", authzenPathOne, "subject=alice", []string{"Content-Type: application/x-www-form-urlencoded"}, 415,
			"unsupported_media_type", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, e.request(http.MethodPost, c.path, c.body, append([]string{cred}, c.headers...)...), c.status, c.code, c.field)
		})
	}
	mustError(t, e.request(http.MethodGet, authzenPathOne, nil, cred), http.StatusMethodNotAllowed, "method_not_allowed", "")
}
