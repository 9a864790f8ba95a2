package auditstreams

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Transport is how records reach a syslog receiver.
type Transport string

// The transports: TCP and TLS frame each message by octet counting (RFC
// 6587, RFC 5425); UDP sends one message a datagram (RFC 5426).
const (
	TransportTCP Transport = "tcp"
	TransportTLS Transport = "tls"
	TransportUDP Transport = "udp"
)

const (
	// DefaultFacility is authpriv, where systems log what touches
	// authentication.
	DefaultFacility = 10
	// sdID names the structured data of records: 32473 is the private
	// enterprise number RFC 5612 sets aside for documentation and
	// examples, which a project without one of its own may use.
	sdID = "idenplane@32473"
	// appName is RFC 5424's APP-NAME of every record.
	appName = "idenplane"
	// maxDatagram bounds a UDP message: a longer one is cut (RFC 5426
	// lets receivers cut too), rather than refused by the network for
	// ever and holding the stream back.
	maxDatagram       = 65000
	maxAddressLength  = 261 // a host name of 255 and a port
	maxHostnameLength = 255 // RFC 5424's HOSTNAME
	maxCAPEMLength    = 64 << 10
)

// SyslogSettings are a syslog destination's.
type SyslogSettings struct {
	// Address is the receiver's host:port.
	Address   string    `json:"address"`
	Transport Transport `json:"transport,omitempty"` // absent: tcp
	// Facility is the messages' facility (0 to 23); absent: authpriv (10).
	Facility *int `json:"facility,omitempty"`
	// Hostname is the messages' HOSTNAME; absent: the server's base URL's
	// host.
	Hostname string `json:"hostname,omitempty"`
	// CAPEM are the certificates (PEM) that a TLS receiver's certificate
	// must chain to instead of the system's.
	CAPEM string `json:"caPem,omitempty"`
}

// checkSyslog checks in and fills in its defaults.
func (s *Service) checkSyslog(ctx context.Context, in *SyslogSettings) error {
	if in.Transport == "" {
		in.Transport = TransportTCP
	}
	switch in.Transport {
	case TransportTCP, TransportTLS, TransportUDP:
	default:
		return apperr.Field("syslog.transport", "must be tcp, tls or udp")
	}
	if in.Address == "" {
		return apperr.Field("syslog.address", "is required: the receiver's host:port")
	}
	host, port, err := net.SplitHostPort(in.Address)
	if err != nil || host == "" || len(in.Address) > maxAddressLength {
		return apperr.Field("syslog.address", "must be host:port, such as logs.example.com:6514")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return apperr.Field("syslog.address", "port %q is not a number from 1 to 65535", port)
	}
	if err := httpx.CheckOutboundHost(ctx, "syslog.address", host, s.deps.OutboundAllowed); err != nil {
		return err
	}
	if in.Facility == nil {
		f := DefaultFacility
		in.Facility = &f
	}
	if *in.Facility < 0 || *in.Facility > 23 {
		return apperr.Field("syslog.facility", "must be from 0 to 23")
	}
	if len(in.Hostname) > maxHostnameLength || strings.IndexFunc(in.Hostname, func(r rune) bool { return r < 33 || r > 126 }) >= 0 {
		return apperr.Field("syslog.hostname", "must be at most %d printable ASCII characters without spaces", maxHostnameLength)
	}
	if in.CAPEM != "" {
		if in.Transport != TransportTLS {
			return apperr.Field("syslog.caPem", "is for the tls transport only")
		}
		if len(in.CAPEM) > maxCAPEMLength || !x509.NewCertPool().AppendCertsFromPEM([]byte(in.CAPEM)) {
			return apperr.Field("syslog.caPem", "holds no PEM certificate (or is longer than %d bytes)", maxCAPEMLength)
		}
	}
	return nil
}

// syslogSink sends RFC 5424 messages over one connection a batch.
type syslogSink struct {
	set      SyslogSettings
	hostname string
	dial     func(ctx context.Context) (net.Conn, error)
}

func (s *Service) newSyslog(set *SyslogSettings) (*syslogSink, error) {
	hostname := set.Hostname
	if hostname == "" {
		hostname = s.hostname
	}
	// The outbound guard's check of the address dialled, after
	// resolution: a receiver's name cannot lead to an internal address.
	d := httpx.OutboundDialer(s.deps.AttemptTimeout, s.deps.OutboundAllowed)
	sink := &syslogSink{set: *set, hostname: hostname}
	switch set.Transport {
	case TransportUDP:
		sink.dial = func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "udp", set.Address) }
	case TransportTLS:
		host, _, _ := net.SplitHostPort(set.Address)
		cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		if set.CAPEM != "" {
			cfg.RootCAs = x509.NewCertPool()
			cfg.RootCAs.AppendCertsFromPEM([]byte(set.CAPEM))
		}
		td := &tls.Dialer{NetDialer: d, Config: cfg}
		sink.dial = func(ctx context.Context) (net.Conn, error) { return td.DialContext(ctx, "tcp", set.Address) }
	default:
		sink.dial = func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", set.Address) }
	}
	return sink, nil
}

// send writes the batch over a new connection. Syslog has no
// acknowledgement: a batch the connection took whole counts as
// delivered.
func (d *syslogSink) send(ctx context.Context, recs []*store.AuditRecord) error {
	conn, err := d.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if d.set.Transport == TransportUDP {
		for _, r := range recs {
			msg := d.message(r)
			if len(msg) > maxDatagram {
				msg = msg[:maxDatagram]
			}
			if _, err := conn.Write(msg); err != nil {
				return err
			}
		}
		return nil
	}
	var buf bytes.Buffer
	for _, r := range recs {
		msg := d.message(r)
		buf.WriteString(strconv.Itoa(len(msg)))
		buf.WriteByte(' ')
		buf.Write(msg)
	}
	if _, err := conn.Write(buf.Bytes()); err != nil {
		return err
	}
	if tc, ok := conn.(*tls.Conn); ok {
		return tc.CloseWrite() // a close_notify, so the receiver knows the batch ended whole
	}
	return nil
}

// message is r as an RFC 5424 message: the event type as MSGID, the
// realm, sequence and event ID as structured data, and the record's JSON
// as MSG.
func (d *syslogSink) message(r *store.AuditRecord) []byte {
	facility := DefaultFacility
	if d.set.Facility != nil {
		facility = *d.set.Facility
	}
	severity := 5 // notice
	if r.EventType == "login.failed" {
		severity = 4 // warning
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "<%d>1 %s %s %s - %s [%s realm=\"%s\" seq=\"%d\" id=\"%s\"] ", facility*8+severity,
		time.UnixMilli(r.CreatedAt).UTC().Format("2006-01-02T15:04:05.000Z"), d.hostname, appName, msgID(r.EventType),
		sdID, sdEscape(realmName(r)), r.Seq, sdEscape(r.EventID))
	b.Write(recordJSON(r))
	return b.Bytes()
}

// realmName is the realm's name as the payload carries it.
func realmName(r *store.AuditRecord) string {
	var p struct {
		Realm string `json:"realm"`
	}
	_ = json.Unmarshal(r.Payload, &p)
	return p.Realm
}

// msgID is an event type as RFC 5424's MSGID: at most 32 printable
// characters.
func msgID(t string) string {
	if t == "" {
		return "-"
	}
	if len(t) > 32 {
		return t[:32]
	}
	return t
}

// sdEscape escapes a PARAM-VALUE (RFC 5424 section 6.3.3).
func sdEscape(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, `]`, `\]`).Replace(v)
}
