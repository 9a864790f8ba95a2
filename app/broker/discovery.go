package broker

import (
	"context"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// discoveryTimeout bounds the whole discovery of an issuer, on top of the
// outbound client's per-call timeout.
const discoveryTimeout = 15 * time.Second

// discoveryClaims is the member of the discovery document that go-oidc's
// Provider does not expose as fields.
type discoveryClaims struct {
	JWKSURI            string `json:"jwks_uri"`
	EndSessionEndpoint string `json:"end_session_endpoint"`
}

// discover fills, for an oidc provider with an issuer, the endpoints the
// administrator left empty from the issuer's discovery document
// (OpenID Connect Discovery 1.0), whose issuer must be the one configured.
// Nothing is fetched when every endpoint is set. It answers what it took.
func (s *Service) discover(ctx context.Context, p *store.IdentityProvider) (*DiscoveryNote, error) {
	if p.ProviderType != TypeOIDC || p.Issuer == "" ||
		(p.AuthorizationURL != "" && p.TokenURL != "" && p.JWKSURL != "") {
		return nil, nil
	}
	if err := checkURL("issuer", p.Issuer, true, p.ProviderType); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	url := strings.TrimSuffix(p.Issuer, "/") + "/.well-known/openid-configuration"
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, s.deps.Client), p.Issuer)
	if err != nil {
		return nil, apperr.Field("issuer", "the discovery document at %s could not be used: %v", url, err)
	}
	var extra discoveryClaims
	if err := provider.Claims(&extra); err != nil {
		return nil, apperr.Field("issuer", "the discovery document at %s could not be read: %v", url, err)
	}
	note := &DiscoveryNote{URL: url, Filled: []string{}}
	ep := provider.Endpoint()
	for _, f := range []struct {
		field string
		dst   *string
		val   string
	}{
		{"authorizationUrl", &p.AuthorizationURL, ep.AuthURL}, {"tokenUrl", &p.TokenURL, ep.TokenURL},
		{"userinfoUrl", &p.UserinfoURL, provider.UserInfoEndpoint()}, {"jwksUrl", &p.JWKSURL, extra.JWKSURI},
	} {
		if *f.dst == "" && f.val != "" {
			*f.dst = f.val
			note.Filled = append(note.Filled, f.field)
		}
	}
	st, err := readSettings(p)
	if err != nil {
		return nil, err
	}
	if st.LogoutURL == "" && extra.EndSessionEndpoint != "" {
		st.LogoutURL = extra.EndSessionEndpoint
		p.Config = st.encode()
		note.Filled = append(note.Filled, "logoutUrl")
	}
	return note, nil
}
