package saml

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
)

// metadataFetchTimeout bounds the fetch of an SP's metadata, on top of
// the outbound client's own timeouts.
const metadataFetchTimeout = 15 * time.Second

// fetchMetadata reads the metadata document an SP publishes at raw, through
// the server's outbound client: an https (or http) address whose host is
// public, or one of OutboundAllowed. Every refusal is a message at the
// field metadataUrl.
func (s *Service) fetchMetadata(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", apperr.Field("metadataUrl", "must be an absolute http or https URL")
	}
	if err := httpx.CheckOutboundURL(ctx, "metadataUrl", raw, s.deps.OutboundAllowed); err != nil {
		return "", err
	}
	if s.deps.Client == nil {
		return "", apperr.Field("metadataUrl", "this server fetches no metadata: give the document itself")
	}
	ctx, cancel := context.WithTimeout(ctx, metadataFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return "", apperr.Field("metadataUrl", "must be an absolute http or https URL")
	}
	req.Header.Set("Accept", "application/samlmetadata+xml, application/xml, text/xml")
	resp, err := s.deps.Client.Do(req)
	if err != nil {
		return "", apperr.Field("metadataUrl", "the metadata could not be fetched: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", apperr.Field("metadataUrl", "the metadata could not be fetched: the server answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	switch {
	case err != nil:
		return "", apperr.Field("metadataUrl", "the metadata could not be read: %v", err)
	case len(body) > maxMetadata:
		return "", apperr.Field("metadataUrl", "the metadata is larger than %d bytes", maxMetadata)
	}
	return string(body), nil
}
