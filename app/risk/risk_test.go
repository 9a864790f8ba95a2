package risk

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/app/signin"
)

// The levels are app/signin's, in its order: a flow's riskLevel
// condition compares them.
func TestLevelsAreTheSignInsLevels(t *testing.T) {
	var got []string
	for _, l := range Levels {
		got = append(got, string(l))
	}
	if !slices.Equal(got, signin.RiskLevels) {
		t.Fatalf("levels %v, signin's %v", got, signin.RiskLevels)
	}
	for _, a := range Actions {
		if !slices.Contains([]signin.RiskAction{signin.RiskAllow, signin.RiskSecondFactor, signin.RiskDeny, signin.RiskNotify}, signin.RiskAction(a)) {
			t.Fatalf("action %s unknown to signin", a)
		}
	}
}

func TestDistance(t *testing.T) {
	if d := distanceKm(48.85, 2.35, 35.68, 139.69); d < 9650 || d > 9760 {
		t.Fatalf("Paris to Tokyo: %.0f km", d)
	}
	if d := distanceKm(48.85, 2.35, 48.85, 2.35); d != 0 {
		t.Fatalf("no journey: %.3f km", d)
	}
}

func TestDefaultsAreValid(t *testing.T) {
	s := DefaultSettings()
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	for _, sig := range Signals {
		if _, ok := DefaultWeights[sig]; !ok {
			t.Fatalf("no default weight for %s", sig)
		}
	}
	for score, want := range map[int]Level{0: Low, 29: Low, 30: Medium, 60: High, 84: High, 85: Critical, 100: Critical} {
		if got := s.level(score); got != want {
			t.Fatalf("score %d: %s, want %s", score, got, want)
		}
	}
}

func TestParseList(t *testing.T) {
	list, err := parseList([]byte("# comment\n192.0.2.1\n\n2001:db8::/48 # office\n198.51.100.0/24\n"))
	if err != nil || len(list) != 3 {
		t.Fatalf("%v %v", list, err)
	}
	for addr, want := range map[string]bool{"192.0.2.1": true, "192.0.2.2": false, "2001:db8::7": true, "::ffff:198.51.100.9": true} {
		if got := containsAddr(list, netip.MustParseAddr(addr)); got != want {
			t.Fatalf("%s: %v", addr, got)
		}
	}
	if _, err := parseList([]byte("10.0.0.0/33\n")); err == nil {
		t.Fatal("a bad range read")
	}
}

func TestAgentFamily(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0":                                                                  "Firefox on Linux",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0 Safari/537.36 Edg/138.0":                   "Edge on Windows",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1": "Safari on iOS",
		"curl/8.5.0": "curl on other",
		"":           "other on other",
	} {
		if got := agentFamily(ua); got != want {
			t.Fatalf("%q: %q, want %q", ua, got, want)
		}
	}
}

func TestNetwork(t *testing.T) {
	if n := network(netip.MustParseAddr("198.51.100.7")); n != "198.51.100.0/24" {
		t.Fatal(n)
	}
	if n := network(netip.MustParseAddr("2001:db8:1:2::9")); n != "2001:db8:1::/48" {
		t.Fatal(n)
	}
}
