package app

import (
	"context"
	"regexp"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idenplane/idenplane/store"
)

// identityMetrics count what happens to identities, from the login events
// every sign-in, grant and lockout writes (whether or not the realm keeps
// them), and read the live sessions at each scrape. Labels are bounded:
// realms are the administrators' to make, event types are the code's
// constants, and an error outside the known shape counts as "other".
type identityMetrics struct {
	events   *prometheus.CounterVec
	lockouts *prometheus.CounterVec
}

// eventErrorLabel: the error names of login events, Keycloak's and
// OAuth's, are short snake case.
var eventErrorLabel = regexp.MustCompile(`^[a-z_]{1,40}$`)

func newIdentityMetrics(reg *prometheus.Registry, st *store.Store, now func() time.Time) *identityMetrics {
	m := &identityMetrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idenplane_login_events_total",
			Help: "Login events by realm, type (LOGIN, LOGIN_ERROR, CODE_TO_TOKEN, REFRESH_TOKEN, CLIENT_LOGIN, ...) and error; tokens issued are the grant types' events.",
		}, []string{"realm", "type", "error"}),
		lockouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idenplane_lockouts_total", Help: "Brute-force lockouts by realm and kind (temporary, permanent).",
		}, []string{"realm", "kind"}),
	}
	reg.MustRegister(m.events, m.lockouts, &sessionsCollector{st: st, now: now})
	return m
}

// loginEvent counts e, an event of realm.
func (m *identityMetrics) loginEvent(realm *store.Realm, e *store.LoginEvent) {
	if realm == nil {
		return
	}
	errLabel := e.Error
	if errLabel != "" && !eventErrorLabel.MatchString(errLabel) {
		errLabel = "other"
	}
	m.events.WithLabelValues(realm.Name, string(e.Type), errLabel).Inc()
	if kind := e.Details["lockout"]; kind == "temporary" || kind == "permanent" {
		m.lockouts.WithLabelValues(realm.Name, kind).Inc()
	}
}

// sessionsCollector reads the live SSO sessions of each realm at scrape.
type sessionsCollector struct {
	st  *store.Store
	now func() time.Time
}

var sessionsDesc = prometheus.NewDesc("idenplane_active_sessions", "Live SSO sessions by realm.", []string{"realm"}, nil)

func (c *sessionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- sessionsDesc }

func (c *sessionsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.st.ActiveSessionsByRealm(ctx, c.now().UnixMilli())
	if err != nil {
		ch <- prometheus.NewInvalidMetric(sessionsDesc, err)
		return
	}
	for realm, n := range counts {
		ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(n), realm)
	}
}
