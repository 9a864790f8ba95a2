package main

// The browser tests' mail: a real SMTP server on loopback and what it
// received, decoded as a mail client would.

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// browserMailbox is a real SMTP server (emersion/go-smtp) on loopback
// that keeps what it receives for the test to read.
type browserMailbox struct {
	t    *testing.T
	host string
	port int
	got  chan []byte
}

func newBrowserMailbox(t *testing.T) *browserMailbox {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &browserMailbox{t: t, got: make(chan []byte, 16)}
	s := gosmtp.NewServer(m)
	s.Domain = "mx.test"
	s.ReadTimeout, s.WriteTimeout = browserWaitBound, browserWaitBound
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { s.Close() })
	addr := l.Addr().(*net.TCPAddr)
	m.host, m.port = "127.0.0.1", addr.Port
	return m
}

// realmSettings are the realm fields that send its mail here.
func (m *browserMailbox) realmSettings() map[string]any {
	return map[string]any{"smtpHost": m.host, "smtpPort": m.port, "smtpFrom": "idenplane@example.test"}
}

func (m *browserMailbox) NewSession(*gosmtp.Conn) (gosmtp.Session, error) {
	return &browserMailSession{box: m}, nil
}

type browserMailSession struct{ box *browserMailbox }

func (s *browserMailSession) Reset()                                 {}
func (s *browserMailSession) Logout() error                          { return nil }
func (s *browserMailSession) Mail(string, *gosmtp.MailOptions) error { return nil }
func (s *browserMailSession) Rcpt(string, *gosmtp.RcptOptions) error { return nil }
func (s *browserMailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	select {
	case s.box.got <- b:
		return nil
	default:
		return errors.New("mailbox full")
	}
}

// browserMail is a delivered message, its text part decoded.
type browserMail struct {
	to, subject, text string
}

// next waits for the next message and decodes it.
func (m *browserMailbox) next() browserMail {
	m.t.Helper()
	var raw []byte
	select {
	case raw = <-m.got:
	case <-time.After(browserWaitBound):
		m.t.Fatalf("no mail arrived")
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		m.t.Fatalf("read mail: %v\n%s", err, raw)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	out := browserMail{to: msg.Header.Get("To"), subject: subject}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		m.t.Fatalf("mail Content-Type %q: want multipart", msg.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		} else if err != nil {
			m.t.Fatalf("mail part: %v", err)
		}
		if pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); pt == "text/plain" {
			body, err := io.ReadAll(p)
			if err != nil {
				m.t.Fatal(err)
			}
			out.text = string(body)
		}
	}
	if out.text == "" {
		m.t.Fatalf("mail without a text part:\n%s", raw)
	}
	return out
}

var browserLinkRE = regexp.MustCompile(`https?://[^\s<>"]+`)

// link is the one address in the mail's text whose path is path.
func (ml browserMail) link(t *testing.T, path string) string {
	t.Helper()
	var found []string
	for _, l := range browserLinkRE.FindAllString(ml.text, -1) {
		if u, err := url.Parse(l); err == nil && u.Path == path && !slices.Contains(found, l) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("mail %q has %d links to %s, want one:\n%s", ml.subject, len(found), path, ml.text)
	}
	return found[0]
}
