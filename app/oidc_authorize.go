package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

const (
	// authRequestLifetime is how long a person has to sign in and consent:
	// Keycloak's login timeout.
	authRequestLifetime = 30 * time.Minute
	// codeLifetime is how long an authorization code may wait for its
	// redemption; it is single use anyway.
	codeLifetime = 60 * time.Second
	// maxAuthParam bounds the free-text parameters stored with a request.
	maxAuthParam = 2048
)

// pkceValue is RFC 7636's syntax of a code verifier and of a challenge.
var pkceValue = validate.MustPattern(`^[A-Za-z0-9._~-]+$`, 43, 128)

var promptValues = []string{oidc.PromptNone, oidc.PromptLogin, oidc.PromptConsent, oidc.PromptSelectAccount}

// authorize is the authorization endpoint, for GET and POST. Until the
// client and its redirect URI are known to be good, a failure is shown as
// a page and the browser goes nowhere; after, failures go back to the
// client's redirect URI with error and state.
func (a *App) authorize(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.authRequest.unreadable")
	}
	client, err := a.authClient(r.Context(), realm, r.Form)
	if err != nil {
		return err
	}
	ar, authErr, err := a.verifyAuthRequest(r.Context(), realm, client, r.Form)
	if err != nil {
		return err
	}
	if authErr != nil {
		return a.authErrorResponse(w, r, ar, authErr)
	}
	a.pages.RememberLocale(w, realm, r.Form.Get("ui_locales"))
	return a.startAuthRequest(w, r, realm, client, ar)
}

