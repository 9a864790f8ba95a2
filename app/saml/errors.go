package saml

import (
	"context"
	"net/http"

	"github.com/idenplane/idenplane/store"
)

// pageError answers a browser that cannot be sent back to a service
// provider (no valid request names one) with the realm's error page.
func (s *Service) pageError(w http.ResponseWriter, r *http.Request, realm *store.Realm, err error) {
	s.deps.ErrorPage(w, r, realm, err)
}

func (s *Service) settings(ctx context.Context, realm *store.Realm) (*store.SAMLSettings, error) {
	return s.deps.Store.GetSAMLSettings(ctx, realm.ID)
}
