package events

import (
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Keycloak's events configuration endpoint: the one place after creation
// where recording is switched, since the realm PUT accepts only the spec's
// update fields.

// EventsConfigRep is a realm's events configuration, as Keycloak's
// endpoint shows it.
type EventsConfigRep struct {
	EventsEnabled      bool     `json:"eventsEnabled"`
	EventsExpiration   int      `json:"eventsExpiration"`
	EnabledEventTypes  []string `json:"enabledEventTypes"`
	AdminEventsEnabled bool     `json:"adminEventsEnabled"`
}

func toEventsConfig(r *store.Realm) EventsConfigRep {
	return EventsConfigRep{EventsEnabled: r.EventsEnabled, EventsExpiration: r.EventsExpiration,
		EnabledEventTypes: EnabledTypesRep(r.EnabledEventTypes), AdminEventsEnabled: r.AdminEventsEnabled}
}

// GetConfig answers the realm's events configuration.
func (s *Service) GetConfig(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toEventsConfig(realm))
	return nil
}

// PutConfig changes the fields of the events configuration the body
// names, as every PUT does.
func (s *Service) PutConfig(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	d := s.deps.DefaultRealm
	defaults := map[string]any{"eventsEnabled": d.EventsEnabled, "eventsExpiration": d.EventsExpiration,
		"enabledEventTypes": []string{}, "adminEventsEnabled": d.AdminEventsEnabled}
	current, err := httpx.AsJSONMap(toEventsConfig(realm), defaults)
	if err != nil {
		return err
	}
	var cfg EventsConfigRep
	if err := httpx.Update(body, current, defaults, false, &cfg); err != nil {
		return err
	}
	realm.EventsEnabled, realm.EventsExpiration, realm.AdminEventsEnabled = cfg.EventsEnabled, cfg.EventsExpiration, cfg.AdminEventsEnabled
	realm.EnabledEventTypes = cfg.EnabledEventTypes
	if err := s.deps.ValidateRealm(realm); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateRealm(r.Context(), realm); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toEventsConfig(realm))
	return nil
}
