package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
)

// scim-filter and scim-patch: a provisioning client (Entra ID, Okta) at
// the load realm's SCIM endpoint, with a SCIM token made through the admin
// API. The filters run over every seeded user; the patches write a pool of
// them.

const (
	scimContentType = "application/scim+json"
	scimPatchOp     = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	scimBulkRequest = "urn:ietf:params:scim:api:messages:2.0:BulkRequest"
	// scimWorkDomain is the domain of the work emails given to the sampled
	// users, which the value-path filter looks for.
	scimWorkDomain = "work.loadtest.example"
)

func scimUsersPath(realm string) string { return "/scim/v2/" + realm + "/Users" }

func (e *loadEnv) scimHeader() http.Header {
	return http.Header{"Authorization": {"Bearer " + e.scimToken}, "Accept": {scimContentType}}
}

// ensureSCIMToken makes the realm's SCIM token, once for both scenarios.
func (e *loadEnv) ensureSCIMToken(ctx context.Context) error {
	if e.scimToken != "" {
		return nil
	}
	var tok struct{ Token string }
	if err := e.admin(ctx, http.MethodPost, "/admin/realms/"+loadRealm+"/scim/tokens", map[string]any{"name": "load test"},
		http.StatusCreated, &tok); err != nil {
		return err
	}
	e.scimToken = tok.Token
	return nil
}

// prepareSCIMFilter gives each sampled user a work email besides the one
// seeded, through SCIM itself (a bulk of PATCHes): SCIM keeps the typed
// emails a value path reads, which the users row has no place for.
func prepareSCIMFilter(ctx context.Context, e *loadEnv) (func(context.Context) error, error) {
	if err := e.ensureSCIMToken(ctx); err != nil {
		return nil, err
	}
	const perBulk = 100 // the server's maxOperations
	for start := 0; start < len(e.sample); start += perBulk {
		var ops []map[string]any
		for _, u := range e.sample[start:min(start+perBulk, len(e.sample))] {
			ops = append(ops, map[string]any{"method": http.MethodPatch, "path": "/Users/" + u.id, "data": map[string]any{
				"schemas": []string{scimPatchOp}, "Operations": []map[string]any{{"op": "add", "path": "emails",
					"value": []map[string]any{{"value": scimWorkEmail(u.index), "type": "work"}}}}}})
		}
		var out struct {
			Operations []struct {
				Status   string
				Location string
			}
		}
		err := e.scim(ctx, http.MethodPost, "/scim/v2/"+loadRealm+"/Bulk",
			map[string]any{"schemas": []string{scimBulkRequest}, "Operations": ops}, &out)
		if err != nil {
			return nil, err
		}
		for i, op := range out.Operations {
			if op.Status != strconv.Itoa(http.StatusOK) {
				return nil, fmt.Errorf("%w: SCIM bulk PATCH %d of %d: status %s", errLoadSetup, start+i, len(e.sample), op.Status)
			}
		}
	}
	return noRelease, nil
}

func scimWorkEmail(i int) string { return loadUsername(i) + "@" + scimWorkDomain }

// scim sends a SCIM request with the token, as the provisioning client.
func (e *loadEnv) scim(ctx context.Context, method, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, e.srv.base+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header = e.scimHeader()
	req.Header.Set("Content-Type", scimContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s %s: status %d", errLoadSetup, method, path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// scimFilters are the filters scim-filter rotates over, each of a random
// user (of users seeded, or of the sample), each matching a few users: one
// username; the ten whose emails hold the username less its last digit;
// the hundred whose username starts as one less its last two; the family
// name holding the number of a user in the realm's last nine tenths (so
// that no longer number holds it too); the one sampled user with that
// work email.
var scimFilters = []func(users int, sample []sampledUser) string{
	func(users int, _ []sampledUser) string {
		return fmt.Sprintf(`userName eq "%s"`, loadUsername(rand.IntN(users)))
	},
	func(users int, _ []sampledUser) string {
		name := loadUsername(rand.IntN(users))
		return fmt.Sprintf(`emails co "%s"`, name[:len(name)-1])
	},
	func(users int, _ []sampledUser) string {
		name := loadUsername(rand.IntN(users))
		return fmt.Sprintf(`userName sw "%s"`, name[:len(name)-2])
	},
	func(users int, _ []sampledUser) string {
		return fmt.Sprintf(`name.familyName co "Tester %d"`, users/10+rand.IntN(users-users/10))
	},
	func(_ int, sample []sampledUser) string {
		u := sample[rand.IntN(len(sample))]
		return fmt.Sprintf(`emails[type eq "work" and value co "%s"]`, scimWorkEmail(u.index))
	},
}

var errNoMatch = errors.New("the filter matched no user")

// scimFilterWorkers list the users that filters match, each worker going
// round the filters from its own place.
func scimFilterWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	if len(e.sample) == 0 {
		return nil, fmt.Errorf("%w: no seeded users", errLoadSetup)
	}
	c, header := t.client(hc), e.scimHeader()
	calls := make([]loadCall, n)
	for w := range n {
		next := w
		calls[w] = func(ctx context.Context) (bool, error) {
			filter := scimFilters[next%len(scimFilters)](e.users, e.sample)
			next++
			body, shed, err := c.do(ctx, http.MethodGet, scimUsersPath(loadRealm)+"?filter="+url.QueryEscape(filter), nil,
				header, http.StatusOK)
			if err == nil && !shed && jsonInt(body, "totalResults") < 1 {
				err = fmt.Errorf("%w: %s", errNoMatch, filter)
			}
			return shed, err
		}
	}
	return calls, nil
}

// jsonInt is the number a top-level key of a JSON object holds, found
// without decoding the rest (a page of users), or -1.
func jsonInt(body []byte, key string) int {
	i := bytes.Index(body, []byte(`"`+key+`":`))
	if i < 0 {
		return -1
	}
	rest := bytes.TrimLeft(body[i+len(key)+3:], " ")
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	v, err := strconv.Atoi(string(rest[:end]))
	if err != nil {
		return -1
	}
	return v
}

// scimPatchWorkers replace a sampled user's displayName or given name,
// in turn, as a directory pushes a rename.
func scimPatchWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	if len(e.sample) == 0 {
		return nil, fmt.Errorf("%w: no seeded users", errLoadSetup)
	}
	c, header := t.client(hc), e.scimHeader()
	paths := []string{"displayName", "name.givenName"}
	calls := make([]loadCall, n)
	for w := range n {
		next := w
		calls[w] = func(ctx context.Context) (bool, error) {
			u := e.sample[rand.IntN(len(e.sample))]
			path := paths[next%len(paths)]
			next++
			body, err := json.Marshal(map[string]any{"schemas": []string{scimPatchOp}, "Operations": []map[string]any{
				{"op": "replace", "path": path, "value": fmt.Sprintf("Load %d", next)}}})
			if err != nil {
				return false, err
			}
			_, shed, err := c.doJSON(ctx, http.MethodPatch, scimUsersPath(loadRealm)+"/"+u.id, scimContentType, body,
				header, http.StatusOK)
			return shed, err
		}
	}
	return calls, nil
}

func prepareSCIMPatch(ctx context.Context, e *loadEnv) (func(context.Context) error, error) {
	return noRelease, e.ensureSCIMToken(ctx)
}
