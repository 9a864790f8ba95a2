package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The OAuth 2.0 grant types the scenarios use (RFC 6749).
const (
	grantClientCredentials = "client_credentials"
	grantPassword          = "password"
	grantRefreshToken      = "refresh_token"
	grantAuthorizationCode = "authorization_code"
)

// The scenarios whose rates are other scenarios' floors.
const (
	scenarioCCRS256    = "cc-rs256"
	scenarioIntrospect = "introspect"
)

// loadScenarios are the scenarios in the order they run. The floor of a
// crypto-bound one is the same crypto alone, measured in the same run.
var loadScenarios = []*loadScenario{
	{name: scenarioCCRS256, floor: floorRS256, workers: ccWorkers(loadRealm),
		target: ratioTarget("≥ 80% of RS256 signing alone", 0.80)},
	{name: "cc-es256", floor: floorES256, workers: ccWorkers(loadRealmES256),
		target: rateTarget("≥ 8000 grants/s", 8000)},
	{name: "cc-eddsa", floor: floorEdDSA, workers: ccWorkers(loadRealmEdDSA)},
	{name: scenarioIntrospect, workers: introspectWorkers,
		target: rateTarget("≥ 10000/s", 10000)},
	{name: "userinfo", workers: userinfoWorkers},
	// A non-human identity's grant and its API key's introspection record
	// each use (audit, daily count, last use) beside what an ordinary
	// client's do.
	{name: "nhi-cc", floor: scenarioCCRS256, workers: nhiCCWorkers,
		target: ratioTarget("≥ 80% of cc-rs256", 0.80)},
	{name: "nhi-introspect", floor: scenarioIntrospect, workers: nhiIntrospectWorkers,
		target: ratioTarget("≥ 50% of introspect", 0.50)},
	{name: "refresh", floor: scenarioCCRS256, workers: refreshWorkers,
		target: ratioTarget("≥ 50% of cc-rs256", 0.50)},
	{name: "password", floor: floorArgon2, workers: passwordWorkers,
		target: ratioTarget("≥ 90% of argon2id alone", 0.90)},
	// The admin scenarios are an admin console's load: a few connections.
	// At full concurrency their p99 is queueing on two cores, not the query.
	{name: "users-page", conc: 4, workers: usersPageWorkers, target: p99Target("p99 < 10 ms", 10)},
	{name: "user-lookup", conc: 4, workers: userLookupWorkers, target: p99Target("p99 < 10 ms", 10)},
	{name: "password-storm", storm: true, workers: passwordWorkers,
		target: func(r *loadResult) (string, string, bool) {
			return "RSS < 100 MB, overload answered cleanly", fmt.Sprintf("%.1f MB, %d shed", r.RSSMaxMB, r.Shed),
				r.RSSMaxMB < 100 && r.Errors == 0
		}},
	// The scenarios of the product beyond the token endpoint come after
	// the storm, so that the figures above are measured as they were, and
	// each readies what it needs only when it runs.
	//
	// The SP takes the defaults, a Response signed whole and in its
	// assertion: two signatures, the floor no response goes below.
	{name: "saml-sso", floor: floorRS256x2, prepare: prepareSAML, workers: samlWorkers,
		target: ratioTarget("≥ 60% of two RS256 signatures alone", 0.60)},
	// A provisioning client works over a few connections, as the admin
	// scenarios do.
	{name: "scim-filter", conc: 4, prepare: prepareSCIMFilter, workers: scimFilterWorkers,
		target: p99Target("p99 < 50 ms", 50)},
	{name: "scim-patch", conc: 4, prepare: prepareSCIMPatch, workers: scimPatchWorkers},
	// Against the directory's own binds: whether the directory or the
	// server holds the sign-ins back.
	{name: "ldap-bind", floor: floorLDAPBind, floorOp: ldapBindFloor, prepare: prepareLDAP, workers: ldapWorkers},
	// A brokered sign-in signs four RS256 tokens, two upstream and two
	// here: the ratio says how many grants' worth one costs.
	{name: "broker", floor: scenarioCCRS256, prepare: prepareBroker, workers: brokerWorkers},
	// The rate that matters is the deliveries', counted at the receiver;
	// the requests are what makes the events.
	{name: "webhooks", prepare: prepareWebhooks, workers: hookWorkers,
		effect: &loadEffect{name: "deliveries", counter: hookDeliveries}},
	{name: "policy-eval", prepare: preparePolicies, workers: policyWorkers},
}

