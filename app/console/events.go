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
// as CSV: the API's export, passed through.
func (s *Service) ExportLoginEvents(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.export(w, r, c, "/events/login/export", loginEventFilters)
}

func (s *Service) ExportAdminEvents(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.export(w, r, c, "/events/admin/export", adminEventFilters)
}

func (s *Service) export(w http.ResponseWriter, r *http.Request, c *Ctx, path string, names []string) error {
	rec, err := s.serve(r.Context(), r, http.MethodGet, adminRealm(pathVar(r, "realm"), path+"?"+filters(r, names).Encode()),
		"", nil, c.sess.AccessToken)
	if err != nil {
		return err
	}
	if rec.result() != http.StatusOK {
		return decodeAnswer(rec, nil)
	}
	for _, h := range []string{"Content-Type", "Content-Disposition"} {
		w.Header().Set(h, rec.header.Get(h))
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(rec.body.Bytes())
	return err
}
