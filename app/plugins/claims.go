package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/idenplane/idenplane/store"
)

// ProtectedClaims are the claims the issuer alone writes: a plugin's of
// these names are dropped.
var ProtectedClaims = []string{"sub", "iss", "aud", "exp", "iat", "nbf", "jti", "azp", "auth_time", "nonce", "acr", "amr",
	"sid", "typ", "scope", "client_id", "at_hash", "c_hash", "s_hash", "session_state", "cnf", "act", "credential_id"}

// Token types, as the claims hook's input names them.
const (
	AccessToken = "access"
	IDToken     = "id"
)

// ClaimsRequest is the token a claims hook is asked about.
type ClaimsRequest struct {
	Realm     *store.Realm
	ClientID  string
	User      *store.User
	Roles     []string // effective: realm roles by name, client roles as "clientId/role"
	Scopes    []string
	TokenType string // AccessToken or IDToken
}

// claimsInput is the claims hook's input (docs/plugins.md).
type claimsInput struct {
	Realm     string    `json:"realm"`
	Client    string    `json:"client"`
	User      userInput `json:"user"`
	Scopes    []string  `json:"scopes"`
	TokenType string    `json:"tokenType"`
}

type userInput struct {
	ID         string            `json:"id"`
	Username   string            `json:"username"`
	Email      string            `json:"email,omitempty"`
	Attributes map[string]string `json:"attributes"`
	Roles      []string          `json:"roles"`
}

// claimsOutput is what a claims hook answers.
type claimsOutput struct {
	Claims map[string]any `json:"claims"`
}

// AddClaims runs the enabled claims hooks for a token and adds what they
// answer to claims: never a protected claim nor one the token already
// has (the first plugin by name wins a name two add). A hook that fails is
// turned off and the token goes out without its claims: a plugin never
// stops the server issuing tokens.
func (s *Service) AddClaims(ctx context.Context, req ClaimsRequest, claims map[string]any) {
	if s == nil {
		return
	}
	ps := s.running(HookClaims)
	if len(ps) == 0 {
		return
	}
	user, err := s.userInput(ctx, req.User, req.Roles)
	if err != nil {
		s.deps.Log.Error("reading a user for the claims plugins failed", "err", err)
		return
	}
	input, err := json.Marshal(claimsInput{Realm: req.Realm.Name, Client: req.ClientID, User: user,
		Scopes: nonNil(req.Scopes), TokenType: req.TokenType})
	if err != nil {
		s.deps.Log.Error("claims plugins' input", "err", err)
		return
	}
	for _, p := range ps {
		out, err := s.call(ctx, p, HookClaims, req.Realm, input, false)
		if err != nil {
			continue
		}
		var o claimsOutput
		if err := json.Unmarshal(out, &o); err != nil {
			s.fail(ctx, p, HookClaims, req.Realm, fmt.Errorf("plugin %s, hook claims: unreadable output: %w", p.name, err))
			continue
		}
		for k, v := range o.Claims {
			if _, taken := claims[k]; taken || k == "" || slices.Contains(ProtectedClaims, k) {
				continue
			}
			claims[k] = v
		}
	}
}

// userInput is what hooks see of a user: its attributes from the store.
func (s *Service) userInput(ctx context.Context, u *store.User, roles []string) (userInput, error) {
	attrs, err := s.deps.Store.UserAttributes(ctx, u.ID)
	if err != nil {
		return userInput{}, err
	}
	if attrs == nil {
		attrs = map[string]string{}
	}
	return userInput{ID: u.ID, Username: u.Username, Email: u.Email, Attributes: attrs, Roles: nonNil(roles)}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
