package app

import (
	"testing"

	"github.com/idenplane/idenplane/store/pgtest"
)

// The suites that matter most run again with their stores on PostgreSQL:
// the OpenID Connect grants (code, password, refresh, client credentials,
// device), the hosted sign-in with and without a flow, and the admin API's
// users and clients.
func TestOnPostgres(t *testing.T) {
	pgtest.Rerun(t, "^(TestCodeFlow|TestPasswordGrant|TestRefresh|TestClientCredentials|TestOIDCDevice|TestLogin|TestFlow|TestUser|TestClient|TestRealm)")
}
