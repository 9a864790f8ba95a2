package risk

import (
	"math"
	"strings"
	"testing"
)

func typing(values ...float64) []Sample {
	out := make([]Sample, len(values))
	for i, v := range values {
		out[i] = Sample{Metric: TypingInterval, Value: v}
	}
	return out
}

// A baseline learns until it has enough samples, then judges a batch by
// its mean; an anomalous batch is not learnt.
func TestJudgeSamples(t *testing.T) {
	b := baseline{}
	learning := make([]float64, minBaselineSamples)
	for i := range learning {
		learning[i] = 100 + float64(i%2)*20 // 100, 120, …: mean 110
	}
	v := judgeSamples(b, typing(learning...))
	if st, _ := v.finding(); st != Unknown || v.Anomalous || v.Metrics[0].State != metricLearning {
		t.Fatalf("learning: %+v", v)
	}
	if st := b[TypingInterval]; st.N != minBaselineSamples || math.Abs(st.Mean-110) > 1e-9 {
		t.Fatalf("baseline %+v", st)
	}
	v = judgeSamples(b, typing(105, 115))
	if st, detail := v.finding(); st != Absent || !strings.Contains(detail, "typing_interval_ms") {
		t.Fatalf("a normal batch: %+v", v)
	}
	v = judgeSamples(b, typing(400, 420))
	st, detail := v.finding()
	if st != Present || !v.Anomalous || v.Metrics[0].Deviations <= anomalyDeviations || !strings.Contains(detail, "410") {
		t.Fatalf("an anomalous batch: %+v %s", v, detail)
	}
	if n := b[TypingInterval].N; n != minBaselineSamples+2 {
		t.Fatalf("the anomalous batch was learnt: %v samples", n)
	}
	// Metrics not sent are not judged; the window caps the weight.
	for range 2 * baselineWindow {
		b[MouseVelocity] = orNew(b[MouseVelocity])
		b[MouseVelocity].add(500)
	}
	if n := b[MouseVelocity].N; n != baselineWindow {
		t.Fatalf("the window holds %v samples", n)
	}
}

func orNew(m *metricStats) *metricStats {
	if m == nil {
		return &metricStats{}
	}
	return m
}

// A report's flags make the device_posture signal: any fault is present,
// only good flags absent, none unknown.
func TestDevicePostureFinding(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		d    Device
		want State
	}{
		{Device{Platform: "ios", Jailbroken: &yes}, Present},
		{Device{Platform: "windows", DiskEncrypted: &yes, Firewall: &no}, Present},
		{Device{Platform: "macos", DiskEncrypted: &yes, ScreenLock: &yes, Jailbroken: &no}, Absent},
		{Device{Platform: "linux", Managed: &no}, Unknown},
	} {
		if got, detail := tc.d.finding(); got != tc.want {
			t.Errorf("%+v: %s (%s), want %s", tc.d, got, detail, tc.want)
		}
	}
	if st, _ := (NetworkContext{Tor: &yes}).finding(); st != Present {
		t.Fatal("Tor is no anonymizing network")
	}
	if st, _ := (NetworkContext{VPN: &no}).finding(); st != Absent {
		t.Fatal("no VPN is not absent")
	}
}

// Every session signal has a default weight, and the sign-in's signals
// come first, in their order.
func TestSessionSignals(t *testing.T) {
	for _, sig := range SessionSignals {
		if _, ok := DefaultWeights[sig]; !ok {
			t.Fatalf("no default weight for %s", sig)
		}
	}
	for i, sig := range Signals {
		if SessionSignals[i] != sig {
			t.Fatalf("session signals %v", SessionSignals)
		}
	}
}
