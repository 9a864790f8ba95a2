package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// SMTP limits: a server that stops answering fails the send instead of
// holding the outbox worker or an admin's test request.
const (
	smtpDialTimeout    = 10 * time.Second
	smtpCommandTimeout = 30 * time.Second
	smtpDataTimeout    = 2 * time.Minute // the message and the final reply
)

var errNoSMTPHost error = ConfigError("the realm has no SMTP server: set smtpHost")

// smtpMailer sends through a realm's SMTP server. With secure, the
// connection is TLS from the start (port 465 style); otherwise STARTTLS is
// used whenever the server offers it.
type smtpMailer struct {
	host      string
	port      int
	user      string
	password  string
	secure    bool
	helloName string // our name in EHLO
	// plainAuthOK allows AUTH without TLS: only for a server on this
	// machine (a local relay), where there is no wire to read.
	plainAuthOK bool
	tlsConfig   *tls.Config // nil: the system roots, for host; tests trust their own CA
	now         func() time.Time
	// dialControl refuses metadata addresses: a relay lives in the
	// operator's network, loopback or private, but never there.
	dialControl func(network, address string, c syscall.RawConn) error
}

func (s *Service) smtpMailerFor(realm *store.Realm) (*smtpMailer, error) {
	if realm.SMTPHost == "" {
		return nil, errNoSMTPHost
	}
	port := realm.SMTPPort
	if port == 0 {
		port = 587
		if realm.SMTPSecure {
			port = 465
		}
	}
	return &smtpMailer{host: realm.SMTPHost, port: port, user: realm.SMTPUser, password: realm.SMTPPassword,
		secure: realm.SMTPSecure, helloName: s.helloName(), plainAuthOK: isLoopbackHost(realm.SMTPHost), now: s.deps.Now,
		dialControl: httpx.LocalNetworkControl(s.deps.OutboundAllowed)}, nil
}

// helloName is the host of the server's external address: what an SMTP
// server expects to see in EHLO, rather than "localhost".
func (s *Service) helloName() string {
	if u, err := url.Parse(s.deps.BaseURL); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "localhost"
}

