package nhi_test

import (
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

const nhiPath = "/admin/realms/acme/nhi"

// newServer starts the server with the realm acme, admin events on.
func newServer(t *testing.T) *apptest.Server {
	s := realapp.New(t)
	r := s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "adminEventsEnabled": true})
	apptest.MustStatus(t, r, http.StatusCreated)
	return s
}

// identityJSON is an identity as the API answers it.
type identityJSON struct {
	ID                   string            `json:"id"`
	Kind                 string            `json:"kind"`
	Name                 string            `json:"name"`
	Description          string            `json:"description"`
	Owner                *ownerJSON        `json:"owner"`
	Metadata             map[string]string `json:"metadata"`
	State                string            `json:"state"`
	ClientID             string            `json:"clientId"`
	ServiceAccountUserID string            `json:"serviceAccountUserId"`
	CreatedTimestamp     int64             `json:"createdTimestamp"`
	UpdatedTimestamp     int64             `json:"updatedTimestamp"`
	LastUsedTimestamp    *int64            `json:"lastUsedTimestamp"`
}

type ownerJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// createIdentity makes an identity from fields and returns it.
func createIdentity(t *testing.T, s *apptest.Server, fields map[string]any) identityJSON {
	t.Helper()
	r := s.Admin(http.MethodPost, nhiPath, fields)
	apptest.MustStatus(t, r, http.StatusCreated)
	var n identityJSON
	r.Decode(t, &n)
	return n
}

// getIdentity reads an identity over the API.
func getIdentity(t *testing.T, s *apptest.Server, id string) identityJSON {
	t.Helper()
	r := s.Admin(http.MethodGet, nhiPath+"/"+id, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var n identityJSON
	r.Decode(t, &n)
	return n
}

// clientEnabled says whether the client with clientId is enabled.
func clientEnabled(t *testing.T, s *apptest.Server, clientID string) bool {
	t.Helper()
	r := s.Admin(http.MethodGet, "/admin/realms/acme/clients/"+clientID, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	return r.Object(t)["enabled"].(bool)
}
