package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/risk"
)

// riskSignals authenticates the client SDK's posts of continuous
// verification (app/risk) as the account authenticates a Bearer caller:
// no access token, or one that no longer stands (its session ended), is a
// 401 with a Bearer challenge. The module checks the rest: the token's
// session, the body, the rate.
func riskSignals(a *App, h risk.SignalHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		realm, err := a.account.Realm(r)
		if err == nil {
			err = func() error {
				token := httpx.BearerToken(r)
				if token == "" {
					return account.ErrNoToken
				}
				c, err := a.account.Bearer(r, realm, token)
				switch {
				case err != nil:
					return err
				case c.SID != "" && c.Session == nil:
					return account.ErrStepUpEnded // the token's session ended since
				}
				return h(w, r, &risk.Caller{Realm: realm, User: c.User, ClientID: c.ClientID, SID: c.SID, Session: c.Session})
			}()
		}
		if err != nil {
			account.SetBearerChallenge(w, realm, err)
			a.writeError(w, r, err)
		}
	})
}
