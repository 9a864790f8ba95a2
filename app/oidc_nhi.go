package app

import (
	"net/http"
	"slices"
	"strings"

	"context"
	"errors"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Non-human identities at the token endpoint. An identity's backing
// client authenticates only with the identity's own credentials, which the
// identity core checks (docs/nhi.md): a client secret or API key as the
// client secret, or a client assertion signed by one of its keys
// (private_key_jwt, RFC 7523). Any refusal is the one invalid_client.

// nhiUse is an identity that authenticated, and with which credential.
type nhiUse struct {
	n    *store.NHI
	cred *store.NHICredential
}

// authenticateNHI checks the secret of a client that backs an identity;
// it answers nil for a client that backs none, which the caller checks as
// any other client.
func (a *App) authenticateNHI(ctx context.Context, c *store.Client, secret string) (*nhiUse, error) {
	n, err := a.clientNHI(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	cred, err := a.id.CheckNHISecret(ctx, n, secret)
	if err := a.nhiRefusal(ctx, n, err); err != nil {
		return nil, err
	}
	return &nhiUse{n: n, cred: cred}, nil
}

// authenticateAssertion authenticates the client a client assertion comes
// from; clientID, when the form names one too, must be that client.
func (a *App) authenticateAssertion(ctx context.Context, realm *store.Realm, clientID, assertion string) (*store.Client, *nhiUse, error) {
	tok, sub, refused := identity.AssertionSubject(assertion)
	if refused == nil && clientID != "" && clientID != sub {
		refused = &identity.ErrBadAssertion{Reason: "client_id is not the assertion's sub"}
	}
	if sub == "" {
		a.log.InfoContext(ctx, "client assertion refused", "realm", realm.Name, "client", clientID, "err", refused)
		return nil, nil, errClientAuth
	}
	c, err := a.cachedClient(ctx, realm.ID, sub)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errClientAuth
	} else if err != nil {
		return nil, nil, err
	}
	if !c.Enabled {
		return nil, nil, errClientAuth
	}
	n, err := a.clientNHI(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errClientAuth // only identities hold keys
	} else if err != nil {
		return nil, nil, err
	}
	if refused != nil {
		// Refused before any key was tried, recorded against the identity
		// the assertion names.
		return nil, nil, a.nhiRefusal(ctx, n, refused)
	}
	iss := a.issuer(realm)
	cred, err := a.id.CheckClientAssertion(ctx, n, tok, []string{iss, oidcEndpoints.Token.Absolute(iss)})
	if err := a.nhiRefusal(ctx, n, err); err != nil {
		return nil, nil, err
	}
	return c, &nhiUse{n: n, cred: cred}, nil
}

// nhiRefusal is err as the token endpoint answers it: a refusal of the
// identity's credentials or state is the one invalid_client, logged with
// its reason; a fault stays a fault.
func (a *App) nhiRefusal(ctx context.Context, n *store.NHI, err error) error {
	var bad *identity.ErrBadAssertion
	switch {
	case err == nil:
		return nil
	case errors.Is(err, identity.ErrNHIInactive), errors.Is(err, identity.ErrBadCredentials), errors.As(err, &bad):
		a.log.InfoContext(ctx, "identity authentication refused", "identity", n.Name, "state", n.State, "err", err)
		if err := a.id.RecordNHIRefusal(ctx, n, identityActor(ctx, n), err.Error()); err != nil {
			a.log.ErrorContext(ctx, "refusal of an identity not recorded", "identity", n.ID, "err", err)
		}
		return errClientAuth
	}
	return err
}

// assertionAlgorithms are the algorithms discovery advertises for client
// assertions.
func assertionAlgorithms() []string {
	out := make([]string, len(identity.AssertionAlgorithms))
	for i, alg := range identity.AssertionAlgorithms {
		out[i] = string(alg)
	}
	return out
}

// checkCredentialScopes refuses a scope outside those an API key is
// limited to; a key without scopes, and every other credential, asks for
// what the client may.
func checkCredentialScopes(cred *store.NHICredential, requested []string) error {
	if cred == nil || len(cred.Scopes) == 0 {
		return nil
	}
	for _, sc := range requested {
		if sc != "" && !slices.Contains(cred.Scopes, sc) {
			return oidc.ErrInvalidScope().WithDescription("scope %s is not among this API key's scopes", sc)
		}
	}
	return nil
}

// adminActor is the caller of an admin request as the identities' audit
// log records it.
func (a *App) adminActor(r *http.Request) identity.Actor {
	act := identity.Actor{IP: a.clientIP(r)}
	if p := principalFrom(r.Context()); p != nil {
		act.Type, act.ID, act.Name = p.Kind, p.UserID, p.Username
	}
	return act
}

// identityActor is an identity acting itself at a protocol endpoint.
func identityActor(ctx context.Context, n *store.NHI) identity.Actor {
	return identity.Actor{Type: identity.ActorIdentity, ID: n.ID, Name: n.Name, IP: clientIPFrom(ctx)}
}

// recordNHIUse records a use of an identity's credential; u counts what
// it got. The record is not what the request is for: a failure to write
// it is logged, and the request goes on.
// actor is who used it, the identity itself unless given.
func (a *App) recordNHIUse(ctx context.Context, use *nhiUse, u store.NHIUsage, actor ...identity.Actor) {
	details := use.cred.Type
	if use.cred.KeyID != "" {
		details += " " + use.cred.KeyID
	}
	who := identityActor(ctx, use.n)
	if len(actor) > 0 {
		who = actor[0]
		details += ", introspected"
	}
	if err := a.id.RecordNHIUse(ctx, use.n, use.cred, u, who, details); err != nil {
		a.log.ErrorContext(ctx, "use of an identity not recorded", "identity", use.n.ID, "err", err)
	}
}

// introspectAPIKey answers for an API key sent to introspection as an
// opaque bearer token (RFC 7662): active while the key and its identity
// are, with the identity's service-account user as sub, the key's scopes
// and the user's roles; nil for anything else.
func (a *App) introspectAPIKey(ctx context.Context, realm *store.Realm, rs *store.Client, key string) (map[string]any, error) {
	n, cred, err := a.id.CheckAPIKey(ctx, realm.ID, key)
	if errors.Is(err, identity.ErrBadCredentials) || errors.Is(err, identity.ErrNHIInactive) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	user, err := a.serviceAccountUser(ctx, n.ClientID)
	if errors.Is(err, store.ErrNotFound) || err == nil && !user.Enabled {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	roles, err := a.effectiveRoles(ctx, user.ID)
	if err != nil {
		return nil, err
	}
	realmRoles, clientRoles := []string{}, map[string]any{}
	for _, r := range roles {
		if r.ClientID == "" {
			realmRoles = append(realmRoles, r.Name)
			continue
		}
		cr, _ := clientRoles[r.ClientClientID].(map[string]any)
		if cr == nil {
			cr = map[string]any{"roles": []string{}}
			clientRoles[r.ClientClientID] = cr
		}
		cr["roles"] = append(cr["roles"].([]string), r.Name)
	}
	out := map[string]any{
		"active": true, "token_type": "api_key", "iss": a.issuer(realm), "sub": user.ID, "username": user.Username,
		"client_id": n.Name, "azp": n.Name, "scope": strings.Join(cred.Scopes, " "), "iat": cred.CreatedAt / 1000,
		"realm_access": map[string]any{"roles": realmRoles}, "resource_access": clientRoles,
	}
	if cred.ExpiresAt != 0 {
		out["exp"] = cred.ExpiresAt / 1000
	}
	a.recordNHIUse(ctx, &nhiUse{n: n, cred: cred}, store.NHIUsage{Introspections: 1},
		identity.Actor{Type: "client", ID: rs.ClientID, IP: clientIPFrom(ctx)})
	return out, nil
}

func clientIPFrom(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPCtxKey{}).(string)
	return ip
}
