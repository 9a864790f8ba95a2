package risk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/store"
)

// Behaviour, kept simple enough to explain: each user has a baseline per
// metric, the mean and standard deviation of the samples the client SDK
// sent of them. A batch is judged metric by metric once the baseline has
// minBaselineSamples: the batch's mean more than anomalyDeviations
// deviations from the baseline's mean is an anomaly. Samples of a metric
// judged normal, or still learning, join the baseline; an anomalous
// batch does not, so that whoever took the session over cannot teach the
// baseline their own hands.

// Metric is one measure of how the user types or moves.
type Metric string

const (
	TypingInterval Metric = "typing_interval_ms"  // between two keystrokes
	KeyDwell       Metric = "key_dwell_ms"        // a key held down
	MouseVelocity  Metric = "mouse_velocity_px_s" // the pointer's speed
	ScrollVelocity Metric = "scroll_velocity_px_s"
)

// Metrics are every metric, in the order verdicts list them.
var Metrics = []Metric{TypingInterval, KeyDwell, MouseVelocity, ScrollVelocity}

const (
	// minBaselineSamples is how many samples of a metric its baseline
	// learns before it judges.
	minBaselineSamples = 20
	// anomalyDeviations is how far from the baseline's mean, in its
	// standard deviations, a batch's mean is an anomaly.
	anomalyDeviations = 3.0
	// baselineWindow is how many samples' worth the baseline weighs at
	// most: older behaviour fades as the user's own changes.
	baselineWindow = 1000
	// maxSampleValue bounds a sample: no metric's unit comes near it.
	maxSampleValue = 1_000_000
)

// metricStats is a metric's baseline: Welford's running mean and sum of
// squared deviations.
type metricStats struct {
	N    float64 `json:"n"`
	Mean float64 `json:"mean"`
	M2   float64 `json:"m2"`
}

func (m *metricStats) add(x float64) {
	m.N++
	d := x - m.Mean
	m.Mean += d / m.N
	m.M2 += d * (x - m.Mean)
	if m.N > baselineWindow {
		m.M2 *= baselineWindow / m.N
		m.N = baselineWindow
	}
}

func (m metricStats) deviation() float64 {
	if m.N < 2 {
		return 0
	}
	return math.Sqrt(m.M2 / (m.N - 1))
}

// spread is the deviation a batch is measured in: never less than a
// twentieth of the mean, nor one unit, so that a user who typed with
// the regularity of a machine is not an anomaly for one slower key.
func (m metricStats) spread() float64 {
	return max(m.deviation(), math.Abs(m.Mean)/20, 1)
}

// baseline is a user's baseline, by metric.
type baseline map[Metric]*metricStats

// Sample is one measure the client SDK took.
type Sample struct {
	Metric Metric  `json:"metric"`
	Value  float64 `json:"value"`
}

// The states of a metric in a verdict.
const (
	metricLearning  = "learning"
	metricNormal    = "normal"
	metricAnomalous = "anomalous"
)

// MetricVerdict is what a batch showed of one metric against the
// user's baseline.
type MetricVerdict struct {
	Metric            Metric  `json:"metric"`
	Samples           int     `json:"samples"`
	Mean              float64 `json:"mean"`
	BaselineSamples   int     `json:"baselineSamples"`
	BaselineMean      float64 `json:"baselineMean"`
	BaselineDeviation float64 `json:"baselineDeviation"`
	// Deviations is how far the batch's mean is from the baseline's, in
	// the baseline's deviations; 0 while learning.
	Deviations float64 `json:"deviations"`
	State      string  `json:"state"` // learning, normal or anomalous
}

// BehaviorVerdict is what a batch of samples showed.
type BehaviorVerdict struct {
	Samples   int             `json:"samples"`
	Metrics   []MetricVerdict `json:"metrics"`
	Anomalous bool            `json:"anomalous"`
}

// judgeSamples judges a batch against b, and learns into b what it may.
func judgeSamples(b baseline, samples []Sample) BehaviorVerdict {
	v := BehaviorVerdict{Samples: len(samples), Metrics: []MetricVerdict{}}
	for _, m := range Metrics {
		var values []float64
		for _, s := range samples {
			if s.Metric == m {
				values = append(values, s.Value)
			}
		}
		if len(values) == 0 {
			continue
		}
		st := b[m]
		if st == nil {
			st = &metricStats{}
			b[m] = st
		}
		sum := 0.0
		for _, x := range values {
			sum += x
		}
		mv := MetricVerdict{Metric: m, Samples: len(values), Mean: round2(sum / float64(len(values))),
			BaselineSamples: int(st.N), BaselineMean: round2(st.Mean), BaselineDeviation: round2(st.deviation()), State: metricLearning}
		if st.N >= minBaselineSamples {
			mv.Deviations = round2(math.Abs(sum/float64(len(values))-st.Mean) / st.spread())
			mv.State = metricNormal
			if mv.Deviations > anomalyDeviations {
				mv.State, v.Anomalous = metricAnomalous, true
			}
		}
		if mv.State != metricAnomalous {
			for _, x := range values {
				st.add(x)
			}
		}
		v.Metrics = append(v.Metrics, mv)
	}
	return v
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// finding is the behavior_anomaly signal the verdict gives.
func (v BehaviorVerdict) finding() (State, string) {
	var anomalous, normal, learning []string
	for _, m := range v.Metrics {
		switch m.State {
		case metricAnomalous:
			anomalous = append(anomalous, fmt.Sprintf("%s: %g against the user's %g ± %g (%g deviations)", m.Metric, m.Mean,
				m.BaselineMean, m.BaselineDeviation, m.Deviations))
		case metricNormal:
			normal = append(normal, string(m.Metric))
		default:
			learning = append(learning, fmt.Sprintf("%s (%d of %d samples)", m.Metric, m.BaselineSamples, minBaselineSamples))
		}
	}
	switch {
	case len(anomalous) > 0:
		return Present, strings.Join(anomalous, "; ")
	case len(normal) > 0:
		return Absent, "within " + fmt.Sprint(anomalyDeviations) + " deviations of the user's baseline: " + strings.Join(normal, ", ")
	}
	return Unknown, "learning the user's baseline: " + strings.Join(learning, ", ")
}

// readBaseline reads the user's baseline and its revision; -1 for a user
// without one yet.
func (s *Service) readBaseline(ctx context.Context, realm *store.Realm, userID string) (baseline, int64, error) {
	b := baseline{}
	rec, err := s.deps.Store.GetRiskBaseline(ctx, realm.ID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return b, -1, nil
	} else if err != nil {
		return nil, 0, err
	}
	if err := json.Unmarshal([]byte(rec.Metrics), &b); err != nil {
		return nil, 0, fmt.Errorf("risk baseline of user %s: %w", userID, err)
	}
	for m := range b {
		if !slices.Contains(Metrics, m) || b[m] == nil {
			delete(b, m)
		}
	}
	return b, rec.Revision, nil
}
