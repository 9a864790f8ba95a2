package apptest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// SMTPServer is a real SMTP server (emersion/go-smtp) on loopback that
// records what it receives. Set User, Password and Mechs before
// StartSMTPServer to ask for authentication.
type SMTPServer struct {
	Host string
	Port int

	User, Password string   // accepted credentials; empty: AUTH not offered
	Mechs          []string // offered mechanisms

	mu       sync.Mutex
	messages []SMTPMessage
	authed   []string // usernames that logged in
	arrived  chan struct{}
}

// SMTPMessage is one message the server accepted.
type SMTPMessage struct {
	From string
	To   []string
	Data []byte
	TLS  bool // it came over TLS
}

// StartSMTPServer serves srv on 127.0.0.1 until the test ends: with
// tlsConfig and implicit, TLS from the first byte; with tlsConfig alone,
// STARTTLS is offered.
func StartSMTPServer(t testing.TB, srv *SMTPServer, tlsConfig *tls.Config, implicit, allowInsecureAuth bool) *SMTPServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.arrived = make(chan struct{}, 1)
	s := gosmtp.NewServer(srv)
	s.Domain = "mx.test"
	s.ReadTimeout, s.WriteTimeout = 5*time.Second, 5*time.Second
	s.AllowInsecureAuth = allowInsecureAuth
	if implicit {
		l = tls.NewListener(l, tlsConfig)
	} else {
		s.TLSConfig = tlsConfig
	}
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { s.Close() })
	srv.Host, srv.Port = "127.0.0.1", l.Addr().(*net.TCPAddr).Port
	return srv
}

// AuthedUsers are the usernames that logged in, in order.
func (s *SMTPServer) AuthedUsers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.authed...)
}

// Received is every message accepted so far.
func (s *SMTPServer) Received() []SMTPMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMTPMessage(nil), s.messages...)
}

// WaitFor waits until a message to the address has arrived, as the
// server's outbox sends mail in the background, and returns the last one.
// It fails the test after a minute without one.
func (s *SMTPServer) WaitFor(t testing.TB, to string) SMTPMessage {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		msgs := s.Received()
		for i := len(msgs) - 1; i >= 0; i-- {
			for _, rcpt := range msgs[i].To {
				if rcpt == to {
					return msgs[i]
				}
			}
		}
		select {
		case <-s.arrived:
		case <-deadline:
			t.Fatalf("no mail to %s arrived; received %d messages", to, len(msgs))
		}
	}
}

// NewSession starts a session of the go-smtp backend.
func (s *SMTPServer) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &smtpSession{srv: s, conn: c}, nil
}

type smtpSession struct {
	srv  *SMTPServer
	conn *gosmtp.Conn
	msg  SMTPMessage
}

func (s *smtpSession) Reset()        { s.msg = SMTPMessage{} }
func (s *smtpSession) Logout() error { return nil }
func (s *smtpSession) Mail(from string, _ *gosmtp.MailOptions) error {
	if s.srv.User != "" {
		s.srv.mu.Lock()
		n := len(s.srv.authed)
		s.srv.mu.Unlock()
		if n == 0 {
			return &gosmtp.SMTPError{Code: 530, EnhancedCode: gosmtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
		}
	}
	s.msg.From = from
	return nil
}
func (s *smtpSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	s.msg.To = append(s.msg.To, to)
	return nil
}
func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, s.msg.TLS = s.conn.TLSConnectionState()
	s.msg.Data = b
	s.srv.mu.Lock()
	s.srv.messages = append(s.srv.messages, s.msg)
	s.srv.mu.Unlock()
	select {
	case s.srv.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (s *smtpSession) AuthMechanisms() []string {
	if s.srv.User == "" {
		return nil
	}
	return s.srv.Mechs
}

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	check := func(user, password string) error {
		if user != s.srv.User || password != s.srv.Password {
			return &gosmtp.SMTPError{Code: 535, EnhancedCode: gosmtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		s.srv.mu.Lock()
		s.srv.authed = append(s.srv.authed, user)
		s.srv.mu.Unlock()
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, password string) error { return check(user, password) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, errors.New("unsupported mechanism")
}

// loginServer is the server side of AUTH LOGIN, which go-sasl no longer
// ships.
type loginServer struct {
	check func(user, password string) error
	step  int
	user  string
}

func (l *loginServer) Next(response []byte) ([]byte, bool, error) {
	l.step++
	switch l.step {
	case 1:
		if response != nil {
			l.user = string(response)
			l.step++
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 2:
		l.user = string(response)
		return []byte("Password:"), false, nil
	default:
		return nil, true, l.check(l.user, string(response))
	}
}

// Text is the text part of the message as a mail client decodes it.
func (m SMTPMessage) Text(t testing.TB) string {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("no text part in the mail to %v: %v", m.To, err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
			b, err := io.ReadAll(p)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
}