// authClient finds the enabled client of a request and checks that its
// redirect_uri is one registered for it, exactly: no prefix, no pattern.
func (a *App) authClient(ctx context.Context, realm *store.Realm, q url.Values) (*store.Client, error) {
	if len(q["client_id"]) != 1 || q.Get("client_id") == "" {
		return nil, badPage("error.authRequest.noClient")
	}
	c, err := a.store.GetClientByClientID(ctx, realm.ID, q.Get("client_id"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, badPage("error.authRequest.unknownClient")
	} else if err != nil {
		return nil, err
	}
	if !c.Enabled {
		return nil, badPage("error.authRequest.unknownClient")
	}
	if len(q["redirect_uri"]) != 1 || q.Get("redirect_uri") == "" {
		return nil, badPage("error.authRequest.noRedirect")
	}
	if !slices.Contains(c.RedirectURIs, q.Get("redirect_uri")) {
		return nil, badPage("error.authRequest.badRedirect")
	}
	return c, nil
}

// verifyAuthRequest checks the rest of a request whose client and
// redirect URI are good, and returns it ready to store. A request the
// client got wrong comes back with the OAuth error to send it; ar then
// holds at least what that answer needs.
func (a *App) verifyAuthRequest(ctx context.Context, realm *store.Realm, client *store.Client, q url.Values) (ar *store.AuthRequest, authErr *oidc.Error, err error) {
	now := a.now()
	ar = &store.AuthRequest{ID: uuid.NewString(), RealmID: realm.ID, ClientID: client.ID,
		RedirectURI: q.Get("redirect_uri"), State: q.Get("state"), ResponseMode: string(oidc.ResponseModeQuery),
		CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(authRequestLifetime).UnixMilli()}
	switch mode := q.Get("response_mode"); mode {
	case "", string(oidc.ResponseModeQuery), string(oidc.ResponseModeFragment), string(oidc.ResponseModeFormPost):
		if mode != "" {
			ar.ResponseMode = mode
		}
	default:
		return ar, oidc.ErrInvalidRequest().WithDescription("response_mode must be query, fragment or form_post"), nil
	}
	// RFC 6749 §3.1: no parameter more than once.
	if name := repeatedParam(q); name != "" {
		return ar, oidc.ErrInvalidRequest().WithDescription("parameter %s is repeated", name), nil
	}
	for _, name := range []string{"state", "nonce", "login_hint"} {
		if len(q.Get(name)) > maxAuthParam {
			return ar, oidc.ErrInvalidRequest().WithDescription("%s is longer than %d characters", name, maxAuthParam), nil
		}
	}
	switch {
	case q.Has("request"):
		return ar, oidc.ErrRequestNotSupported().WithDescription("request objects are not supported"), nil
	case q.Has("request_uri"):
		return ar, (&oidc.Error{ErrorType: "request_uri_not_supported"}).WithDescription("request_uri is not supported"), nil
	case q.Get("response_type") == "":
		return ar, oidc.ErrInvalidRequest().WithDescription("response_type is required"), nil
	case q.Get("response_type") != string(oidc.ResponseTypeCode):
		return ar, (&oidc.Error{ErrorType: "unsupported_response_type"}).WithDescription("only response_type code is supported"), nil
	case !slices.Contains(client.GrantTypes, identity.GrantAuthorizationCode):
		return ar, oidc.ErrUnauthorizedClient().WithDescription("authorization_code is not among this client's grant types"), nil
	}
	ar.ResponseType = string(oidc.ResponseTypeCode)
	if authErr := checkPKCEChallenge(client, q, ar); authErr != nil {
		return ar, authErr, nil
	}
	if authErr := checkPrompt(q, ar); authErr != nil {
		return ar, authErr, nil
	}
	requested := strings.Fields(q.Get("scope"))
	_, err = a.grantScopes(ctx, realm, client, requested)
	var oe *oidc.Error
	if errors.As(err, &oe) {
		return ar, oe, nil
	} else if err != nil {
		return ar, nil, err
	}
	// The request keeps the scopes it named, so that the consent page shows
	// what the application asked for; the client's default scopes join them
	// wherever the grant is resolved (grantScopes).
	for _, name := range requested {
		if !slices.Contains(ar.Scopes, name) {
			ar.Scopes = append(ar.Scopes, name)
		}
	}
	ar.Nonce, ar.LoginHint = q.Get("nonce"), q.Get("login_hint")
	if ar.OrgHint, authErr = orgHintParam(q); authErr != nil { // org_select.go
		return ar, authErr, nil
	}
	return ar, nil, nil
}

// checkPKCEChallenge takes the PKCE challenge of a request: S256 only,
// and required of public clients, which have no secret to prove who they
// are when they redeem the code.
func checkPKCEChallenge(client *store.Client, q url.Values, ar *store.AuthRequest) *oidc.Error {
	challenge, method := q.Get("code_challenge"), q.Get("code_challenge_method")
	switch {
	case challenge == "" && method != "":
		return oidc.ErrInvalidRequest().WithDescription("code_challenge_method without code_challenge")
	case challenge == "" && client.ClientType == identity.ClientPublic:
		return oidc.ErrInvalidRequest().WithDescription("public clients must use PKCE: code_challenge is required")
	case challenge == "":
		return nil
	case method != string(oidc.CodeChallengeMethodS256):
		// An absent method means plain (RFC 7636 §4.3), refused like any other.
		return oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	case !pkceValue.MatchString(challenge):
		return oidc.ErrInvalidRequest().WithDescription("code_challenge is malformed")
	}
	ar.CodeChallenge, ar.CodeChallengeMethod = challenge, method
	return nil
}

// checkPKCEVerifier checks a code verifier against the request's
// challenge, in constant time. A verifier without a challenge is refused
// too: the client believes it is protected when it is not.
func checkPKCEVerifier(ar *store.AuthRequest, verifier string) *oidc.Error {
	switch {
	case ar.CodeChallenge == "" && verifier == "":
		return nil
	case ar.CodeChallenge == "":
		return oidc.ErrInvalidGrant().WithDescription("code_verifier sent, but the authorization request had no code_challenge")
	case verifier == "":
		return oidc.ErrInvalidGrant().WithDescription("code_verifier is required")
	}
	sum := sha256.Sum256([]byte(verifier))
	computed := base64.RawURLEncoding.EncodeToString(sum[:])
	if !pkceValue.MatchString(verifier) || subtle.ConstantTimeCompare([]byte(computed), []byte(ar.CodeChallenge)) != 1 {
		return oidc.ErrInvalidGrant().WithDescription("code_verifier does not match the code_challenge")
	}
	return nil
}

// checkPrompt takes prompt and max_age (OpenID Connect Core §3.1.2.1).
func checkPrompt(q url.Values, ar *store.AuthRequest) *oidc.Error {
	ar.Prompt = strings.Fields(q.Get("prompt"))
	for _, p := range ar.Prompt {
		if !slices.Contains(promptValues, p) {
			return oidc.ErrInvalidRequest().WithDescription("prompt %q is not supported", p)
		}
	}
	if slices.Contains(ar.Prompt, oidc.PromptNone) && len(ar.Prompt) > 1 {
		return oidc.ErrInvalidRequest().WithDescription("prompt none cannot be combined with other values")
	}
	if q.Has("max_age") {
		maxAge, err := strconv.Atoi(q.Get("max_age"))
		if err != nil || maxAge < 0 {
			return oidc.ErrInvalidRequest().WithDescription("max_age must be a number of seconds")
		}
		ar.MaxAge = &maxAge
	}
	return nil
}

// startAuthRequest answers a valid request: straight back with a code
// when the browser's SSO session will do and no consent is needed; to the
// login page or the consent page otherwise; or, with prompt=none, with
// the error saying which of them would have been needed.
func (a *App) startAuthRequest(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest) error {
	ctx := r.Context()
	sso, user, err := a.ssoSession(r, realm)
	if err != nil {
		return err
	}
	silent := slices.Contains(ar.Prompt, oidc.PromptNone)
	now := a.now()
	// A password that must change (asked for, or expired) is changed at
	// the next sign-in, even one the SSO session would have spared.
	login := sso == nil || mustLogin(ar, sso, now.UnixMilli()) || identity.PasswordChangeRequired(realm, user, now)
	stepUp := "" // the second factor a session at acr 1 still owes: acr.go
	if !login {
		if stepUp, login, err = a.ssoShortfall(ctx, realm, user, sso); err != nil {
			return err
		}
	}
	if login || stepUp != "" {
		if silent {
			return a.authErrorResponse(w, r, ar, oidc.ErrLoginRequired().WithDescription("the user must sign in"))
		}
		if err := a.store.CreateAuthRequest(ctx, ar); err != nil {
			return err
		}
		if stepUp != "" {
			return beginStepUp(a, w, r, realm, client, ar, user, sso) // step_up_browser.go
		}
		to, err := a.signInURL(w, r, realm, client, ar)
		if err != nil {
			return err
		}
		http.Redirect(w, r, to, redirectStatus(r))
		return nil
	}
	ar.UserID, ar.SessionID, ar.AuthTime, ar.AMR = user.ID, sso.ID, sso.AuthTime, sso.AMR
	if asked, err := a.ssoOrgStep(w, r, realm, client, sso, ar, silent); asked || err != nil { // org_select.go
		return err
	}
	consent, err := a.needsConsent(ctx, realm, client, user.ID, ar)
	if err != nil {
		return err
	}
	if consent {
		if silent {
			return a.authErrorResponse(w, r, ar, (&oidc.Error{ErrorType: "consent_required"}).WithDescription("the user must consent"))
		}
		if err := a.saveSSORequest(ctx, realm, sso, ar); err != nil {
			return err
		}
		http.Redirect(w, r, consentURL(a.issuer(realm), ar.ID), redirectStatus(r))
		return nil
	}
	code := randomToken()
	ar.Done, ar.CodeHash, ar.ExpiresAt = true, store.HashToken(code), a.now().Add(codeLifetime).UnixMilli()
	if err := a.saveSSORequest(ctx, realm, sso, ar); err != nil {
		return err
	}
	return a.authResponse(w, r, ar, url.Values{"code": {code}})
}

// saveSSORequest stores a request the SSO session answered, and records
// the use of the session, which restarts its idle time.
func (a *App) saveSSORequest(ctx context.Context, realm *store.Realm, sso *store.Session, ar *store.AuthRequest) error {
	now := a.now().UnixMilli()
	err := a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.TouchSession(ctx, realm.ID, sso.ID, now, ssoExpiry(realm, sso, now)); err != nil {
			return err
		}
		return tx.CreateAuthRequest(ctx, ar)
	})
	if errors.Is(err, store.ErrNotFound) {
		return errSessionEnded // ended since it was read
	}
	return err
}

