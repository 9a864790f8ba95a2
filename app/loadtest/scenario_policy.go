package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
)

// policy-eval: an enforcement point (an API gateway) asks the load realm's
// AuthZEN access evaluation endpoint whether a seeded user may read or
// edit a document, one decision a request, authenticated by its client
// credentials. The realm's CEL policies, made in prepare, decide.

const (
	pepClient    = "gateway"
	authzenRole  = "authzen" // the realm role that entitles a client to ask
	editorRole   = "editor"
	policyDocKey = "document"
)

// loadPolicies are the realm's policies: owners read and edit their
// documents, editors edit any, and no one but an editor touches a secret
// one.
var loadPolicies = []map[string]any{
	{"name": "owners use their documents", "effect": "permit",
		"target":    map[string]any{"resourceTypes": []string{policyDocKey}, "actions": []string{"read", "edit"}},
		"condition": `resource.properties.ownerID == subject.email`},
	{"name": "editors edit", "effect": "permit",
		"target":    map[string]any{"resourceTypes": []string{policyDocKey}, "actions": []string{"edit"}},
		"condition": `"` + editorRole + `" in subject.roles`},
	{"name": "secrets for editors", "effect": "deny",
		"target": map[string]any{"resourceTypes": []string{policyDocKey}, "actions": []string{"*"}},
		"condition": `has(resource.properties.classification) && resource.properties.classification == "secret" && ` +
			`!("` + editorRole + `" in subject.roles)`},
}

// preparePolicies makes, through the admin API, the enforcement point's
// client with the realm role that entitles it, and the policies.
func preparePolicies(ctx context.Context, e *loadEnv) (func(context.Context) error, error) {
	realm := "/admin/realms/" + loadRealm
	for _, role := range []string{authzenRole, editorRole} {
		if err := e.admin(ctx, http.MethodPost, realm+"/roles", map[string]any{"name": role}, http.StatusCreated, nil); err != nil {
			return nil, err
		}
	}
	var pep struct{ Secret string }
	if err := e.admin(ctx, http.MethodPost, realm+"/clients", map[string]any{"clientId": pepClient,
		"grantTypes": []string{grantClientCredentials}}, http.StatusCreated, &pep); err != nil {
		return nil, err
	}
	var sa struct{ ID string }
	if err := e.admin(ctx, http.MethodGet, realm+"/clients/"+pepClient+"/service-account-user", nil, http.StatusOK, &sa); err != nil {
		return nil, err
	}
	if err := e.admin(ctx, http.MethodPost, realm+"/users/"+sa.ID+"/role-mappings/realm",
		map[string]any{"roleNames": []string{authzenRole}}, http.StatusOK, nil); err != nil {
		return nil, err
	}
	for _, p := range loadPolicies {
		if err := e.admin(ctx, http.MethodPost, realm+"/policies", p, http.StatusCreated, nil); err != nil {
			return nil, err
		}
	}
	e.pepSecret = pep.Secret
	return noRelease, nil
}

// policyWorkers ask about random users and documents: a document owned by
// the user asking or by another, secret or internal, read or edited, so
// that each policy decides some of the requests.
func policyWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c, auth := t.client(hc), basicAuth(pepClient, e.pepSecret)
	auth.Set("Accept", "application/json")
	path := "/realms/" + loadRealm + "/access/v1/evaluation"
	actions, classes := []string{"read", "edit"}, []string{"internal", "secret"}
	return same(func(ctx context.Context) (bool, error) {
		user, owner := rand.IntN(e.users), rand.IntN(e.users)
		if rand.IntN(2) == 0 {
			owner = user
		}
		body := fmt.Appendf(nil, `{"subject":{"type":"user","id":"%s"},"action":{"name":"%s"},`+
			`"resource":{"type":"%s","id":"doc-%d","properties":{"ownerID":"%s@example.com","classification":"%s"}}}`,
			loadUsername(user), actions[rand.IntN(len(actions))], policyDocKey, rand.IntN(1_000_000), loadUsername(owner),
			classes[rand.IntN(len(classes))])
		answer, shed, err := c.doJSON(ctx, http.MethodPost, path, "application/json", body, auth, http.StatusOK)
		if err == nil && !shed && !bytes.Contains(answer, []byte(`"decision":`)) {
			err = fmt.Errorf("no decision: %.200s", answer)
		}
		return shed, err
	}, n), nil
}
