package broker

import (
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Discovered is the answer of a discovery asked for by itself: the
// endpoints an OpenID Connect issuer's discovery document gives, for a
// form to fill before the provider is saved.
type Discovered struct {
	Issuer           string `json:"issuer"`
	AuthorizationURL string `json:"authorizationUrl"`
	TokenURL         string `json:"tokenUrl"`
	UserinfoURL      string `json:"userinfoUrl"`
	JWKSURL          string `json:"jwksUrl"`
	LogoutURL        string `json:"logoutUrl"`
	URL              string `json:"url"` // the discovery document's address
}

// DiscoverBody is the body of POST .../identity-providers/discover.
type DiscoverBody struct {
	Issuer string `json:"issuer"`
}

// Discover answers POST .../identity-providers/discover {"issuer": ...}:
// the issuer's discovery document read as a create would read it, through
// the server's outbound client and its guard, and nothing stored.
func (s *Service) Discover(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.deps.Realm(r); err != nil {
		return err
	}
	var in DiscoverBody
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.Issuer == "" {
		return apperr.Field("issuer", "is required")
	}
	if err := httpx.CheckOutboundURL(r.Context(), "issuer", in.Issuer, s.deps.OutboundAllowed); err != nil {
		return err
	}
	p := &store.IdentityProvider{ProviderType: TypeOIDC, Issuer: in.Issuer}
	note, err := s.discover(r.Context(), p)
	if err != nil {
		return err
	}
	st, err := readSettings(p)
	if err != nil {
		return err
	}
	return httpx.OK(w, Discovered{Issuer: p.Issuer, AuthorizationURL: p.AuthorizationURL, TokenURL: p.TokenURL,
		UserinfoURL: p.UserinfoURL, JWKSURL: p.JWKSURL, LogoutURL: st.LogoutURL, URL: note.URL})
}
