package app

import (
	"testing"

	"github.com/idenplane/idenplane/store/pgtest"
)

// The suites that matter most run again with their stores on PostgreSQL:
// the OpenID Connect grants (code, password, refresh with its reuse
// detection, client credentials, device), fifty codes, refreshes and
// wrong passwords at once, the hosted sign-in with and without a flow,
// and the admin API's realms, users and clients.
func TestOnPostgres(t *testing.T) {
	pgtest.Rerun(t, "^(TestParallelCodeAndRefresh|TestBruteForceConcurrentGrants|TestCodeFlow|TestCodeReplayRevokesTokens|TestPasswordGrant$|TestPasswordGrantRefused|TestRefreshTokenReuse|"+
		"TestRefreshTokenRevokedOrUsed|TestOfflineAccess|TestClientCredentials|TestOIDCDeviceFlow|TestLoginPageCredentials|"+
		"TestLoginByEmail|TestLoginRememberMe|TestFlowPasswordAndTOTP|TestFlowBuiltIn|TestFlowConditionalSecondFactor|"+
		"TestUserCreate|TestUserList|TestUserSearch|TestUserUpdate|TestUserDelete|TestClientCreateInvalid|TestClientUpdate|"+
		"TestClientDelete|TestRealmCreate|TestRealmUpdateInvalid|TestRealmDelete)")
}
