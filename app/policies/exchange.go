package policies

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// The rules of the token endpoint's token exchange (RFC 8693), written as
// the realm's policies of resource type token-exchange: the grant asks,
// in turn, whether the client may exchange the subject's token at all,
// for each audience it asks for, and for each scope the new token would
// carry. The first request denied refuses the exchange, with the OAuth
// error of its stage.

// The actions of a token exchange's requests.
const (
	// ActionExchange: may the client exchange the subject's token (with
	// the actor, if any)? resource.id is the client's clientId.
	ActionExchange = "exchange"
	// ActionAudience: may the new token be for this audience?
	// resource.id is the audience (a clientId of the realm).
	ActionAudience = "audience"
	// ActionScope: may the new token carry this scope? resource.id is
	// the scope.
	ActionScope = "scope"
)

// Exchange is a token exchange the token endpoint is asked for.
type Exchange struct {
	Client        string   // the clientId of the client that asks
	SubjectUserID string   // the subject token's user (sub)
	SubjectClient string   // the clientId the subject token was issued to (azp)
	Audiences     []string // the audiences asked for; none: the client itself
	Scopes        []string // the scopes the new token would carry
	Actor         string   // the actor token's subject (sub), "" without one
	ActorClient   string   // the clientId the actor token was issued to
	Delegation    bool     // an actor token is given
}

// ExchangeRefusal says which request of an exchange the policies denied.
type ExchangeRefusal struct {
	Action   string // ActionExchange, ActionAudience or ActionScope
	Item     string // the clientId, audience or scope denied
	Decision *Decision
}

// DecideExchange asks the realm's policies about an exchange: nil when
// they permit every request of it, else the first denied. Each request's
// subject is the subject token's user; resource.properties carry the
// whole exchange (client, subjectClient, audiences, scopes, actor,
// actorClient, delegation), so that one policy may judge all three
// stages.
func (s *Service) DecideExchange(ctx context.Context, realm *store.Realm, x Exchange, f Facts) (*ExchangeRefusal, error) {
	props := map[string]any{"client": x.Client, "subjectClient": x.SubjectClient, "audiences": toAny(x.Audiences),
		"scopes": toAny(x.Scopes), "actor": x.Actor, "actorClient": x.ActorClient, "delegation": x.Delegation}
	subject := &Subject{Type: SubjectUser, ID: x.SubjectUserID}
	ask := func(action, item string) (*ExchangeRefusal, error) {
		q := &Request{Subject: subject, Action: &Action{Name: action},
			Resource: &Resource{Type: ResourceTokenExchange, ID: item, Properties: props}}
		d, err := s.Decide(ctx, realm, q, f)
		if err != nil || d.Permitted() {
			return nil, err
		}
		return &ExchangeRefusal{Action: action, Item: item, Decision: d}, nil
	}
	if r, err := ask(ActionExchange, x.Client); r != nil || err != nil {
		return r, err
	}
	for _, aud := range x.Audiences {
		if r, err := ask(ActionAudience, aud); r != nil || err != nil {
			return r, err
		}
	}
	for _, sc := range x.Scopes {
		if r, err := ask(ActionScope, sc); r != nil || err != nil {
			return r, err
		}
	}
	return nil, nil
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out
}
