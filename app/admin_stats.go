package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
)

// realmStatsRep is a realm's counts as the API shows them.
type realmStatsRep struct {
	Users              int `json:"users"`
	ServiceAccounts    int `json:"serviceAccounts"`
	Clients            int `json:"clients"`
	RealmRoles         int `json:"realmRoles"`
	ClientRoles        int `json:"clientRoles"`
	Groups             int `json:"groups"`
	ActiveSessions     int `json:"activeSessions"`
	ClientSessions     int `json:"clientSessions"`
	LoginEventsLastDay int `json:"loginEventsLastDay"`
	LoginErrorsLastDay int `json:"loginErrorsLastDay"`
	AdminEventsLastDay int `json:"adminEventsLastDay"`
}

func (a *App) realmStats(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	st, err := a.store.GetRealmStats(r.Context(), realm.ID, a.now().UnixMilli())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, realmStatsRep(*st))
	return nil
}

type consentStatsRep struct {
	TotalConsents     int                 `json:"totalConsents"`
	UsersWithConsents int                 `json:"usersWithConsents"`
	Clients           []clientConsentsRep `json:"clients"`
}

type clientConsentsRep struct {
	ClientID string         `json:"clientId"`
	Users    int            `json:"users"`
	Scopes   map[string]int `json:"scopes"`
}

func (a *App) consentStats(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	st, err := a.store.GetConsentStats(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	rep := consentStatsRep{TotalConsents: st.TotalConsents, UsersWithConsents: st.UsersWithConsents,
		Clients: make([]clientConsentsRep, len(st.Clients))}
	for i, c := range st.Clients {
		rep.Clients[i] = clientConsentsRep(c)
	}
	httpx.WriteJSON(w, http.StatusOK, rep)
	return nil
}
