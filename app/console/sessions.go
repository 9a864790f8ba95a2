package console

import (
	"net/http"
	"net/url"
	"strconv"

	pages "github.com/idenplane/idenplane/ui/console"
)

// listPageSize is the rows of a page of sessions and events.
const listPageSize = 50

// pageOf reads ?first of a list's page and the links around it: the API
// does not count these lists, so a full page has a next one.
func pageOf(r *http.Request, rows int) (first int, pager pages.Pager) {
	q := r.URL.Query()
	first, _ = strconv.Atoi(q.Get("first"))
	first = max(first, 0)
	link := func(f int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("first", strconv.Itoa(f))
		return r.URL.Path + "?" + v.Encode()
	}
	pager.Total = -1
	if rows > 0 {
		pager.From, pager.To = first+1, first+rows
	}
	if first > 0 {
		pager.Prev = link(max(first-listPageSize, 0))
	}
	if rows == listPageSize {
		pager.Next = link(first + listPageSize)
	}
	return first, pager
}

// Sessions lists a realm's active sessions, a page at a time.
func (s *Service) Sessions(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	first, _ := pageOf(r, 0)
	var list []pages.SessionRow
	api := url.Values{"first": {strconv.Itoa(first)}, "max": {strconv.Itoa(listPageSize)}}
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/sessions?"+api.Encode()), nil, &list); err != nil {
		return err
	}
	_, pager := pageOf(r, len(list))
	return c.render(w, r, http.StatusOK, pages.Sessions(c.nav(r, pages.SectionSessions, "console.sessions.title", realm),
		pages.SessionList{Sessions: list, Pager: pager}))
}

// EndSession ends one session (its type, sso or oauth, in the form).
func (s *Service) EndSession(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "sessionId")
	q := url.Values{"type": {r.PostForm.Get("type")}}
	if err := c.call(r, http.MethodDelete, adminRealm(realm, "/sessions/"+url.PathEscape(id)+"?"+q.Encode()), nil, nil); err != nil {
		return err
	}
	to := r.PostForm.Get("return")
	if to = safeReturn(to); to == Prefix+"/" {
		to = realmPath(realm, "/sessions")
	}
	redirect(w, r, to, "console.done.sessionEnded")
	return nil
}
