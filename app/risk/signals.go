package risk

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/idenplane/idenplane/store"
)

// Finding is what an assessment found of one signal, and what it added
// to the score.
type Finding struct {
	Signal       Signal `json:"signal"`
	State        State  `json:"state"`
	Detail       string `json:"detail,omitempty"`
	Weight       int    `json:"weight"`
	Contribution int    `json:"contribution"`
}

// observation is what the sign-in's request shows.
type observation struct {
	realmID, userID string
	ip              netip.Addr
	ipText          string
	network         string
	device          []byte // SHA-256 of the device cookie; nil without one
	agent           string
	place           place
	geo             bool // a GeoIP database is loaded
	at              time.Time
}

// findings judges each signal of o against the user's history (their
// last sign-ins that succeeded, newest first). A signal that needs what
// the server lacks is unknown and never counts.
func (s *Service) findings(cfg *realmConfig, o *observation, history []*store.RiskAssessment) []Finding {
	out := make([]Finding, 0, len(Signals))
	add := func(sig Signal, st State, detail string) {
		f := Finding{Signal: sig, State: st, Detail: detail, Weight: cfg.settings.Weights[sig]}
		if st == Present {
			f.Contribution = f.Weight
		}
		out = append(out, f)
	}
	first := len(history) == 0
	allowed := o.ip.IsValid() && containsAddr(cfg.allow, o.ip)
	novelty := func(sig Signal, seen func(h *store.RiskAssessment) bool, what string) {
		switch {
		case first:
			add(sig, Absent, "the user's first sign-in: nothing to compare with")
		case slices.ContainsFunc(history, seen):
			add(sig, Absent, "")
		default:
			add(sig, Present, what)
		}
	}

	novelty(NewDevice, func(h *store.RiskAssessment) bool {
		return h.UserAgent == o.agent && (o.device == nil || bytes.Equal(h.DeviceHash, o.device))
	}, "a browser or device the user has not signed in with ("+o.agent+")")
	if allowed {
		add(NewIP, Absent, "an address of the realm's allow list")
		add(NewNetwork, Absent, "an address of the realm's allow list")
	} else {
		novelty(NewIP, func(h *store.RiskAssessment) bool { return h.IPAddress == o.ipText }, "an address the user has not signed in from")
		novelty(NewNetwork, func(h *store.RiskAssessment) bool { return h.Network == o.network },
			"a network ("+o.network+") the user has not signed in from")
	}

	switch {
	case o.ip.IsValid() && containsAddr(cfg.deny, o.ip):
		add(IPDenied, Present, "the realm's deny list holds the address")
	case o.ip.IsValid() && s.list.holds(o.ip):
		add(IPDenied, Present, "the server's deny list file holds the address")
	default:
		add(IPDenied, Absent, "")
	}

	switch {
	case !o.geo:
		add(NewCountry, Unknown, "no GeoIP database (--geoip-db)")
		add(ImpossibleTravel, Unknown, "no GeoIP database (--geoip-db)")
	case allowed:
		add(NewCountry, Absent, "an address of the realm's allow list")
		add(ImpossibleTravel, Absent, "an address of the realm's allow list")
	default:
		if o.place.Country == "" {
			add(NewCountry, Unknown, "the database has no country for the address")
		} else {
			novelty(NewCountry, func(h *store.RiskAssessment) bool { return h.Country == "" || h.Country == o.place.Country },
				"a country ("+o.place.Country+") the user has not signed in from")
		}
		add(s.travel(cfg, o, history))
	}

	add(s.hour(cfg, o, history))

	if s.failures.many(userKey(o.realmID, o.userID)) {
		add(UserFailures, Present, fmt.Sprintf("%d or more failed sign-ins of the user in %s", failureLimit, failureWindow))
	} else {
		add(UserFailures, Absent, "")
	}
	if s.failures.many(ipKey(o.realmID, o.ipText)) {
		add(IPFailures, Present, fmt.Sprintf("%d or more failed sign-ins from the address in %s", failureLimit, failureWindow))
	} else {
		add(IPFailures, Absent, "")
	}
	add(DevicePosture, Unknown, "reported by the client SDK once the session runs (continuous verification)")
	return out
}

// travel judges the journey from the user's last located sign-in.
func (s *Service) travel(cfg *realmConfig, o *observation, history []*store.RiskAssessment) (Signal, State, string) {
	if !o.place.Located {
		return ImpossibleTravel, Unknown, "the database has no coordinates for the address"
	}
	i := slices.IndexFunc(history, func(h *store.RiskAssessment) bool { return h.Located })
	if i < 0 {
		return ImpossibleTravel, Absent, "no earlier sign-in with coordinates"
	}
	prev := history[i]
	km := distanceKm(float64(prev.LatitudeE6)/1e6, float64(prev.LongitudeE6)/1e6, o.place.Lat, o.place.Lon)
	// Addresses are placed to a city at best: distances below this are
	// noise, however short the time.
	const noiseKm = 100
	if km < noiseKm {
		return ImpossibleTravel, Absent, ""
	}
	hours := o.at.Sub(time.UnixMilli(prev.CreatedAt)).Hours()
	speed := km / max(hours, 1.0/60)
	if speed > float64(cfg.settings.MaxSpeedKmh) {
		return ImpossibleTravel, Present, fmt.Sprintf("%.0f km from the last sign-in (%s) in %s: %.0f km/h",
			km, prev.Country, o.at.Sub(time.UnixMilli(prev.CreatedAt)).Round(time.Minute), speed)
	}
	return ImpossibleTravel, Absent, ""
}

// hour judges the hour of day (UTC) against those of the user's last
// sign-ins: unusual when no sign-in of theirs fell within an hour of it.
func (s *Service) hour(cfg *realmConfig, o *observation, history []*store.RiskAssessment) (Signal, State, string) {
	n := min(len(history), cfg.settings.HourHistory)
	if n < cfg.settings.MinHourHistory {
		return UnusualHour, Unknown, fmt.Sprintf("%d earlier sign-ins, %d needed", n, cfg.settings.MinHourHistory)
	}
	h := o.at.UTC().Hour()
	for _, past := range history[:n] {
		ph := time.UnixMilli(past.CreatedAt).UTC().Hour()
		if d := (h - ph + 24) % 24; d <= 1 || d == 23 {
			return UnusualHour, Absent, ""
		}
	}
	return UnusualHour, Present, fmt.Sprintf("%02d:00 UTC, an hour the user's last %d sign-ins never fell near", h, n)
}
