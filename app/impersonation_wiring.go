package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/store"
)

// impersonationSSO starts an impersonation's SSO session as the hosted
// sign-in starts a sign-in's, cookie included (impersonation.SSO).
type impersonationSSO struct{ a *App }

func (s impersonationSSO) NewSession(r *http.Request, realm *store.Realm, u *store.User) (*store.Session, string) {
	l := s.a.newSSOLogin(r, realm, u)
	return l.sess, l.secret
}

func (s impersonationSSO) SetCookie(w http.ResponseWriter, realm *store.Realm, sess *store.Session, cookie string) {
	s.a.setSSOCookie(w, realm, &ssoLogin{sess: sess, secret: cookie}, false)
}

// userPrivileges finds the admin permissions a realm's user holds by what
// they are (impersonation.Privileges): an organization's owner or admin
// holds orgAdminPermissions with their own token (org_admins.go), and a
// service account's user acts with the account's permissions.
type userPrivileges struct{ st *store.Store }

func (p userPrivileges) AdminPermissions(ctx context.Context, realm *store.Realm, u *store.User) (authz.Set, error) {
	var names []string
	orgsOf, err := p.st.UserOrganizations(ctx, u.ID)
	if err != nil {
		return authz.Set{}, err
	}
	for _, m := range orgsOf {
		if m.Role == orgs.RoleOwner || m.Role == orgs.RoleAdmin {
			names = append(names, authz.Names(orgAdminPermissions)...)
			break
		}
	}
	if u.ServiceAccountClientID != "" {
		n, err := p.st.GetNHIByClient(ctx, u.ServiceAccountClientID)
		switch {
		case err == nil:
			names = append(names, n.AdminPermissions...)
		case !errors.Is(err, store.ErrNotFound):
			return authz.Set{}, err
		}
	}
	return authz.Parse(names)
}