func ratioTarget(text string, want float64) func(r *loadResult) (string, string, bool) {
	return func(r *loadResult) (string, string, bool) {
		return text, fmt.Sprintf("%.0f%% (%.0f of %.0f/s)", r.Ratio*100, r.RPS, r.Floor), r.Ratio >= want
	}
}

func rateTarget(text string, want float64) func(r *loadResult) (string, string, bool) {
	return func(r *loadResult) (string, string, bool) {
		return text, fmt.Sprintf("%.0f/s", r.RPS), r.RPS >= want
	}
}

func p99Target(text string, wantMs float64) func(r *loadResult) (string, string, bool) {
	return func(r *loadResult) (string, string, bool) {
		return text, fmt.Sprintf("%.2f ms", r.P99Ms), r.P99Ms < wantMs
	}
}

// loadClient sends the scenarios' requests.
type loadClient struct {
	conns *loadConns
	base  string
}

// do sends a request and reads the whole answer. A status other than want
// is an error, except a clean overload refusal, which is shed.
func (c *loadClient) do(ctx context.Context, method, path string, form url.Values, header http.Header, want int) (body []byte, shed bool, err error) {
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, false, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return c.exchange(req, want)
}

// doJSON sends a JSON body (of contentType: SCIM's is its own) and reads
// the whole answer, as do does.
func (c *loadClient) doJSON(ctx context.Context, method, path, contentType string, body []byte, header http.Header, want int) ([]byte, bool, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", contentType)
	return c.exchange(req, want)
}

// exchange sends req and reads the whole answer. A status other than want
// is an error, except a clean overload refusal, which is shed.
func (c *loadClient) exchange(req *http.Request, want int) (body []byte, shed bool, err error) {
	method, path := req.Method, req.URL.RequestURI()
	resp, body, err := c.conns.roundTrip(req)
	if err != nil {
		return nil, false, err
	}
	if resp.StatusCode == want {
		return body, false, nil
	}
	if (resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests) &&
		resp.Header.Get("Retry-After") != "" {
		return body, true, nil
	}
	return nil, false, fmt.Errorf("%w: %s %s: %d: %.200s", errLoadStatus, method, path, resp.StatusCode, body)
}

func basicAuth(id, secret string) http.Header {
	req := &http.Request{Header: http.Header{}}
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return req.Header
}

func tokenPath(realm string) string { return "/realms/" + realm + "/protocol/openid-connect/token" }

type loadTokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
}

func (t *loadTarget) client(p *loadConns) *loadClient { return &loadClient{conns: p, base: t.srv.base} }

// passwordTokens signs user i in with the password grant.
func (t *loadTarget) passwordTokens(ctx context.Context, c *loadClient, i int, scope string) (*loadTokens, error) {
	form := url.Values{"grant_type": {grantPassword}, "username": {t.username(i)}, "password": {t.password}}
	if scope != "" {
		form.Set("scope", scope)
	}
	body, _, err := c.do(ctx, http.MethodPost, t.tokenPath(loadRealm), form, t.appAuth, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var tok loadTokens
	return &tok, json.Unmarshal(body, &tok)
}

func same(call loadCall, n int) []loadCall {
	calls := make([]loadCall, n)
	for i := range calls {
		calls[i] = call
	}
	return calls
}

func ccWorkers(realm string) loadWorkers {
	return func(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
		c, auth, path := t.client(hc), t.svcAuth(realm), t.tokenPath(realm)
		form := url.Values{"grant_type": {grantClientCredentials}}
		return same(func(ctx context.Context) (bool, error) {
			_, shed, err := c.do(ctx, http.MethodPost, path, form, auth, http.StatusOK)
			return shed, err
		}, n), nil
	}
}

// introspectWorkers introspect one client-credentials access token.
func introspectWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c, auth := t.client(hc), basicAuth(loadSvcClient, e.svcSecret[loadRealm])
	body, _, err := c.do(ctx, http.MethodPost, tokenPath(loadRealm), url.Values{"grant_type": {grantClientCredentials}}, auth, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var tok loadTokens
	if err := json.Unmarshal(body, &tok); err != nil {
		return nil, err
	}
	form := url.Values{"token": {tok.AccessToken}}
	return same(func(ctx context.Context) (bool, error) {
		body, shed, err := c.do(ctx, http.MethodPost, tokenPath(loadRealm)+"/introspect", form, auth, http.StatusOK)
		if err == nil && !shed && !bytes.Contains(body, []byte(`"active":true`)) {
			err = fmt.Errorf("token not active: %.200s", body)
		}
		return shed, err
	}, n), nil
}

// nhiCCWorkers: the client-credentials grant of the identity, with its
// client secret.
func nhiCCWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c, auth, path := t.client(hc), basicAuth(loadNHIClient, e.nhiSecret), t.tokenPath(loadRealm)
	form := url.Values{"grant_type": {grantClientCredentials}}
	return same(func(ctx context.Context) (bool, error) {
		_, shed, err := c.do(ctx, http.MethodPost, path, form, auth, http.StatusOK)
		return shed, err
	}, n), nil
}

