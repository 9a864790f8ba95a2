package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a-h/templ"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	pages "github.com/idenplane/idenplane/ui/console"
)

// Handler is a console page or form of a signed-in administrator.
type Handler func(w http.ResponseWriter, r *http.Request, c *Ctx) error

// Ctx is what a page handler works with: the session and the principal
// the API sees.
type Ctx struct {
	s    *Service
	sess *session
	me   me
}

// me is the API's answer to GET /admin/auth/me: the signed-in administrator.
type me struct {
	Type        string   `json:"type"`
	ID          string   `json:"id"`
	Username    string   `json:"username"`
	Permissions []string `json:"permissions"`
	Realm       string   `json:"realm"`
	perms       authz.Set
}

// csrfField is the name of every form's CSRF token.
const csrfField = "csrf"

// refreshMargin is how long before its expiry an access token is
// replaced, so that no API call of a page meets an expired one.
const refreshMargin = 30

// Page serves h to a signed-in administrator. Without a session a page
// leads to the sign-in; a form post is refused unless it carries the
// session's CSRF token, checked before anything else.
func (s *Service) Page(h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess := s.currentSession(r)
		if sess == nil {
			s.toSignIn(w, r)
			return
		}
		if r.Method == http.MethodPost {
			if err := parsePost(w, r); err != nil || !sess.checkCSRF(r.PostForm.Get(csrfField)) {
				s.fail(w, r, nil, &pages.Failure{Status: http.StatusForbidden, Message: "console.error.csrf", Back: Prefix + "/"})
				return
			}
		}
		if err := s.refresh(r, sess); err != nil {
			s.deps.Log.InfoContext(r.Context(), "console session ended: refresh refused", "err", err)
			s.clearSealed(w, r, sessionCookie)
			s.toSignIn(w, r)
			return
		}
		if sess.changed {
			if err := s.writeSealed(w, r, sessionCookie, sess, 0); err != nil {
				s.fail(w, r, nil, err)
				return
			}
		}
		c := &Ctx{s: s, sess: sess}
		if err := s.call(r, sess, http.MethodGet, "/admin/auth/me", nil, &c.me); err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
				s.clearSealed(w, r, sessionCookie)
				s.toSignIn(w, r)
				return
			}
			s.fail(w, r, nil, err)
			return
		}
		perms, err := authz.Parse(c.me.Permissions)
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		c.me.perms = perms
		if err := h(w, r, c); err != nil {
			s.fail(w, r, c, err)
		}
	})
}

// toSignIn sends a browser without a session to the sign-in, to come
// back to the page it asked for.
func (s *Service) toSignIn(w http.ResponseWriter, r *http.Request) {
	target := Prefix + "/login"
	if r.Method == http.MethodGet {
		target += "?" + url.Values{"return": {r.URL.RequestURI()}}.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// fail renders err as the console's error page: a refusal of the API with
// its status and message, anything else as an internal error, logged.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, c *Ctx, err error) {
	f, ok := err.(*pages.Failure)
	if !ok {
		var ae *apiError
		switch {
		case errors.As(err, &ae):
			f = &pages.Failure{Status: ae.Status, Message: ae.Description}
			if ae.Status == http.StatusForbidden {
				f.Message = "console.error.forbidden"
			}
		default:
			s.deps.Log.ErrorContext(r.Context(), "console page failed", "path", httpx.LoggedPath(r), "err", err)
			f = &pages.Failure{Status: http.StatusInternalServerError, Message: "console.error.internal"}
		}
	}
	if f.Back == "" {
		f.Back = Prefix + "/"
	}
	var nav pages.Nav
	if c != nil {
		nav = c.nav(r, "", "console.error.title")
	} else {
		nav = s.bareNav("console.error.title")
	}
	if err := s.deps.RenderPage(w, r, f.Status, pages.ErrorPage(nav, *f)); err != nil {
		s.deps.Log.ErrorContext(r.Context(), "render console error page", "err", err)
	}
}

func (s *Service) bareNav(title string) pages.Nav {
	return pages.Nav{Title: title, Stylesheets: []string{s.deps.Asset("idenplane.css"), s.deps.Asset("console.css")},
		Script: s.deps.Asset("console.js")}
}

// nav is the frame of a page of section in the realm the path names,
// titled with a message key.
func (c *Ctx) nav(r *http.Request, section, title string, args ...any) pages.Nav {
	n := c.s.bareNav(title)
	n.TitleArgs = args
	n.Username, n.Section, n.CSRF, n.Perms = c.me.Username, section, c.sess.CSRF, c.me.perms
	c.inRealm(&n, pathVar(r, "realm"))
	n.Confined = c.me.Realm != ""
	n.Flash = r.URL.Query()["done"]
	return n
}

// inRealm makes realm the one the navigation is about, with the sections
// of it the administrator may read.
func (c *Ctx) inRealm(n *pages.Nav, realm string) {
	n.Realm, n.More = realm, nil
	if realm == "" {
		return
	}
	for _, res := range Resources {
		if c.can(res.Read) {
			n.More = append(n.More, pages.NavLink{Section: res.Path, Href: res.page(realm), Label: res.title()})
		}
	}
}

// pathVar is a variable of the route's path, as the router read it.
func pathVar(r *http.Request, name string) string { return mux.Vars(r)[name] }

// render writes a page.
func (c *Ctx) render(w http.ResponseWriter, r *http.Request, status int, page templ.Component) error {
	return c.s.deps.RenderPage(w, r, status, page)
}

// call is the API call of this page, with the administrator's token.
func (c *Ctx) call(r *http.Request, method, path string, in, out any) error {
	return c.s.call(r, c.sess, method, path, in, out)
}

// can says whether the administrator holds p.
func (c *Ctx) can(p authz.Permission) bool { return c.me.perms.Has(p) }

// realms are the realms the administrator may work in: the one they are
// confined to, or every realm when they may list them.
func (c *Ctx) realms(r *http.Request) ([]string, error) {
	if c.me.Realm != "" {
		return []string{c.me.Realm}, nil
	}
	if !c.can(authz.SystemRead) {
		return nil, nil
	}
	var list []struct {
		Name string `json:"name"`
	}
	if err := c.call(r, http.MethodGet, "/admin/realms", nil, &list); err != nil {
		return nil, err
	}
	names := make([]string, len(list))
	for i, rl := range list {
		names[i] = rl.Name
	}
	slices.Sort(names)
	return names, nil
}

// redirect answers a form with the page it leads to, saying what it did.
func redirect(w http.ResponseWriter, r *http.Request, to string, done ...string) {
	if len(done) > 0 {
		sep := "?"
		if strings.Contains(to, "?") {
			sep = "&"
		}
		to += sep + url.Values{"done": done}.Encode()
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// formFailure turns an API refusal of a form into the messages shown at
// its fields, every one at once; anything else is no form's to show.
func formFailure(err error, known ...string) (pages.Form, bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status >= 500 || ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden {
		return pages.Form{}, false
	}
	f := pages.Form{Errors: map[string]string{}}
	for field, msg := range ae.fieldErrors() {
		if slices.Contains(known, field) {
			f.Errors[field] = msg
		} else {
			f.Alert = field + ": " + msg
		}
	}
	if len(f.Errors) == 0 && f.Alert == "" {
		f.Alert = ae.Description
	}
	return f, true
}
