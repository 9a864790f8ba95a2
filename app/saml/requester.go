package saml

import (
	"net/http"
	"net/url"

	"github.com/idenplane/idenplane/app/signin"
)

// requester finishes the sign-ins a service provider's request started
// (through the flow bound to it, or the server's own): the SSO session,
// then back to the SSO endpoint, which answers the request waiting there.
type requester struct{ s *Service }

// Requester is the SAML side of the hosted sign-in (app/signin).
func (s *Service) Requester() signin.Requester { return requester{s} }

func (requester) Kind() signin.RequesterKind { return signin.RequesterSAML }

func (q requester) Finish(w http.ResponseWriter, r *http.Request, f *signin.Flow) error {
	if err := q.s.deps.Land(w, r, f); err != nil {
		return err
	}
	to := q.s.deps.BaseURL + "/realms/" + url.PathEscape(f.Realm.Name) + "/protocol/saml?" + url.Values{"state": {f.RequesterID()}}.Encode()
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}
