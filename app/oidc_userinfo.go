package app

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/mux"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// errInvalidToken is every refused userinfo token, 401 as RFC 6750 §3.1
// says: the caller learns nothing about why.
var errInvalidToken = op.NewStatusError(&oidc.Error{ErrorType: "invalid_token",
	Description: "the access token is invalid, expired or revoked"}, http.StatusUnauthorized)

// UserInfo answers with the claims of the token's user that the scope
// mappers put in userinfo, for the scopes the token was granted. The
// library reads the token from the Bearer header or the access_token form
// field.
func (s *oidcServer) UserInfo(ctx context.Context, r *op.Request[oidc.UserInfoRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	realm := signin.RealmFrom(ctx)
	claims, err := s.a.verifyAccessToken(ctx, realm, r.Data.AccessToken)
	if err != nil {
		return nil, errInvalidToken
	}
	sub, _ := claims["sub"].(string)
	azp, _ := claims["azp"].(string)
	scope, _ := claims["scope"].(string)
	user, err := s.a.store.GetUser(ctx, realm.ID, sub)
	if errors.Is(err, store.ErrNotFound) || err == nil && !user.Enabled {
		return nil, errInvalidToken
	} else if err != nil {
		return nil, err
	}
	client, err := s.a.cachedClient(ctx, realm.ID, azp)
	if errors.Is(err, store.ErrNotFound) || err == nil && !client.Enabled {
		return nil, errInvalidToken
	} else if err != nil {
		return nil, err
	}
	granted, err := s.a.tokenScopes(ctx, realm, client, strings.Fields(scope))
	if err != nil {
		return nil, err
	}
	out, err := s.a.claimsFor(ctx, &tokenGrant{realm: realm, client: client, user: user, scopes: granted,
		org: tokenOrgChoice(claims, granted)}, scopes.UserinfoResponse) // org_select.go
	if err != nil {
		return nil, err
	}
	out["sub"] = user.ID
	if act, ok := claims["act"]; ok { // an impersonation's token says who acts
		out["act"] = act
	}
	resp := op.NewResponse(out)
	resp.Header.Set("Cache-Control", "no-store")
	return resp, nil
}

// tokenScopes finds the scopes a token names among those still assigned to
// its client: a scope unassigned since the token was issued no longer
// releases claims.
func (a *App) tokenScopes(ctx context.Context, realm *store.Realm, c *store.Client, names []string) ([]*store.ClientScope, error) {
	var out []*store.ClientScope
	for _, kind := range []string{store.ScopeDefault, store.ScopeOptional} {
		linked, err := a.linkedScopes(ctx, realm.ID, c.ID, kind)
		if err != nil {
			return nil, err
		}
		for _, sc := range linked {
			if slices.Contains(names, sc.Name) {
				out = append(out, sc)
			}
		}
	}
	return out, nil
}

// bearerChallenge adds RFC 6750 §3's WWW-Authenticate challenge to the
// 401 answers of a Bearer-protected endpoint: with error="invalid_token"
// when a token came and was refused, bare when none came (§3.1).
func bearerChallenge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Parsed here, before the handler consumes the body, to see whether
		// the token came in the form.
		_ = r.ParseForm()
		presented := r.Form.Get("access_token") != ""
		if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && token != "" {
			presented = true
		}
		challenge := `Bearer realm="` + mux.Vars(r)["realm"] + `"`
		if presented {
			challenge += `, error="invalid_token"`
		}
		next.ServeHTTP(&bearerWriter{ResponseWriter: w, challenge: challenge}, r)
	})
}

type bearerWriter struct {
	http.ResponseWriter
	challenge string
}

// WriteHeader replaces any other challenge (the protocol routes add a
// Basic one for client authentication) with the Bearer one.
func (w *bearerWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", w.challenge)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *bearerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
