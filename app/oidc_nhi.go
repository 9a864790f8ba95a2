package app

import (
	"net/http"
	"slices"

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
	n, err := a.store.GetNHIByClient(ctx, c.ID)
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
	tok, sub, err := identity.AssertionSubject(assertion)
	if err != nil || (clientID != "" && clientID != sub) {
		a.log.InfoContext(ctx, "client assertion refused", "realm", realm.Name, "client", clientID, "err", err)
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
	n, err := a.store.GetNHIByClient(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errClientAuth // only identities hold keys
	} else if err != nil {
		return nil, nil, err
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
	ip, _ := ctx.Value(clientIPCtxKey{}).(string)
	return identity.Actor{Type: identity.ActorIdentity, ID: n.ID, Name: n.Name, IP: ip}
}

// recordNHIUse records a use of an identity's credential; u counts what
// it got. The record is not what the request is for: a failure to write
// it is logged, and the request goes on.
func (a *App) recordNHIUse(ctx context.Context, use *nhiUse, u store.NHIUsage) {
	details := use.cred.Type
	if use.cred.KeyID != "" {
		details += " " + use.cred.KeyID
	}
	if err := a.id.RecordNHIUse(ctx, use.n, use.cred, u, identityActor(ctx, use.n), details); err != nil {
		a.log.ErrorContext(ctx, "use of an identity not recorded", "identity", use.n.ID, "err", err)
	}
}
