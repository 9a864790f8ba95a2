// Package risk scores every sign-in on signals of its request against the
// user's own history (a new device, network or country, travel faster
// than a plane, an hour the user never signs in at, recent failures, the
// realm's lists of addresses) and lets the realm's policies allow it, ask
// a second factor, deny it, or allow it and publish an event. It plugs
// into the sign-in as its assessor and a required action (app/signin),
// and into the password grant through the same engine.
//
// Each SSO session then keeps a risk profile: its sign-in's assessment and
// what the session showed since (refreshes from other addresses, the
// client SDK's reports of device posture, network and behaviour), which
// the realm's session policies may answer by ending the session or asking
// a step-up (docs/risk.md).
package risk

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Signal names one thing an assessment looks at.
type Signal string

const (
	NewDevice        Signal = "new_device"        // no device cookie of the user's earlier sign-ins, or a new browser family
	NewIP            Signal = "new_ip"            // an address the user never signed in from
	NewNetwork       Signal = "new_network"       // its /24 (IPv4) or /48 (IPv6) is new too
	IPDenied         Signal = "ip_denylisted"     // the realm's deny list or the server's list file holds the address
	NewCountry       Signal = "new_country"       // a country the user never signed in from
	ImpossibleTravel Signal = "impossible_travel" // faster than MaxSpeedKmh since the last located sign-in
	UnusualHour      Signal = "unusual_hour"      // an hour of the day outside the user's history
	UserFailures     Signal = "user_failures"     // recent failed sign-ins of the user
	IPFailures       Signal = "ip_failures"       // recent failed sign-ins from the address
	DevicePosture    Signal = "device_posture"    // the client SDK reports a device short of the posture asked
	// The signals only the client SDK reports, of a session.
	AnonymizingNetwork Signal = "anonymizing_network" // a VPN, a proxy or Tor
	BehaviorAnomaly    Signal = "behavior_anomaly"    // behaviour far from the user's baseline
)

// Signals are every signal of a sign-in, in the order an assessment
// lists them.
var Signals = []Signal{NewDevice, NewIP, NewNetwork, IPDenied, NewCountry, ImpossibleTravel, UnusualHour, UserFailures,
	IPFailures, DevicePosture}

// SessionSignals are every signal of a session: a sign-in's, then those
// only the client SDK reports.
var SessionSignals = slices.Concat(Signals, []Signal{AnonymizingNetwork, BehaviorAnomaly})

// State is what an assessment found of a signal.
type State string

const (
	Present State = "present"
	Absent  State = "absent"
	// Unknown: the server cannot tell (no GeoIP database, too little
	// history); it never counts.
	Unknown State = "unknown"
)

// Level is how risky a sign-in is, from its score.
type Level string

const (
	Low      Level = "low"
	Medium   Level = "medium"
	High     Level = "high"
	Critical Level = "critical"
)

// Levels are the levels, lowest first, as app/signin orders them.
var Levels = []Level{Low, Medium, High, Critical}

// Action is what a policy does with a sign-in or a session it matches.
type Action string

const (
	Allow        Action = "allow"
	SecondFactor Action = "mfa"
	Deny         Action = "deny"
	Notify       Action = "notify"
	// StepUp ends a session, and the user's next sign-in must prove a
	// second factor.
	StepUp Action = "step-up"
	// EndSession ends a session.
	EndSession Action = "end-session"
)

// Actions are the actions of sign-in policies.
var Actions = []Action{Allow, SecondFactor, Deny, Notify}

// SessionActions are the actions of session policies.
var SessionActions = []Action{Allow, Notify, StepUp, EndSession}

// Scope is what a policy decides: sign-ins, or sessions once signed in.
type Scope string

const (
	ScopeSignIn  Scope = "sign-in"
	ScopeSession Scope = "session"
)

// Deps is what the risk area uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Realm is the realm the admin path names ({realm}), or the not-found
	// error.
	Realm   func(r *http.Request) (*store.Realm, error)
	BaseURL string
	// ClientIP is the address of a request's caller, as --trusted-proxies
	// makes it.
	ClientIP func(r *http.Request) string
	// Bus takes risk.notify and risk.denied, in the assessment's
	// transaction.
	Bus *bus.Bus
	// GeoIPPath is a MaxMind-format City database (--geoip-db); "" leaves
	// the place of every address unknown.
	GeoIPPath string
	// ListPath is a file of addresses and CIDR ranges to deny, one a line
	// (--ip-deny-file), read again when its modification time changes.
	ListPath string
	// Core is the identity core, for the credentials a second factor
	// needs.
	Core *identity.Core
	// SessionsEnded is told of the sessions a session policy ended, after
	// the commit (back-channel logout).
	SessionsEnded func(ctx context.Context, realm *store.Realm, ended []*store.Session)
	// Throttle counts the client SDK's posts per session: the server's
	// rate limits' sliding window.
	Throttle *identity.Throttle
}

// Service is the risk area: the assessor of the sign-in, its step, the
// admin API.
type Service struct {
	deps     Deps
	geo      *geoDB
	list     *listFile
	failures *failures
	configs  *store.LookupCache[*realmConfig] // by realm ID
}

// New builds the risk area; a GeoIP database that cannot be read is an
// error, so that a server never runs believing it locates addresses.
func New(d Deps) (*Service, error) {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.SessionsEnded == nil {
		d.SessionsEnded = func(context.Context, *store.Realm, []*store.Session) {}
	}
	if d.Throttle == nil {
		d.Throttle = identity.NewThrottle(d.Now, identity.ThrottleWindow)
	}
	s := &Service{deps: d, failures: newFailures(d.Now), configs: store.NewLookupCache[*realmConfig]()}
	if d.GeoIPPath != "" {
		g, err := openGeo(d.GeoIPPath)
		if err != nil {
			return nil, err
		}
		s.geo = g
	}
	if d.ListPath != "" {
		l, err := newListFile(d.ListPath, d.Log)
		if err != nil {
			return nil, err
		}
		s.list = l
	}
	return s, nil
}

// network is the address's /24 (IPv4) or /48 (IPv6).
func network(ip netip.Addr) string {
	bits := 48
	if ip.Is4() {
		bits = 24
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return ""
	}
	return p.String()
}
