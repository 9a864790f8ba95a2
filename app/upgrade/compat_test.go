package upgrade

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChangesBetween(t *testing.T) {
	for _, tc := range []struct {
		from, to int
		want     []int // the entries' schema versions
	}{
		{1, 33, nil},
		{33, 35, []int{34, 35}},
		{35, 51, []int{35, 36, 44}},
		{44, 44, []int{44}},
		{45, 51, nil},
	} {
		var got []int
		for _, c := range changesBetween(tc.from, tc.to) {
			got = append(got, c.SchemaVersion)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("changes %d to %d: %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

// Every entry says what changed and what to do, and the table is in
// order of version, as appended.
func TestConfigChangesAreWhole(t *testing.T) {
	for i, c := range configChanges {
		if c.SchemaVersion < 1 || len(c.Settings) == 0 || c.Before == "" || c.Now == "" || c.Action == "" {
			t.Errorf("entry %d is not whole: %+v", i, c)
		}
		if i > 0 && configChanges[i-1].SchemaVersion > c.SchemaVersion {
			t.Errorf("entry %d (version %d) comes after version %d", i, c.SchemaVersion, configChanges[i-1].SchemaVersion)
		}
		for _, s := range c.Settings {
			if !strings.HasPrefix(s, "--") && !strings.HasPrefix(s, "IDENPLANE_") {
				t.Errorf("entry %d: %q is neither a flag nor an environment variable", i, s)
			}
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"auto": ModeAuto, "manual": ModeManual, "": "", "Manual": "", "later": ""} {
		got, err := ParseMode(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestSnapshotPath(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("CET", 3600))
	if got, want := snapshotPath("/var/lib/idenplane/idenplane.db", 50, at),
		"/var/lib/idenplane/idenplane.db.pre-upgrade-50-20260102T020405.006Z.db"; got != want {
		t.Errorf("snapshotPath = %s, want %s", got, want)
	}
}
