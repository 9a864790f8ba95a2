package scim

import (
	"net/http"
	"sync"

	"github.com/idenplane/idenplane/app/httpx"
)

// recentErrorsKept is how many of a realm's latest SCIM errors the status
// shows.
const recentErrorsKept = 20

// RecentError is a SCIM request of a realm's token that failed.
type RecentError struct {
	Time     int64  `json:"time"` // Unix milliseconds
	Method   string `json:"method"`
	Path     string `json:"path"`
	Status   int    `json:"status"`
	ScimType string `json:"scimType,omitempty"`
	Detail   string `json:"detail"`
}

// recentErrors keeps each realm's latest errors, in memory: they help an
// administrator see why provisioning fails now, and go with a restart.
type recentErrors struct {
	mu      sync.Mutex
	byRealm map[string][]RecentError
}

func (e *recentErrors) add(realmID string, re RecentError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byRealm == nil {
		e.byRealm = map[string][]RecentError{}
	}
	list := append(e.byRealm[realmID], re)
	if len(list) > recentErrorsKept {
		list = list[len(list)-recentErrorsKept:]
	}
	e.byRealm[realmID] = list
}

// latest lists a realm's errors, the latest first.
func (e *recentErrors) latest(realmID string) []RecentError {
	e.mu.Lock()
	defer e.mu.Unlock()
	list := e.byRealm[realmID]
	out := make([]RecentError, len(list))
	for i, re := range list {
		out[len(list)-1-i] = re
	}
	return out
}

// StatusRep is the provisioning status of a realm.
type StatusRep struct {
	Tokens        map[string]int `json:"tokens"` // by status, and total
	Users         int            `json:"users"`  // users SCIM has written
	Groups        int            `json:"groups"` // groups SCIM has written
	LastRequestAt int64          `json:"lastRequestAt,omitempty"`
	RecentErrors  []RecentError  `json:"recentErrors"`
}

// Status answers the realm's provisioning status: its tokens, what SCIM
// has provisioned, the last request and the latest errors.
func (s *Service) Status(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	tokens, err := s.deps.Store.ListSCIMTokens(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	rep := StatusRep{Tokens: map[string]int{"total": len(tokens), tokenActive: 0, tokenDisabled: 0, tokenExpired: 0,
		tokenRevoked: 0}, RecentErrors: s.errors.latest(realm.ID)}
	now := s.deps.Now().UnixMilli()
	for _, t := range tokens {
		rep.Tokens[tokenStatus(t, now)]++
		rep.LastRequestAt = max(rep.LastRequestAt, t.LastUsedAt)
	}
	if rep.Users, rep.Groups, err = s.deps.Store.CountSCIMResources(r.Context(), realm.ID); err != nil {
		return err
	}
	return httpx.OK(w, rep)
}