// nhiIntrospectWorkers: a resource server asks about the identity's API
// key, an opaque bearer token.
func nhiIntrospectWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c, auth := t.client(hc), basicAuth(loadSvcClient, e.svcSecret[loadRealm])
	form := url.Values{"token": {e.nhiAPIKey}}
	return same(func(ctx context.Context) (bool, error) {
		body, shed, err := c.do(ctx, http.MethodPost, tokenPath(loadRealm)+"/introspect", form, auth, http.StatusOK)
		if err == nil && !shed && !bytes.Contains(body, []byte(`"active":true`)) {
			err = fmt.Errorf("API key not active: %.200s", body)
		}
		return shed, err
	}, n), nil
}

func userinfoWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c := t.client(hc)
	tok, err := t.passwordTokens(ctx, c, 0, "openid")
	if err != nil {
		return nil, err
	}
	header := http.Header{"Authorization": {"Bearer " + tok.AccessToken}}
	return same(func(ctx context.Context) (bool, error) {
		_, shed, err := c.do(ctx, http.MethodGet, "/realms/"+loadRealm+"/protocol/openid-connect/userinfo", nil, header, http.StatusOK)
		return shed, err
	}, n), nil
}

// refreshWorkers each sign a user in once, then refresh in a loop: every
// refresh rotates the token, so each worker follows its own chain.
func refreshWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c, auth, path := t.client(hc), t.appAuth, t.tokenPath(loadRealm)
	calls := make([]loadCall, n)
	for w := range n {
		tok, err := t.passwordTokens(ctx, c, w%t.users, t.refreshScope)
		if err != nil {
			return nil, err
		}
		if tok.RefreshToken == "" {
			return nil, fmt.Errorf("%s: the sign-in answered no refresh token", t.name)
		}
		token := tok.RefreshToken
		calls[w] = func(ctx context.Context) (bool, error) {
			body, shed, err := c.do(ctx, http.MethodPost, path,
				url.Values{"grant_type": {grantRefreshToken}, "refresh_token": {token}}, auth, http.StatusOK)
			if err != nil || shed {
				return shed, err
			}
			var next loadTokens
			if err := json.Unmarshal(body, &next); err != nil || next.RefreshToken == "" {
				return false, fmt.Errorf("no refresh token in %.200s", body)
			}
			token = next.RefreshToken
			return false, nil
		}
	}
	return calls, nil
}

// passwordWorkers sign random seeded users in.
func passwordWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c, auth, path := t.client(hc), t.appAuth, t.tokenPath(loadRealm)
	return same(func(ctx context.Context) (bool, error) {
		form := url.Values{"grant_type": {grantPassword}, "username": {t.username(rand.IntN(t.users))}, "password": {t.password}}
		if t.scope != "" {
			form.Set("scope", t.scope)
		}
		_, shed, err := c.do(ctx, http.MethodPost, path, form, auth, http.StatusOK)
		return shed, err
	}, n), nil
}

func (e *loadEnv) adminHeader() http.Header { return http.Header{"X-Admin-API-Key": {e.apiKey}} }

// usersPageWorkers list pages of 50 users among the first 10,000.
func usersPageWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c, header := t.client(hc), e.adminHeader()
	pages := max(1, min(e.users, 10_000)/50)
	return same(func(ctx context.Context) (bool, error) {
		path := "/admin/realms/" + loadRealm + "/users?limit=50&skip=" + strconv.Itoa(rand.IntN(pages)*50)
		_, shed, err := c.do(ctx, http.MethodGet, path, nil, header, http.StatusOK)
		return shed, err
	}, n), nil
}

// userLookupWorkers look random users up by exact username.
func userLookupWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	c, header := t.client(hc), e.adminHeader()
	return same(func(ctx context.Context) (bool, error) {
		path := "/admin/realms/" + loadRealm + "/users?exact=true&username=" + loadUsername(rand.IntN(e.users))
		body, shed, err := c.do(ctx, http.MethodGet, path, nil, header, http.StatusOK)
		if err == nil && !shed && !bytes.Contains(body, []byte(`"total":1`)) {
			err = fmt.Errorf("user not found: %.200s", body)
		}
		return shed, err
	}, n), nil
}
