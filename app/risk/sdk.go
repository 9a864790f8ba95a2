package risk

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Continuous verification: what the client SDK, running in the
// application, reports of the session it signed in to. Each post carries
// the user's access token; its session is the token's sid, and a body
// that names a session must name that one. The posts are small and few:
// a body is capped, and so are the posts of a session per kind in the
// server's rate limits' sliding window.

const (
	// maxSignalBody caps a report's body; a batch of samples may be
	// larger.
	maxSignalBody  = 4 << 10
	maxSamplesBody = 32 << 10
	// MaxSamples is the most samples a batch may carry.
	MaxSamples = 200
	// signalLimit is how many posts of one kind a session may make in
	// the rate limits' window (identity.ThrottleWindow, 15 minutes): one
	// every 45 seconds.
	signalLimit = 20
)

// Caller is whoever posts the client SDK's signals: the user of the
// access token, and the session the token belongs to.
type Caller struct {
	Realm    *store.Realm
	User     *store.User
	ClientID string         // the token's azp
	SID      string         // the token's sid; "" for none
	Session  *store.Session // the live session sid names
}

// SignalHandler serves one of the client SDK's posts, for an
// authenticated caller.
type SignalHandler func(w http.ResponseWriter, r *http.Request, c *Caller) error

// Device is what the client SDK reports of the device: each flag left
// out is not judged.
type Device struct {
	// Platform: windows, macos, linux, ios, android, chromeos or other.
	Platform  string `json:"platform"`
	OSVersion string `json:"osVersion,omitempty"`
	// DiskEncrypted, ScreenLock and Firewall false, or Jailbroken true,
	// make the device short of its posture.
	DiskEncrypted *bool `json:"diskEncrypted,omitempty"`
	ScreenLock    *bool `json:"screenLock,omitempty"`
	Firewall      *bool `json:"firewall,omitempty"`
	Jailbroken    *bool `json:"jailbroken,omitempty"` // rooted, for Android
	// Managed says an MDM manages the device; a device of its own is no
	// fault.
	Managed *bool `json:"managed,omitempty"`
}

// DevicePostureReport is the body of POST …/device-posture.
type DevicePostureReport struct {
	// SessionID, when given, must be the access token's session.
	SessionID string `json:"sessionId,omitempty"`
	Device
}

// NetworkContext is what the client SDK reports of the network; the
// address is the one the server sees.
type NetworkContext struct {
	VPN   *bool `json:"vpn,omitempty"`
	Proxy *bool `json:"proxy,omitempty"`
	Tor   *bool `json:"tor,omitempty"`
	// ConnectionType: wifi, cellular, ethernet or other.
	ConnectionType string `json:"connectionType,omitempty"`
}

// NetworkContextReport is the body of POST …/network-context.
type NetworkContextReport struct {
	SessionID string `json:"sessionId,omitempty"`
	NetworkContext
}

// BehavioralSamples is the body of POST …/behavioral/samples.
type BehavioralSamples struct {
	SessionID string   `json:"sessionId,omitempty"`
	Samples   []Sample `json:"samples"`
}

// SignalsAccepted answers a post: when it was taken, and what became of
// the session, so that the application knows to sign in again.
type SignalsAccepted struct {
	SessionID  string `json:"sessionId"`
	ReceivedAt int64  `json:"receivedAt"`
	// Session: active, ended (a session policy ended it) or step-up (a
	// policy ended it, and the next sign-in must prove a second factor).
	Session string `json:"session"`
}

var (
	platforms       = []string{"windows", "macos", "linux", "ios", "android", "chromeos", "other"}
	connectionTypes = []string{"wifi", "cellular", "ethernet", "other"}
)

