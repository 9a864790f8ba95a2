package orgs

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// ChallengePrefix is the label under which a domain publishes the TXT
// record that proves an organization controls it.
const ChallengePrefix = "_idenplane-challenge."

// lookupTimeout bounds the DNS lookup of one verification.
const lookupTimeout = 10 * time.Second

// DomainChallengeRep is the TXT record to publish.
type DomainChallengeRep struct {
	Domain      string `json:"domain"`
	RecordName  string `json:"recordName"`
	RecordType  string `json:"recordType"`
	RecordValue string `json:"recordValue"`
	Verified    bool   `json:"verified"`
}

// DomainBody is the body of both verify-domain endpoints.
type DomainBody struct {
	Domain *string `json:"domain"`
}

// bodyDomain reads the domain a body names and finds it among the
// organization's: a domain it does not list is a 404 at domain.
func bodyDomain(r *http.Request, o *store.Organization) (store.OrgDomain, error) {
	var body DomainBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return store.OrgDomain{}, err
	}
	if body.Domain == nil {
		return store.OrgDomain{}, apperr.Field("domain", "is required")
	}
	name, err := NormalizeDomain("domain", *body.Domain)
	if err != nil {
		return store.OrgDomain{}, err
	}
	i := slices.IndexFunc(o.Domains, func(d store.OrgDomain) bool { return d.Name == name })
	if i < 0 {
		return store.OrgDomain{}, &apperr.Error{Status: http.StatusNotFound, Code: apperr.CodeNotFound, Field: "domain",
			Message: "domain: " + name + " is not a domain of organization " + o.Slug + ": add it to its domains first"}
	}
	return o.Domains[i], nil
}

func errDomainClaimed(name string, cause error) error {
	return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "domain",
		Message: name + " is verified by another organization of the realm", Cause: cause}
}

// InitiateDomainVerification answers POST .../verify-domain/initiate: a new
// random value for the domain to publish as a TXT record at
// _idenplane-challenge.<domain>. A domain verified already stays verified.
func (s *Service) InitiateDomainVerification(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	d, err := bodyDomain(r, o)
	if err != nil {
		return err
	}
	value := "idenplane-verification=" + newToken()
	if err := s.deps.Store.SetDomainChallenge(r.Context(), o.ID, d.Name, value, s.deps.Now().UnixMilli()); err != nil {
		return err
	}
	return httpx.OK(w, DomainChallengeRep{Domain: d.Name, RecordName: ChallengePrefix + d.Name, RecordType: "TXT",
		RecordValue: value, Verified: d.Verified})
}

// VerifyDomain answers POST .../verify-domain: it looks up the TXT records
// at _idenplane-challenge.<domain> and marks the domain verified when one
// of them is the value asked for.
func (s *Service) VerifyDomain(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	d, err := bodyDomain(r, o)
	if err != nil {
		return err
	}
	if d.Verified {
		return httpx.OK(w, DomainRep{Name: d.Name, Verified: true})
	}
	if d.Challenge == "" {
		return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidRequest, Field: "domain",
			Message: "domain: no verification of " + d.Name + " was started: call verify-domain/initiate first"}
	}
	found, err := s.lookup(r.Context(), ChallengePrefix+d.Name)
	if err != nil {
		return err
	}
	if !slices.Contains(found, d.Challenge) {
		what := "no TXT record"
		if len(found) > 0 {
			what = "no TXT record with the value asked for"
		}
		return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidRequest, Field: "domain",
			Message: "domain: " + what + " at " + ChallengePrefix + d.Name + ": publish the value verify-domain/initiate gave, then try again"}
	}
	if err := s.deps.Store.VerifyDomain(r.Context(), o.ID, d.Name); errors.Is(err, store.ErrConflict) {
		return errDomainClaimed(d.Name, err)
	} else if err != nil {
		return err
	}
	return httpx.OK(w, DomainRep{Name: d.Name, Verified: true})
}

// lookup asks the resolver for the TXT records at name: none is an empty
// answer, a resolver that fails to answer a 503.
func (s *Service) lookup(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	found, err := s.deps.LookupTXT(ctx, name)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil, nil
	}
	if err != nil {
		s.deps.Log.WarnContext(ctx, "domain verification lookup failed", "name", name, "err", err)
		return nil, apperr.Busy(time.Minute, "the DNS lookup of %s failed: try again later", strings.TrimSuffix(name, "."))
	}
	return found, nil
}
