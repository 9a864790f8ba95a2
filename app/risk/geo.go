package risk

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/oschwald/geoip2-golang/v2"
)

// geoDB is the GeoIP database, memory-mapped once: a lookup is a walk of
// its tree in memory, never a call out of the process.
type geoDB struct{ r *geoip2.Reader }

func openGeo(path string) (*geoDB, error) {
	r, err := geoip2.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--geoip-db %s: %w", path, err)
	}
	if _, err := r.City(netip.MustParseAddr("192.0.2.1")); err != nil {
		return nil, fmt.Errorf("--geoip-db %s is no City database: %w", path, err)
	}
	return &geoDB{r: r}, nil
}

// place is where an address is, as far as the database says.
type place struct {
	Country  string
	Located  bool // Lat and Lon are known
	Lat, Lon float64
}

func (g *geoDB) lookup(ip netip.Addr) place {
	if g == nil || !ip.IsValid() {
		return place{}
	}
	c, err := g.r.City(ip.Unmap())
	if err != nil || c == nil {
		return place{}
	}
	p := place{Country: c.Country.ISOCode}
	if c.Location.Latitude != nil && c.Location.Longitude != nil {
		p.Located, p.Lat, p.Lon = true, *c.Location.Latitude, *c.Location.Longitude
	}
	return p
}

// distanceKm is the great-circle distance between two points (haversine).
func distanceKm(lat1, lon1, lat2, lon2 float64) float64 {
	const earthRadiusKm = 6371.0
	rad := func(d float64) float64 { return d * math.Pi / 180 }
	dLat, dLon := rad(lat2-lat1), rad(lon2-lon1)
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(rad(lat1))*math.Cos(rad(lat2))*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusKm * math.Asin(math.Min(1, math.Sqrt(a)))
}

// listFile is the server's deny list file: addresses and CIDR ranges, one
// a line, # comments. It is read again when its modification time
// changes, looked at no more than once a second; a file that turns
// unreadable keeps the last list read, and says so in the log.
type listFile struct {
	path string
	log  *slog.Logger

	mu       sync.Mutex
	checked  time.Time
	modified time.Time
	prefixes []netip.Prefix
}

func newListFile(path string, log *slog.Logger) (*listFile, error) {
	l := &listFile{path: path, log: log}
	if err := l.reload(time.Now()); err != nil {
		return nil, fmt.Errorf("--ip-deny-file: %w", err)
	}
	return l, nil
}

func (l *listFile) reload(now time.Time) error {
	l.checked = now
	fi, err := os.Stat(l.path)
	if err != nil {
		return err
	}
	if fi.ModTime().Equal(l.modified) && l.prefixes != nil {
		return nil
	}
	data, err := os.ReadFile(l.path)
	if err != nil {
		return err
	}
	prefixes, err := parseList(data)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	l.modified, l.prefixes = fi.ModTime(), prefixes
	return nil
}

// holds says whether the file lists ip.
func (l *listFile) holds(ip netip.Addr) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := time.Now(); now.Sub(l.checked) >= time.Second {
		if err := l.reload(now); err != nil {
			l.log.Warn("the IP deny list file could not be read again: the last list read stays", "path", l.path, "err", err)
		}
	}
	return containsAddr(l.prefixes, ip)
}

func parseList(data []byte) ([]netip.Prefix, error) {
	out := []netip.Prefix{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		p, err := parsePrefix(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, p)
	}
	return out, sc.Err()
}

// parsePrefix reads an address or a CIDR range.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is no CIDR range", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is no address", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func containsAddr(prefixes []netip.Prefix, ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