func (m *smtpMailer) send(ctx context.Context, msg Message) (err error) {
	from, err := bareAddress(msg.From)
	if err != nil {
		return fmt.Errorf("sender: %w", err)
	}
	to, err := bareAddress(msg.To)
	if err != nil {
		return fmt.Errorf("recipient: %w", err)
	}
	body, err := buildMIME(msg, m.now())
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(m.host, strconv.Itoa(m.port))
	tlsConfig := m.tlsConfig.Clone()
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	tlsConfig.ServerName = m.host
	tlsConfig.MinVersion = tls.VersionTLS12

	dialer := &net.Dialer{Timeout: smtpDialTimeout, Control: m.dialControl}
	var conn net.Conn
	if m.secure {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("connect to %s: %w", addr, err)
	}
	// Cancelling ctx (shutdown, a closed admin request) ends the conversation.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	deadline := func(d time.Duration) {
		t := time.Now().Add(d)
		if dl, ok := ctx.Deadline(); ok && dl.Before(t) {
			t = dl
		}
		_ = conn.SetDeadline(t)
	}
	deadline(smtpCommandTimeout)
	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("greeting from %s: %w", addr, err)
	}
	defer c.Close()
	if err := c.Hello(m.helloName); err != nil {
		return fmt.Errorf("EHLO: %w", err)
	}
	if !m.secure {
		if ok, _ := c.Extension("STARTTLS"); ok {
			deadline(smtpCommandTimeout)
			if err := c.StartTLS(tlsConfig); err != nil {
				return fmt.Errorf("STARTTLS: %w", err)
			}
		}
	}
	if m.user != "" {
		deadline(smtpCommandTimeout)
		if err := m.auth(c); err != nil {
			return err
		}
	}
	deadline(smtpCommandTimeout)
	if err := c.Mail(from); err != nil {
		return fmt.Errorf("MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	deadline(smtpDataTimeout)
	if _, err := w.Write(body); err != nil {
		return fmt.Errorf("sending the message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("message refused: %w", err)
	}
	deadline(smtpCommandTimeout)
	_ = c.Quit() // the message is accepted: a failed QUIT changes nothing
	return nil
}

// auth logs in with PLAIN, or LOGIN when that is all the server offers.
// The password never crosses an unencrypted connection unless plainAuthOK.
func (m *smtpMailer) auth(c *smtp.Client) error {
	if _, isTLS := c.TLSConnectionState(); !isTLS && !m.plainAuthOK {
		return errors.New("refusing to send the SMTP password over an unencrypted connection: " +
			"the server offers no STARTTLS (set smtpSecure for implicit TLS)")
	}
	ok, mechs := c.Extension("AUTH")
	if !ok {
		return errors.New("the SMTP server offers no AUTH, but smtpUser is set")
	}
	var a smtp.Auth
	switch offered := strings.Fields(strings.ToUpper(mechs)); {
	case slices.Contains(offered, "PLAIN"):
		a = plainAuth{user: m.user, password: m.password}
	case slices.Contains(offered, "LOGIN"):
		a = &loginAuth{user: m.user, password: m.password}
	default:
		return fmt.Errorf("the SMTP server offers AUTH %s, not PLAIN or LOGIN", mechs)
	}
	if err := c.Auth(a); err != nil {
		return fmt.Errorf("AUTH: %w", err)
	}
	return nil
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// plainAuth is SASL PLAIN (RFC 4616). net/smtp's PlainAuth would do, but
// it decides about TLS by comparing host names; the check is made once, in
// auth, for both mechanisms.
type plainAuth struct{ user, password string }

func (p plainAuth) Start(*smtp.ServerInfo) (string, []byte, error) {
	return "PLAIN", []byte("\x00" + p.user + "\x00" + p.password), nil
}

func (p plainAuth) Next(_ []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("unexpected challenge after AUTH PLAIN")
	}
	return nil, nil
}

// loginAuth is the older LOGIN mechanism, still all that some servers
// (Exchange, older relays) offer: the server prompts for each value.
type loginAuth struct {
	user, password string
	step           int
}

func (l *loginAuth) Start(*smtp.ServerInfo) (string, []byte, error) { return "LOGIN", nil, nil }

func (l *loginAuth) Next(challenge []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	l.step++
	prompt := strings.ToLower(string(challenge))
	switch {
	case strings.Contains(prompt, "username") || (l.step == 1 && !strings.Contains(prompt, "password")):
		return []byte(l.user), nil
	case strings.Contains(prompt, "password") || l.step == 2:
		return []byte(l.password), nil
	}
	return nil, errors.New("unexpected challenge after AUTH LOGIN")
}

// buildMIME writes msg as a MIME multipart/alternative message, the plain
// text first so that clients prefer the HTML, both quoted-printable so the
// message is 7-bit whatever the language.
func buildMIME(msg Message, now time.Time) ([]byte, error) {
	from, err := mail.ParseAddress(msg.From)
	if err != nil {
		return nil, fmt.Errorf("sender %q is not an email address", msg.From)
	}
	to, err := mail.ParseAddress(msg.To)
	if err != nil {
		return nil, fmt.Errorf("recipient %q is not an email address", msg.To)
	}
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, part := range []struct{ typ, content string }{{"text/plain", msg.Text}, {"text/html", msg.HTML}} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, fmt.Errorf("build message: %w", err)
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(part.content)); err != nil {
			return nil, fmt.Errorf("build message: %w", err)
		}
		if err := qp.Close(); err != nil {
			return nil, fmt.Errorf("build message: %w", err)
		}
	}
	if err := mw.Close(); err != nil {
		return nil, fmt.Errorf("build message: %w", err)
	}
	// Header values come from settings and user data: line breaks are
	// removed so none can add a header.
	subject := strings.Join(strings.Fields(msg.Subject), " ")
	var out bytes.Buffer
	for _, h := range [][2]string{
		{"Date", now.Format(time.RFC1123Z)},
		{"Message-ID", "<" + uuid.NewString() + "@" + domain + ">"},
		{"From", from.String()},
		{"To", to.String()},
		{"Subject", mime.QEncoding.Encode("utf-8", subject)},
		{"MIME-Version", "1.0"},
		{"Content-Type", `multipart/alternative; boundary="` + mw.Boundary() + `"`},
	} {
		out.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	out.WriteString("\r\n")
	out.Write(body.Bytes())
	return out.Bytes(), nil
}