var errSessionEnded = badPage("error.sessionEnded")

// mustLogin says whether the user must sign in again although the
// browser has an SSO session: the client asked for it, or the last
// sign-in is older than its max_age.
func mustLogin(ar *store.AuthRequest, sso *store.Session, now int64) bool {
	if slices.Contains(ar.Prompt, oidc.PromptLogin) {
		return true
	}
	return ar.MaxAge != nil && sso.AuthTime+int64(*ar.MaxAge)*1000 < now
}

// needsConsent says whether the consent page must be shown: the client
// asks for it with prompt=consent, or it requires consent and the user's
// stored consent does not cover every scope of the grant, its default
// scopes included.
func (a *App) needsConsent(ctx context.Context, realm *store.Realm, client *store.Client, userID string, ar *store.AuthRequest) (bool, error) {
	if slices.Contains(ar.Prompt, oidc.PromptConsent) {
		return true, nil
	}
	if !client.RequireConsent {
		return false, nil
	}
	scopes, err := a.grantScopes(ctx, realm, client, ar.Scopes)
	var oe *oidc.Error
	if errors.As(err, &oe) {
		return true, nil // a scope taken from the client meanwhile: the consent page answers it
	} else if err != nil {
		return false, err
	}
	return a.lacksConsent(ctx, client, userID, scopeNames(scopes))
}

