package nhi

import (
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// UsageDayRep is one day of an identity's use.
type UsageDayRep struct {
	Date           string `json:"date"` // YYYY-MM-DD, UTC
	Tokens         int64  `json:"tokens"`
	Failures       int64  `json:"failures"`
	Introspections int64  `json:"introspections"`
}

// NHIStatsRep is what GET .../nhi/{id}/stats answers.
type NHIStatsRep struct {
	Days              int              `json:"days"`
	LastUsedTimestamp *int64           `json:"lastUsedTimestamp"`
	Usage             []UsageDayRep    `json:"usage"`       // the days with use, oldest first
	Credentials       map[string]int64 `json:"credentials"` // by state
}

// NHIMetricsRep is what GET .../service-accounts/{id}/metrics answers: the
// totals of the period. Requests are every authentication the account
// tried (tokens and failures) and introspections of its keys.
type NHIMetricsRep struct {
	Days              int    `json:"days"`
	Requests          int64  `json:"requests"`
	Tokens            int64  `json:"tokens"`
	Failures          int64  `json:"failures"`
	Introspections    int64  `json:"introspections"`
	LastUsedTimestamp *int64 `json:"lastUsedTimestamp"`
}

const maxStatsDays = 366

// usage loads the identity of the path and its use over the last days
// days (?days=, 30 by default), today included.
func (s *Service) usage(r *http.Request) (*store.NHI, int, []store.NHIUsage, error) {
	s.settle(r.Context())
	_, n, err := s.identity(r)
	if err != nil {
		return nil, 0, nil, err
	}
	days, err := httpx.IntParam(r.URL.Query().Get("days"), "days", 30, 1, maxStatsDays)
	if err != nil {
		return nil, 0, nil, err
	}
	list, err := s.deps.Store.ListNHIUsage(r.Context(), n.ID, identity.NHIDay(s.now())-int64(days)+1)
	return n, days, list, err
}

// Stats answers an identity's use per day, last use, and credentials by
// state.
func (s *Service) Stats(w http.ResponseWriter, r *http.Request) error {
	n, days, list, err := s.usage(r)
	if err != nil {
		return err
	}
	creds, err := s.deps.Store.ListNHICredentials(r.Context(), n.ID)
	if err != nil {
		return err
	}
	now := s.now().UnixMilli()
	rep := NHIStatsRep{Days: days, LastUsedTimestamp: optionalTime(n.LastUsedAt), Usage: []UsageDayRep{},
		Credentials: map[string]int64{identity.CredActive: 0, identity.CredExpired: 0, identity.CredRevoked: 0}}
	for _, u := range list {
		rep.Usage = append(rep.Usage, UsageDayRep{Date: time.Unix(u.Day*86400, 0).UTC().Format(time.DateOnly), Tokens: u.Tokens,
			Failures: u.Failures, Introspections: u.Introspections})
	}
	for _, c := range creds {
		rep.Credentials[identity.CredentialState(c, now)]++
	}
	return httpx.OK(w, rep)
}

// Metrics answers a service account's totals over the period.
func (s *Service) Metrics(w http.ResponseWriter, r *http.Request) error {
	n, days, list, err := s.usage(r)
	if err != nil {
		return err
	}
	rep := NHIMetricsRep{Days: days, LastUsedTimestamp: optionalTime(n.LastUsedAt)}
	for _, u := range list {
		rep.Tokens += u.Tokens
		rep.Failures += u.Failures
		rep.Introspections += u.Introspections
	}
	rep.Requests = rep.Tokens + rep.Failures + rep.Introspections
	return httpx.OK(w, rep)
}

func formatMillis(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
