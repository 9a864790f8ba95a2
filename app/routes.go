package app

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/assets"
)

// routeAdder registers one admin route.
type routeAdder func(method, path string, h httpx.HandlerFunc)

func (a *App) handle(h httpx.HandlerFunc) http.Handler { return httpx.Handle(h, a.writeError) }

// allowedMethods lists the methods some route accepts for req's path, for
// the Allow header of a 405.
func allowedMethods(router *mux.Router, req *http.Request) []string {
	var allowed []string
	_ = router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			probe := req.Clone(req.Context())
			probe.Method = m
			if route.Match(probe, &mux.RouteMatch{}) && !slices.Contains(allowed, m) {
				allowed = append(allowed, m)
			}
		}
		return nil
	})
	slices.Sort(allowed)
	return allowed
}

// routes registers every route in one place; `idenplane routes` prints them.
func (a *App) routes() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = a.handle(func(w http.ResponseWriter, r *http.Request) error {
		return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path)
	})
	r.MethodNotAllowedHandler = a.handle(func(w http.ResponseWriter, req *http.Request) error {
		w.Header().Set("Allow", strings.Join(allowedMethods(r, req), ", "))
		return apperr.New(http.StatusMethodNotAllowed, apperr.CodeMethodNotAllowed, "%s is not allowed on %s", req.Method, req.URL.Path)
	})
	r.Use(recordRoute)

	public := func(method, path string, h httpx.HandlerFunc) {
		r.Handle(path, a.handle(h)).Methods(method)
	}
	admin := func(method, path string, h httpx.HandlerFunc) {
		r.Handle(path, a.handle(a.requireAdmin(a.recordAdminEvent(h)))).Methods(method)
	}

	public(http.MethodGet, "/", a.welcome)
	r.PathPrefix(assets.Prefix).Handler(a.assets).Methods(http.MethodGet, http.MethodHead)

	public(http.MethodGet, "/health", a.health)
	public(http.MethodGet, "/health/live", a.health)
	public(http.MethodGet, "/health/ready", a.ready)
	if a.cfg.MetricsPublic {
		public(http.MethodGet, "/admin/metrics", a.serveMetrics)
	} else {
		admin(http.MethodGet, "/admin/metrics", a.serveMetrics)
	}

	a.protocolRoutes(r)

	public(http.MethodPost, "/admin/auth/login", a.adminLogin)
	admin(http.MethodGet, "/admin/auth/me", a.adminMe)
	admin(http.MethodPost, "/admin/auth/logout", a.adminLogout)

	// Fixed paths before {realm}, which would otherwise swallow them.
	admin(http.MethodGet, "/admin/realms/themes", a.listThemes)
	admin(http.MethodPost, "/admin/realms/import", a.importRealm)
	admin(http.MethodPost, "/admin/realms", a.createRealm)
	admin(http.MethodGet, "/admin/realms", a.listRealms)
	admin(http.MethodGet, "/admin/realms/{realm}", a.getRealm)
	admin(http.MethodPut, "/admin/realms/{realm}", a.putRealm)
	admin(http.MethodPatch, "/admin/realms/{realm}", a.patchRealm)
	admin(http.MethodDelete, "/admin/realms/{realm}", a.deleteRealm)
	admin(http.MethodGet, "/admin/realms/{realm}/export", a.exportRealm)

	admin(http.MethodPost, "/admin/realms/{realm}/users", a.createUser)
	admin(http.MethodGet, "/admin/realms/{realm}/users", a.listUsers)
	admin(http.MethodGet, "/admin/realms/{realm}/users/{userId}", a.getUser)
	admin(http.MethodPut, "/admin/realms/{realm}/users/{userId}", a.putUser)
	admin(http.MethodPatch, "/admin/realms/{realm}/users/{userId}", a.patchUser)
	admin(http.MethodDelete, "/admin/realms/{realm}/users/{userId}", a.deleteUser)
	admin(http.MethodPut, "/admin/realms/{realm}/users/{userId}/reset-password", a.resetPassword)
	a.mfaRoutes(r, admin)

	a.clientRoutes(admin)
	a.roleRoutes(admin)
	a.groupRoutes(admin)
	a.scopeRoutes(admin)
	a.eventRoutes(admin)
	a.keyRoutes(admin)
	a.sessionRoutes(admin)
	a.bruteForceRoutes(admin)
	a.emailRoutes(admin)
	a.registrationRoutes(r, admin)
	a.webauthnRoutes(r) // webauthn.go
	a.stepUpRoutes(r)   // step_up.go
	a.accountRoutes(r)
	return r
}