// lacksConsent says whether the user's stored consent to client leaves
// out any of scopes.
func (a *App) lacksConsent(ctx context.Context, client *store.Client, userID string, scopes []string) (bool, error) {
	c, err := a.store.GetConsent(ctx, userID, client.ID)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	for _, s := range scopes {
		if !slices.Contains(c.Scopes, s) {
			return true, nil
		}
	}
	return false, nil
}

// issueCode ends an authenticated request with its code, sent back to the
// client. also, if not nil, writes more in the same transaction.
func (a *App) issueCode(w http.ResponseWriter, r *http.Request, realm *store.Realm, ar *store.AuthRequest, also func(tx *store.Store) error) error {
	code := randomToken()
	now := a.now()
	err := a.store.Tx(r.Context(), func(tx *store.Store) error {
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		return tx.IssueAuthCode(r.Context(), realm.ID, ar.ID, store.HashToken(code), now.UnixMilli(), now.Add(codeLifetime).UnixMilli())
	})
	if errors.Is(err, store.ErrNotFound) {
		return errStaleAuthRequest // answered or expired meanwhile
	} else if err != nil {
		return err
	}
	return a.authResponse(w, r, ar, url.Values{"code": {code}})
}

func (a *App) authErrorResponse(w http.ResponseWriter, r *http.Request, ar *store.AuthRequest, e *oidc.Error) error {
	params := url.Values{"error": {string(e.ErrorType)}}
	if e.Description != "" {
		params.Set("error_description", e.Description)
	}
	return a.authResponse(w, r, ar, params)
}

// authResponse sends an authorization response, with the request's state,
// to its redirect URI in its response mode.
func (a *App) authResponse(w http.ResponseWriter, r *http.Request, ar *store.AuthRequest, params url.Values) error {
	if ar.State != "" {
		params.Set("state", ar.State)
	}
	u, err := url.Parse(ar.RedirectURI)
	if err != nil {
		return err // registered URIs are validated: this cannot happen
	}
	switch ar.ResponseMode {
	case string(oidc.ResponseModeFormPost):
		return a.formPostResponse(w, r, u, params)
	case string(oidc.ResponseModeFragment):
		u.Fragment = params.Encode()
	default:
		q := u.Query()
		for k, v := range params {
			q[k] = v
		}
		u.RawQuery = q.Encode()
	}
	http.Redirect(w, r, u.String(), redirectStatus(r))
	return nil
}

// formPostScriptHash admits the form_post page's one script.
var formPostScriptHash = func() string {
	sum := sha256.Sum256([]byte(ui.FormPostScript))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// formPostCSP is the form_post page's policy: its one script, the
// realm's style, and no form-action: the application's answer to the post
// may redirect on to origins of its own (or, for a broker, to its own
// application), which browsers would hold to form-action as they follow
// it. Nothing of the redirect URI enters the policy.
func formPostCSP(nonce string) string {
	return "default-src 'none'; script-src " + formPostScriptHash + "; style-src 'self' 'nonce-" + nonce +
		"'; img-src 'self' data: https:; base-uri 'none'; frame-ancestors 'none'"
}

// formPostResponse renders the page that POSTs the response to the
// redirect URI.
func (a *App) formPostResponse(w http.ResponseWriter, r *http.Request, redirect *url.URL, params url.Values) error {
	names := slices.Sorted(maps.Keys(params))
	fields := make([]ui.FormPostParam, len(names))
	for i, k := range names {
		fields[i] = ui.FormPostParam{Name: k, Value: params.Get(k)}
	}
	ctx, nonce := a.pages.Context(r)
	w.Header().Set("Content-Security-Policy", formPostCSP(nonce))
	return signin.Write(ctx, w, http.StatusOK, ui.FormPost(a.pages.Page("page.formPost.title"), redirect.String(), fields))
}

// redirectStatus is 303 after a POST, so the browser follows with a GET,
// and 302 otherwise.
func redirectStatus(r *http.Request) int {
	if r.Method == http.MethodPost {
		return http.StatusSeeOther
	}
	return http.StatusFound
}

func consentURL(issuer, authRequestID string) string {
	return issuer + pathConsent + "?authRequestID=" + url.QueryEscape(authRequestID)
}

func scopeNames(scopes []*store.ClientScope) []string {
	names := make([]string, len(scopes))
	for i, sc := range scopes {
		names[i] = sc.Name
	}
	return names
}
