package app

import (
	"context"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/adminaccounts"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/setup"
	"github.com/idenplane/idenplane/store"
)

// newSetup wires the first-run setup wizard (app/setup) to what its steps
// make things with: the admin accounts, the realm creation of the admin
// API, the clients' storage and the mail sender. throttle counts wrong
// bootstrap tokens as the admin login counts its failures.
func newSetup(a *App, throttle identity.FailureCounter) *setup.Service {
	return setup.New(setup.Deps{Store: a.store, Log: a.log, Now: a.now, BaseURL: a.cfg.BaseURL, Stdout: a.cfg.Stdout,
		Pages: a.pages, Script: a.assets.URL("setup.js"), SecureCookies: strings.HasPrefix(a.cfg.BaseURL, "https://"),
		ClientIP: a.clientIP, Throttle: throttle,
		CreateAdmin: func(ctx context.Context, n setup.NewAdmin) (string, error) {
			rep, err := a.adminAccounts.CreateAccount(ctx, adminaccounts.NewAccount{Username: n.Username, Email: n.Email,
				FirstName: n.FirstName, LastName: n.LastName, Password: &n.Password, CreatedBy: "setup-wizard"})
			if err != nil {
				return "", err
			}
			return rep.ID, nil
		},
		Realms:    newRealms(a),
		NewClient: a.clients.StoreNew,
		SendTestMail: func(r *http.Request, realm *store.Realm, to string) error {
			return sendTestMailNow(r, a.mail, a.mailLangs, realm, "smtp", to, true)
		},
		Issuer:     a.issuer,
		ConsoleURL: a.cfg.BaseURL + ConsolePath + "/",
	})
}
