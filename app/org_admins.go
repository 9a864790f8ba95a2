package app

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/store"
)

// Organization admins: an owner or admin of an organization manages its
// members and invitations through the admin routes, with their own access
// token of the realm instead of an admin credential.

// principalOrgAdmin is the kind of principal an organization admin is, as
// admin events record it.
const principalOrgAdmin = "organization-admin"

// orgAdminPermissions is all an organization admin's token may hold, and
// only on its organization's member and invitation routes.
var orgAdminPermissions, _ = authz.Parse([]string{string(authz.OrgsRead), string(authz.OrgsWrite)})

type orgRoleKey struct{}

// callerOrgRole is the caller's role in the organization of the path when
// an organization admin calls; "" for an admin credential.
func callerOrgRole(r *http.Request) string {
	role, _ := r.Context().Value(orgRoleKey{}).(string)
	return role
}

var errNotOrgAdmin = apperr.Forbidden("only an owner or admin of this organization may do this with a user's token")

// requireOrgAdmin lets through an admin credential holding perm, as
// requireAdmin does, or a user's access token of the path's realm that
// carries the organization scope, when the user is now an owner or admin
// of the organization {slug}.
func (a *App) requireOrgAdmin(perm authz.Permission, next httpx.HandlerFunc) httpx.HandlerFunc {
	admin := a.requireAdmin(perm, next)
	return func(w http.ResponseWriter, r *http.Request) error {
		token := httpx.BearerToken(r)
		if r.Header.Get("X-Admin-API-Key") != "" || token == "" {
			return admin(w, r)
		}
		if _, _, err := a.parseAdminToken(token); err == nil {
			return admin(w, r)
		}
		realm, err := a.realm(r)
		if err != nil {
			return err
		}
		claims, err := a.verifyAccessToken(r.Context(), realm, token)
		if err != nil {
			return admin(w, r) // neither an admin's token nor a user's: the admin API's 401
		}
		if scope, _ := claims["scope"].(string); !slices.Contains(strings.Fields(scope), "organization") {
			return apperr.Forbidden("the access token lacks the organization scope")
		}
		sub, _ := claims["sub"].(string)
		u, err := a.store.GetUser(r.Context(), realm.ID, sub)
		if errors.Is(err, store.ErrNotFound) || err == nil && !u.Enabled {
			return errNotOrgAdmin
		} else if err != nil {
			return err
		}
		o, err := a.store.GetOrganization(r.Context(), realm.ID, mux.Vars(r)["slug"])
		if errors.Is(err, store.ErrNotFound) {
			return errNotOrgAdmin // no telling which organizations exist
		} else if err != nil {
			return err
		}
		m, err := a.store.GetOrgMember(r.Context(), o.ID, u.ID)
		if errors.Is(err, store.ErrNotFound) || err == nil && m.Role != orgs.RoleOwner && m.Role != orgs.RoleAdmin {
			return errNotOrgAdmin
		} else if err != nil {
			return err
		}
		if !orgAdminPermissions.Has(perm) {
			return errNotOrgAdmin
		}
		p := &adminPrincipal{Kind: principalOrgAdmin, UserID: u.ID, Username: u.Username, Permissions: orgAdminPermissions}
		ctx := context.WithValue(context.WithValue(r.Context(), principalKey{}, p), orgRoleKey{}, m.Role)
		return next(w, r.WithContext(ctx))
	}
}
