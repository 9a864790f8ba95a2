package authflows

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// AssignBody is the body of assign-client; none binds the browser
// sign-ins.
type AssignBody struct {
	Usage signin.Usage `json:"usage"`
}

// maxAssignBody bounds what assign-client reads of a body that holds one
// short field.
const maxAssignBody = 4096

// clientNames lists the clients of bindings for a message: "web
// (browser), https://sp.test (browser)".
func clientNames(bound []*store.FlowBinding) string {
	names := make([]string, len(bound))
	for i, b := range bound {
		names[i] = fmt.Sprintf("%s (%s)", b.ClientName, b.Usage)
	}
	return strings.Join(names, ", ")
}

// checkBinding refuses a binding the sign-in could not follow: a usage
// other than the three a client's sign-ins have, the password grant or
// device approval of a service provider (SAML has neither), a flow
// written for other sign-ins,
// or one the sign-in does not run yet or cannot run on this server
// (signin.CanFollow, told whether WebAuthn can). field prefixes the fields
// it names ("" in the API, "authFlows[0].clients[1]." in an import).
func checkBinding(field, kind string, usage signin.Usage, d *signin.Definition, webAuthn bool) error {
	flowAlias, flowUsage := d.Alias, d.Usage
	switch {
	case usage != signin.UsageBrowser && usage != signin.UsageDirectGrant && usage != signin.UsageDevice:
		return apperr.Field(field+"usage", "must be %s, %s or %s, not %q", signin.UsageBrowser, signin.UsageDirectGrant, signin.UsageDevice, usage)
	case kind == store.ClientKindSAML && usage != signin.UsageBrowser:
		return apperr.Field(field+"usage", "a SAML service provider has no password grant and no device codes: only its %s sign-ins follow a flow", signin.UsageBrowser)
	case usage != flowUsage:
		return apperr.Field(field+"usage", "flow %s is a %s flow, which %s sign-ins cannot follow", flowAlias, flowUsage, usage)
	}
	return signin.CanFollow(field, kind, usage, d, webAuthn)
}

// AssignClient answers PUT .../auth-flows/{id}/assign-client/{clientId}:
// the client's sign-ins of the body's usage follow the flow from now on,
// instead of the flow they followed. {clientId} is an OpenID Connect
// client's clientId, else a SAML service provider's entity ID, else its
// ID.
func (s *Service) AssignClient(w http.ResponseWriter, r *http.Request) error {
	realm, f, err := s.flow(r)
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxAssignBody+1))
	if err != nil {
		return apperr.InvalidJSON("could not read request body")
	}
	if len(raw) > maxAssignBody {
		return apperr.New(http.StatusRequestEntityTooLarge, apperr.CodePayloadTooLarge, "the body is larger than %d bytes", maxAssignBody)
	}
	body := AssignBody{Usage: signin.UsageBrowser}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := httpx.StrictUnmarshal(raw, &body); err != nil {
			return err
		}
	}
	ctx := r.Context()
	name := mux.Vars(r)["clientId"]
	b := &store.FlowBinding{RealmID: realm.ID, Usage: string(body.Usage), FlowID: f.ID}
	if c, err := s.deps.Store.GetClientByClientID(ctx, realm.ID, name); err == nil {
		b.ClientKind, b.ClientID = store.ClientKindOIDC, c.ID
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	} else if sp, err := s.serviceProvider(r, realm.ID, name); err != nil {
		return err
	} else {
		b.ClientKind, b.ClientID = store.ClientKindSAML, sp.ID
	}
	def, err := signin.DefinitionOf(f)
	if err != nil {
		return err
	}
	if err := checkBinding("", b.ClientKind, body.Usage, def, s.deps.WebAuthn); err != nil {
		return err
	}
	if err := s.deps.Store.BindFlow(ctx, b); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			// The client or the flow went meanwhile.
			return apperr.NotFound("client " + name)
		}
		return err
	}
	return httpx.NoContent(w)
}

// serviceProvider finds the realm's SAML service provider by entity ID,
// else by ID. The router decodes a path once and refuses a segment that
// decodes to "/", which most entity IDs hold, so an entity ID may come
// escaped twice: name is then still escaped once.
func (s *Service) serviceProvider(r *http.Request, realmID, name string) (*store.SAMLServiceProvider, error) {
	sp, err := s.deps.Store.GetSAMLServiceProviderByEntityID(r.Context(), realmID, name)
	if unescaped, uerr := url.PathUnescape(name); errors.Is(err, store.ErrNotFound) && uerr == nil && unescaped != name {
		sp, err = s.deps.Store.GetSAMLServiceProviderByEntityID(r.Context(), realmID, unescaped)
	}
	if errors.Is(err, store.ErrNotFound) {
		sp, err = s.deps.Store.GetSAMLServiceProvider(r.Context(), realmID, name)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.NotFound("client or SAML service provider " + name)
	}
	return sp, err
}