// accept checks the caller's session, counts the post against the
// session's limit, and reads the body into into, checking it: any refusal
// leaves nothing stored.
func (s *Service) accept(w http.ResponseWriter, r *http.Request, c *Caller, kind EventKind, limit int64, into any,
	named func() string, check func() error) error {
	switch {
	case c.SID == "":
		return apperr.Forbidden("the access token names no SSO session (sid): send a token of the user's sign-in")
	case c.Session.Kind != store.SessionSSO:
		return apperr.Forbidden("an offline token's session is not watched: send a token of the user's sign-in")
	}
	key := "risk-signals\x00" + c.Realm.ID + "\x00" + c.Session.ID + "\x00" + string(kind)
	if wait := s.deps.Throttle.Wait(key, signalLimit); wait > 0 {
		return apperr.TooMany(wait, "the session sent %d %s reports in %s: send fewer", signalLimit, kind, "15 minutes")
	}
	s.deps.Throttle.Fail(key)
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := httpx.DecodeJSON(r, into); err != nil {
		return err
	}
	if id := named(); id != "" && id != c.Session.ID {
		return apperr.Forbidden("the access token belongs to another session than the one the body names")
	}
	return check()
}

func checkFlags(platform, osVersion string) error {
	if !slices.Contains(platforms, platform) {
		return apperr.Field("platform", "must be one of %s, not %q", strings.Join(platforms, ", "), platform)
	}
	return validate.Setting("osVersion", osVersion, 64)
}

// answer is the post's answer, once observed.
func (s *Service) answer(w http.ResponseWriter, c *Caller, out *observed) error {
	state := "active"
	switch out.ended {
	case EndSession:
		state = "ended"
	case StepUp:
		state = "step-up"
	}
	httpx.WriteJSON(w, http.StatusAccepted, SignalsAccepted{SessionID: c.Session.ID, ReceivedAt: out.p.rec.UpdatedAt, Session: state})
	return nil
}

// PostDevicePosture takes the client SDK's report of the device: it makes
// the session's device_posture signal, the latest report deciding.
func (s *Service) PostDevicePosture(w http.ResponseWriter, r *http.Request, c *Caller) error {
	var in DevicePostureReport
	err := s.accept(w, r, c, KindDevicePosture, maxSignalBody, &in, func() string { return in.SessionID },
		func() error { return checkFlags(in.Platform, in.OSVersion) })
	if err != nil {
		return err
	}
	posture := in.Device
	out, err := s.observe(r.Context(), c.Realm, c.User, c.Session.ID, c.Session, nil, look{kind: KindDevicePosture,
		clientID: c.ClientID, ip: s.deps.ClientIP(r),
		judge: func(_ context.Context, _ *realmConfig, p *profile, now time.Time) (any, []Signal, error) {
			st, detail := posture.finding()
			p.report(DevicePosture, st, detail)
			b, _ := json.Marshal(posture)
			p.rec.DevicePosture, p.rec.PostureAt = string(b), now.UnixMilli()
			return posture, presentIf(st, DevicePosture), nil
		}})
	if err != nil {
		return err
	}
	return s.answer(w, c, out)
}

// finding is the device_posture signal a report gives.
func (d Device) finding() (State, string) {
	var short, fine []string
	flag := func(v *bool, bad bool, shortText, fineText string) {
		switch {
		case v == nil:
		case *v == bad:
			short = append(short, shortText)
		default:
			fine = append(fine, fineText)
		}
	}
	flag(d.Jailbroken, true, "jailbroken or rooted", "not jailbroken")
	flag(d.DiskEncrypted, false, "its disk is not encrypted", "disk encrypted")
	flag(d.ScreenLock, false, "its screen has no lock", "screen lock")
	flag(d.Firewall, false, "its firewall is off", "firewall on")
	switch {
	case len(short) > 0:
		return Present, "the device (" + d.Platform + ") is short of its posture: " + strings.Join(short, ", ")
	case len(fine) > 0:
		return Absent, "the device (" + d.Platform + ") reports " + strings.Join(fine, ", ")
	}
	return Unknown, "the report says nothing the posture is judged on"
}

