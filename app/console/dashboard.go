package console

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// chartDays is the span of the dashboard's sign-in chart; it reads the
// events chartPage at a time (the API's largest page), chartPages pages
// at most.
const (
	chartDays  = 14
	chartPage  = 1000
	chartPages = 10
)

// Dashboard shows one realm at a glance (?realm, else the first): its
// counts, sign-ins and failures over the last days as a chart, locked
// users and the latest admin events. Each part shows when the
// administrator may read it.
func (s *Service) Dashboard(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realms, err := c.realms(r)
	if err != nil {
		return err
	}
	d := pages.Dashboard{Realms: realms, Realm: r.URL.Query().Get("realm")}
	if !slices.Contains(realms, d.Realm) {
		d.Realm = ""
		if len(realms) > 0 {
			d.Realm = realms[0]
		}
	}
	nav := c.nav(r, pages.SectionDashboard, "console.dashboard.title")
	c.inRealm(&nav, d.Realm)
	if d.Realm == "" {
		return c.render(w, r, http.StatusOK, pages.DashboardPage(nav, d))
	}
	if c.can(authz.RealmRead) {
		d.Stats = &pages.Stats{}
		if err := c.call(r, http.MethodGet, adminRealm(d.Realm, "/stats"), nil, d.Stats); err != nil {
			return err
		}
		if d.Failing, err = failingSyncs(r, c, d.Realm); err != nil {
			return err
		}
	}
	if c.can(authz.EventsRead) {
		if d.Chart, err = s.signInChart(r, c, d.Realm); err != nil {
			return err
		}
		q := url.Values{"max": {"8"}}
		if err := c.call(r, http.MethodGet, adminRealm(d.Realm, "/admin-events?"+q.Encode()), nil, &d.AdminEvents); err != nil {
			return err
		}
	}
	if c.can(authz.UsersRead) {
		if err := c.call(r, http.MethodGet, adminRealm(d.Realm, "/brute-force/locked-users?max=20"), nil, &d.Locked); err != nil {
			return err
		}
	}
	return c.render(w, r, http.StatusOK, pages.DashboardPage(nav, d))
}

// failingSyncs are the realm's LDAP directories whose last sync stopped
// with an error or failed entries.
func failingSyncs(r *http.Request, c *Ctx, realm string) ([]pages.Failing, error) {
	var providers []struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		SyncStatus *struct {
			LastSync *struct {
				StartedAt int64  `json:"startedAt"`
				Failed    int    `json:"failed"`
				Error     string `json:"error"`
			} `json:"lastSync"`
		} `json:"syncStatus"`
	}
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/user-federation"), nil, &providers); err != nil {
		return nil, err
	}
	var out []pages.Failing
	for _, p := range providers {
		if p.SyncStatus == nil || p.SyncStatus.LastSync == nil {
			continue
		}
		if last := p.SyncStatus.LastSync; last.Error != "" || last.Failed > 0 {
			out = append(out, pages.Failing{Name: p.Name, At: last.StartedAt, Error: last.Error, Failed: last.Failed})
		}
	}
	return out, nil
}

// signInChart counts the realm's sign-ins and failures a day, over the
// last chartDays days (UTC).
func (s *Service) signInChart(r *http.Request, c *Ctx, realm string) ([]pages.Day, error) {
	today := s.deps.Now().UTC().Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, -(chartDays - 1))
	days := make([]pages.Day, chartDays)
	for i := range days {
		days[i].Date = from.AddDate(0, 0, i).Format(time.DateOnly)
	}
	var events []pages.LoginEventRow
	for page := range chartPages {
		q := url.Values{"type": {"LOGIN,LOGIN_ERROR"}, "dateFrom": {from.Format(time.DateOnly)},
			"first": {strconv.Itoa(page * chartPage)}, "max": {strconv.Itoa(chartPage)}}
		var batch []pages.LoginEventRow
		if err := c.call(r, http.MethodGet, adminRealm(realm, "/events?"+q.Encode()), nil, &batch); err != nil {
			return nil, err
		}
		events = append(events, batch...)
		if len(batch) < chartPage {
			break
		}
	}
	for _, e := range events {
		i := int(time.UnixMilli(e.Time).UTC().Sub(from) / (24 * time.Hour))
		if i < 0 || i >= chartDays {
			continue
		}
		if e.Type == "LOGIN" {
			days[i].SignIns++
		} else {
			days[i].Failures++
		}
	}
	return days, nil
}

// Account shows the signed-in administrator: who they are, what they may
// do, and where they change their password and second factors: the
// system realm's account pages, since an administrator is a person of it.
func (s *Service) Account(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	base := s.deps.BaseURL + "/realms/" + url.PathEscape(s.deps.SystemRealm) + "/account"
	a := pages.AccountView{Username: c.me.Username, Realm: c.me.Realm, Permissions: c.me.Permissions,
		AccountURL: base + "/", TOTPURL: base + "/totp-setup", PasskeysURL: base + "/webauthn/credentials"}
	return c.render(w, r, http.StatusOK, pages.Account(c.nav(r, pages.SectionAccount, "console.account.title"), a))
}
