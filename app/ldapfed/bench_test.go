package ldapfed_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/ldapfed"
)

// benchUsers is the size of the directory the sync benchmark syncs.
const benchUsers = 10000

// BenchmarkSync syncs a directory of 10,000 users: "import" creates them
// all (a new realm each time), "unchanged" syncs them again with nothing
// to change. It reports users per second and the process's peak RSS
// (the server's, in this process; slapd runs in its own).
func BenchmarkSync(b *testing.B) {
	var ldif strings.Builder
	for i := range benchUsers {
		ldif.WriteString(apptest.Person(fmt.Sprintf("user%05d", i), "Given", fmt.Sprintf("Sn%d", i),
			fmt.Sprintf("user%05d@example.org", i), "pw"))
	}
	d := apptest.StartDirectory(b, ldif.String())
	s := realapp.New(b)
	realms := 0
	newProvider := func() string {
		realms++
		realm := fmt.Sprintf("bench%d", realms)
		apptest.MustStatus(b, s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": realm}), http.StatusCreated)
		r := s.Admin(http.MethodPost, "/admin/realms/"+realm+"/user-federation", directoryProvider("corp", d))
		apptest.MustStatus(b, r, http.StatusCreated)
		return "/admin/realms/" + realm + "/user-federation/" + r.Object(b)["id"].(string) + "/sync"
	}
	sync := func(path string, created int) {
		r := s.Admin(http.MethodPost, path, nil)
		apptest.MustStatus(b, r, http.StatusOK)
		var res ldapfed.SyncResult
		if err := json.Unmarshal(r.Body, &res); err != nil || res.Read != benchUsers || res.Created != created || res.Failed != 0 {
			b.Fatalf("sync: %s", r.Body)
		}
	}
	b.Run("import", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			path := newProvider()
			b.StartTimer()
			sync(path, benchUsers)
		}
		b.ReportMetric(float64(benchUsers)*float64(b.N)/b.Elapsed().Seconds(), "users/s")
		b.ReportMetric(peakRSSMB(b), "peakRSS-MB")
	})
	b.Run("unchanged", func(b *testing.B) {
		b.StopTimer()
		path := newProvider()
		sync(path, benchUsers)
		b.StartTimer()
		for b.Loop() {
			sync(path, 0)
		}
		b.ReportMetric(float64(benchUsers)*float64(b.N)/b.Elapsed().Seconds(), "users/s")
		b.ReportMetric(peakRSSMB(b), "peakRSS-MB")
	})
}

// peakRSSMB is the process's peak resident set (VmHWM), in MB.
func peakRSSMB(b *testing.B) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
