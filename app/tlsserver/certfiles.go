package tlsserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// PollInterval is how often CertFiles.Watch looks whether the files
// changed: two stat calls, cheap enough to make a renewed certificate
// serve within seconds of being written.
const PollInterval = 5 * time.Second

// CertFiles is a certificate and its key read from PEM files, read again
// when either file changes or on demand (SIGHUP). A pair that does not
// load (a half-written renewal, a key that does not match) leaves the
// certificate served before in place.
type CertFiles struct {
	certPath, keyPath string
	log               *slog.Logger
	cert              atomic.Pointer[tls.Certificate]

	mu   sync.Mutex // held while reading the files
	seen stamp      // the files as last read, whether they loaded or not
}

// stamp is what tells that a file changed without reading it: its size
// and modification time, followed through symbolic links (certbot's live
// directory links to the files of the latest renewal).
type stamp struct {
	certSize, keySize int64
	certMod, keyMod   time.Time
}

// LoadCertFiles reads the pair; an error names the file at fault.
func LoadCertFiles(certPath, keyPath string, log *slog.Logger) (*CertFiles, error) {
	c := &CertFiles{certPath: certPath, keyPath: keyPath, log: log}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// GetCertificate is the tls.Config hook: the pair loaded last.
func (c *CertFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cert.Load(), nil
}

// Reload reads the files and serves them from the next handshake on. On
// an error the certificate served so far stays.
func (c *CertFiles) Reload() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := c.stamp()
	if err != nil {
		return err
	}
	c.seen = st
	cert, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		return fmt.Errorf("TLS certificate %s with key %s: %w", c.certPath, c.keyPath, err)
	}
	c.cert.Store(&cert)
	c.log.Info("TLS certificate loaded", "cert", c.certPath, "subject", cert.Leaf.Subject.String(),
		"serial", cert.Leaf.SerialNumber.String(), "notAfter", cert.Leaf.NotAfter.UTC())
	if time.Now().After(cert.Leaf.NotAfter) {
		c.log.Warn("the TLS certificate has expired", "cert", c.certPath, "notAfter", cert.Leaf.NotAfter.UTC())
	}
	return nil
}

func (c *CertFiles) stamp() (stamp, error) {
	cert, err := os.Stat(c.certPath)
	if err != nil {
		return stamp{}, fmt.Errorf("TLS certificate: %w", err)
	}
	key, err := os.Stat(c.keyPath)
	if err != nil {
		return stamp{}, fmt.Errorf("TLS key: %w", err)
	}
	return stamp{certSize: cert.Size(), keySize: key.Size(), certMod: cert.ModTime(), keyMod: key.ModTime()}, nil
}

// changed says whether either file differs from when it was last read.
func (c *CertFiles) changed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := c.stamp()
	return err == nil && st != c.seen
}

// Watch reloads the pair when the files change, looked at every interval,
// and at each value from reload (SIGHUP), until ctx ends. A failed
// reload is logged once per change of the files and the old pair stays.
func (c *CertFiles) Watch(ctx context.Context, interval time.Duration, reload <-chan os.Signal) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if !c.changed() {
				continue
			}
		case <-reload:
		}
		if err := c.Reload(); err != nil {
			c.log.Error("TLS certificate not reloaded: the one loaded before is still served", "err", err)
		}
	}
}