// PostNetworkContext takes the client SDK's report of the network: a
// VPN, proxy or Tor makes anonymizing_network, the latest report
// deciding; the address the post comes from is judged as a refresh's.
func (s *Service) PostNetworkContext(w http.ResponseWriter, r *http.Request, c *Caller) error {
	var in NetworkContextReport
	err := s.accept(w, r, c, KindNetworkContext, maxSignalBody, &in, func() string { return in.SessionID }, func() error {
		if in.ConnectionType != "" && !slices.Contains(connectionTypes, in.ConnectionType) {
			return apperr.Field("connectionType", "must be one of %s, not %q", strings.Join(connectionTypes, ", "), in.ConnectionType)
		}
		return nil
	})
	if err != nil {
		return err
	}
	net := in.NetworkContext
	out, err := s.observe(r.Context(), c.Realm, c.User, c.Session.ID, c.Session, nil, look{kind: KindNetworkContext,
		clientID: c.ClientID, ip: s.deps.ClientIP(r),
		judge: func(_ context.Context, _ *realmConfig, p *profile, now time.Time) (any, []Signal, error) {
			st, detail := net.finding()
			p.report(AnonymizingNetwork, st, detail)
			b, _ := json.Marshal(net)
			p.rec.NetworkContext, p.rec.NetworkAt = string(b), now.UnixMilli()
			return net, presentIf(st, AnonymizingNetwork), nil
		}})
	if err != nil {
		return err
	}
	return s.answer(w, c, out)
}

// finding is the anonymizing_network signal a report gives.
func (n NetworkContext) finding() (State, string) {
	var on []string
	said := false
	for _, f := range []struct {
		v    *bool
		name string
	}{{n.VPN, "a VPN"}, {n.Proxy, "a proxy"}, {n.Tor, "Tor"}} {
		if f.v != nil {
			said = true
			if *f.v {
				on = append(on, f.name)
			}
		}
	}
	switch {
	case len(on) > 0:
		return Present, "the client reports " + strings.Join(on, ", ")
	case said:
		return Absent, "the client reports no VPN, proxy or Tor"
	}
	return Unknown, "the report says nothing of VPN, proxy or Tor"
}

// PostBehavioralSamples takes a batch of samples of how the user types
// and moves: measured against the user's baseline, they make
// behavior_anomaly, the latest batch deciding.
func (s *Service) PostBehavioralSamples(w http.ResponseWriter, r *http.Request, c *Caller) error {
	var in BehavioralSamples
	err := s.accept(w, r, c, KindBehavioral, maxSamplesBody, &in, func() string { return in.SessionID }, func() error {
		switch {
		case len(in.Samples) == 0:
			return apperr.Field("samples", "holds no sample")
		case len(in.Samples) > MaxSamples:
			return apperr.Field("samples", "holds %d samples; a batch holds at most %d", len(in.Samples), MaxSamples)
		}
		for i, sm := range in.Samples {
			field := fmt.Sprintf("samples[%d]", i)
			if !slices.Contains(Metrics, sm.Metric) {
				return apperr.Field(field+".metric", "unknown metric %q (%s)", sm.Metric, metricList())
			}
			if sm.Value < 0 || sm.Value > maxSampleValue {
				return apperr.Field(field+".value", "must be from 0 to %d, not %g", maxSampleValue, sm.Value)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	ctx := r.Context()
	var learnt *store.RiskBaseline
	var prev int64
	out, err := s.observe(ctx, c.Realm, c.User, c.Session.ID, c.Session, nil, look{kind: KindBehavioral,
		clientID: c.ClientID, ip: s.deps.ClientIP(r),
		judge: func(ctx context.Context, _ *realmConfig, p *profile, now time.Time) (any, []Signal, error) {
			b, rev, err := s.readBaseline(ctx, c.Realm, c.User.ID)
			if err != nil {
				return nil, nil, err
			}
			v := judgeSamples(b, in.Samples)
			st, detail := v.finding()
			p.report(BehaviorAnomaly, st, detail)
			verdict, _ := json.Marshal(v)
			p.rec.Behavior, p.rec.BehaviorAt = string(verdict), now.UnixMilli()
			metrics, _ := json.Marshal(b)
			learnt = &store.RiskBaseline{UserID: c.User.ID, RealmID: c.Realm.ID, Metrics: string(metrics), Revision: max(rev, 0) + 1,
				UpdatedAt: now.UnixMilli()}
			prev = rev
			return v, presentIf(st, BehaviorAnomaly), nil
		},
		also: func(ctx context.Context, tx *store.Store) error { return tx.SaveRiskBaseline(ctx, learnt, prev) }})
	if err != nil {
		return err
	}
	return s.answer(w, c, out)
}

func metricList() string {
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

func presentIf(st State, sig Signal) []Signal {
	if st == Present {
		return []Signal{sig}
	}
	return nil
}
