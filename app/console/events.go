package console

import (
	"net/http"
	"net/url"
	"strconv"

	pages "github.com/idenplane/idenplane/ui/console"
)

// The filters each events list passes on to the API, by the API's names.
var (
	loginEventFilters = []string{"type", "userId", "clientId", "dateFrom", "dateTo"}
	adminEventFilters = []string{"operationType", "resourceType", "resourcePath", "authUserId", "dateFrom", "dateTo"}
)

// filters are the query's filters among names, as the API reads them.
func filters(r *http.Request, names []string) url.Values {
	q, out := r.URL.Query(), url.Values{}
	for _, k := range names {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	return out
}

// LoginEvents lists a realm's login events, newest first, filtered.
func (s *Service) LoginEvents(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	f := filters(r, loginEventFilters)
	first, _ := pageOf(r, 0)
	api := url.Values{"first": {strconv.Itoa(first)}, "max": {strconv.Itoa(listPageSize)}}
	for k, v := range f {
		api[k] = v
	}
	list := pages.LoginEventList{Filters: flat(f), Export: realmPath(realm, "/events/export?"+f.Encode())}
	err := c.call(r, http.MethodGet, adminRealm(realm, "/events?"+api.Encode()), nil, &list.Events)
	if fm, ok := formFailure(err, loginEventFilters...); err != nil && ok {
		list.Form = fm
	} else if err != nil {
		return err
	}
	_, list.Pager = pageOf(r, len(list.Events))
	return c.render(w, r, http.StatusOK, pages.LoginEvents(c.nav(r, pages.SectionLoginEvents, "console.events.title", realm), list))
}

// AdminEvents lists a realm's admin events, newest first, filtered.
func (s *Service) AdminEvents(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	f := filters(r, adminEventFilters)
	first, _ := pageOf(r, 0)
	api := url.Values{"first": {strconv.Itoa(first)}, "max": {strconv.Itoa(listPageSize)}}
	for k, v := range f {
		api[k] = v
	}
	list := pages.AdminEventList{Filters: flat(f), Export: realmPath(realm, "/admin-events/export?"+f.Encode())}
	err := c.call(r, http.MethodGet, adminRealm(realm, "/admin-events?"+api.Encode()), nil, &list.Events)
	if fm, ok := formFailure(err, adminEventFilters...); err != nil && ok {
		list.Form = fm
	} else if err != nil {
		return err
	}
	_, list.Pager = pageOf(r, len(list.Events))
	return c.render(w, r, http.StatusOK, pages.AdminEvents(c.nav(r, pages.SectionAdminEvents, "console.adminEvents.title", realm), list))
}

func flat(v url.Values) map[string]string {
	out := map[string]string{}
	for k := range v {
		out[k] = v.Get(k)
	}
	return out
}

// ExportLoginEvents and ExportAdminEvents download the filtered events
// as CSV: the API's export, passed on to the browser as the API writes
// it, a flush at a time, so that a download of any size costs the
// console no memory.
func (s *Service) ExportLoginEvents(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.export(w, r, c, "/events/login/export", loginEventFilters)
}

func (s *Service) ExportAdminEvents(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.export(w, r, c, "/events/admin/export", adminEventFilters)
}

func (s *Service) export(w http.ResponseWriter, r *http.Request, c *Ctx, path string, names []string) error {
	req, err := s.apiRequest(r.Context(), r, http.MethodGet, adminRealm(pathVar(r, "realm"), path+"?"+filters(r, names).Encode()),
		"", nil, c.sess.AccessToken)
	if err != nil {
		return err
	}
	sw := &streamWriter{w: w, header: http.Header{}}
	s.deps.API.ServeHTTP(sw, req)
	if sw.refused != nil {
		return decodeAnswer(sw.refused, nil)
	}
	if sw.status == 0 { // an export that wrote nothing
		sw.WriteHeader(http.StatusOK)
	}
	return nil
}

// streamWriter passes an API's download on to the browser as it comes.
// An answer other than 200 is kept whole instead, to be shown as the
// console's error page.
type streamWriter struct {
	w       http.ResponseWriter
	header  http.Header
	status  int
	refused *recorder
}

func (sw *streamWriter) Header() http.Header { return sw.header }

func (sw *streamWriter) WriteHeader(status int) {
	if sw.status != 0 {
		return
	}
	sw.status = status
	if status != http.StatusOK {
		sw.refused = newRecorder()
		sw.refused.header = sw.header
		sw.refused.WriteHeader(status)
		return
	}
	for _, h := range []string{"Content-Type", "Content-Disposition"} {
		sw.w.Header().Set(h, sw.header.Get(h))
	}
	sw.w.Header().Set("Cache-Control", "no-store")
	sw.w.WriteHeader(http.StatusOK)
}

func (sw *streamWriter) Write(b []byte) (int, error) {
	if sw.status == 0 {
		sw.WriteHeader(http.StatusOK)
	}
	if sw.refused != nil {
		return sw.refused.Write(b)
	}
	return sw.w.Write(b)
}

// FlushError sends what the API flushed on to the browser
// (http.ResponseController finds it).
func (sw *streamWriter) FlushError() error {
	if sw.refused != nil || sw.status == 0 {
		return nil
	}
	return http.NewResponseController(sw.w).Flush()
}
