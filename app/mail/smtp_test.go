package mail

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"

	"github.com/idenplane/idenplane/app/apptest"
)

// testCertificate makes a self-signed certificate for 127.0.0.1 and a
// client TLS config that trusts it.
func testCertificate(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mx.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}

func testSMTPMailer(srv *apptest.SMTPServer, client *tls.Config, secure bool) *smtpMailer {
	return &smtpMailer{host: srv.Host, port: srv.Port, user: srv.User, password: srv.Password, secure: secure,
		helloName: "idp.test", tlsConfig: client, plainAuthOK: false,
		now: func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }}
}

var testMail = Message{
	From:    `"Ácme Corp" <noreply@acme.test>`,
	To:      "alice@example.test",
	Subject: "Vérifiez votre adresse — Acme",
	HTML:    "<p>Bonjour Alice,</p>\n<p><a href=\"https://idp.test/x?token=abc=def\">Vérifier</a></p>\n",
	Text:    "Bonjour Alice,\n\nOuvrez https://idp.test/x?token=abc=def pour vérifier. " + strings.Repeat("long line ", 20) + "\n",
}

// checkDelivered parses the delivered message as a mail client would and
// checks its headers and both parts against testMail.
func checkDelivered(t *testing.T, got apptest.SMTPMessage) {
	t.Helper()
	if got.From != "noreply@acme.test" || len(got.To) != 1 || got.To[0] != "alice@example.test" {
		t.Fatalf("envelope from %q to %v", got.From, got.To)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(got.Data))
	if err != nil {
		t.Fatalf("parse message: %v\n%s", err, got.Data)
	}
	h := msg.Header
	if d, err := h.Date(); err != nil || !d.Equal(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)) {
		t.Errorf("Date %q: %v", h.Get("Date"), err)
	}
	if id := h.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@acme.test>") {
		t.Errorf("Message-ID %q", id)
	}
	if from, err := h.AddressList("From"); err != nil || len(from) != 1 || from[0].Name != "Ácme Corp" || from[0].Address != "noreply@acme.test" {
		t.Errorf("From %q: %v %v", h.Get("From"), from, err)
	}
	if to, err := h.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "alice@example.test" {
		t.Errorf("To %q: %v", h.Get("To"), err)
	}
	raw := h.Get("Subject")
	if !strings.HasPrefix(raw, "=?utf-8?q?") {
		t.Errorf("Subject %q is not RFC 2047-encoded", raw)
	}
	if subject, err := new(mime.WordDecoder).DecodeHeader(raw); err != nil || subject != testMail.Subject {
		t.Errorf("Subject decodes to %q (%v)", subject, err)
	}
	if h.Get("MIME-Version") != "1.0" {
		t.Errorf("MIME-Version %q", h.Get("MIME-Version"))
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", h.Get("Content-Type"), err)
	}
	for _, line := range strings.Split(string(got.Data), "\r\n") {
		if len(line) > 998 {
			t.Fatalf("a line of %d characters", len(line))
		}
		for _, c := range []byte(line) {
			if c >= 0x80 {
				t.Fatalf("8-bit data in the message: %q", line)
			}
		}
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for _, want := range []struct{ typ, body string }{{"text/plain", testMail.Text}, {"text/html", testMail.HTML}} {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %s: %v", want.typ, err)
		}
		ct, cp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if ct != want.typ || cp["charset"] != "utf-8" {
			t.Errorf("part Content-Type %q, want %s; charset=utf-8", p.Header.Get("Content-Type"), want.typ)
		}
		b, err := io.ReadAll(p) // multipart decodes quoted-printable
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ReplaceAll(string(b), "\r\n", "\n"); got != want.body {
			t.Errorf("%s part %q, want %q", want.typ, got, want.body)
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("more than two parts: %v", err)
	}
}

func TestSMTPStartTLSAuthPlain(t *testing.T) {
	serverTLS, clientTLS := testCertificate(t)
	srv := apptest.StartSMTPServer(t, &apptest.SMTPServer{User: "mailer", Password: "s3cret", Mechs: []string{sasl.Plain, sasl.Login}},
		serverTLS, false, false)
	if err := testSMTPMailer(srv, clientTLS, false).send(context.Background(), testMail); err != nil {
		t.Fatal(err)
	}
	got := srv.Received()
	if len(got) != 1 || !got[0].TLS {
		t.Fatalf("received %d messages (TLS %v), want 1 over STARTTLS", len(got), len(got) == 1 && got[0].TLS)
	}
	if a := srv.AuthedUsers(); len(a) != 1 || a[0] != "mailer" {
		t.Fatalf("authenticated as %v", a)
	}
	checkDelivered(t, got[0])
}

func TestSMTPImplicitTLSAuthLogin(t *testing.T) {
	serverTLS, clientTLS := testCertificate(t)
	srv := apptest.StartSMTPServer(t, &apptest.SMTPServer{User: "mailer", Password: "s3cret", Mechs: []string{sasl.Login}},
		serverTLS, true, false)
	if err := testSMTPMailer(srv, clientTLS, true).send(context.Background(), testMail); err != nil {
		t.Fatal(err)
	}
	got := srv.Received()
	if len(got) != 1 || !got[0].TLS || len(srv.AuthedUsers()) != 1 {
		t.Fatalf("received %d messages, authed %v", len(got), srv.AuthedUsers())
	}
	checkDelivered(t, got[0])
}

func TestSMTPWrongPassword(t *testing.T) {
	serverTLS, clientTLS := testCertificate(t)
	srv := apptest.StartSMTPServer(t, &apptest.SMTPServer{User: "mailer", Password: "s3cret", Mechs: []string{sasl.Plain}},
		serverTLS, false, false)
	m := testSMTPMailer(srv, clientTLS, false)
	m.password = "wrong-password-value"
	err := m.send(context.Background(), testMail)
	if err == nil || !strings.Contains(err.Error(), "535") || strings.Contains(err.Error(), m.password) {
		t.Fatalf("error %v, want the server's 535 without the password", err)
	}
	if len(srv.Received()) != 0 {
		t.Fatal("a message was delivered without authentication")
	}
}

// Without TLS the password is never sent: not even the AUTH command.
func TestSMTPRefusesPlaintextAuth(t *testing.T) {
	srv := apptest.StartSMTPServer(t, &apptest.SMTPServer{User: "mailer", Password: "s3cret", Mechs: []string{sasl.Plain}},
		nil, false, true)
	err := testSMTPMailer(srv, nil, false).send(context.Background(), testMail)
	if err == nil || !strings.Contains(err.Error(), "unencrypted") {
		t.Fatalf("error %v, want a refusal to authenticate in plaintext", err)
	}
	if len(srv.AuthedUsers()) != 0 || len(srv.Received()) != 0 {
		t.Fatal("credentials or a message went over plaintext")
	}
	// A server on this machine may take them: a local relay.
	m := testSMTPMailer(srv, nil, false)
	m.plainAuthOK = isLoopbackHost(srv.Host)
	if err := m.send(context.Background(), testMail); err != nil {
		t.Fatal(err)
	}
	if got := srv.Received(); len(got) != 1 || got[0].TLS {
		t.Fatalf("received %v", got)
	}
}

func TestSMTPUntrustedCertificate(t *testing.T) {
	serverTLS, _ := testCertificate(t)
	srv := apptest.StartSMTPServer(t, &apptest.SMTPServer{}, serverTLS, false, false)
	err := testSMTPMailer(srv, nil, false).send(context.Background(), testMail)
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("error %v, want a STARTTLS certificate failure", err)
	}
	if len(srv.Received()) != 0 {
		t.Fatal("a message was sent after a failed handshake")
	}
}

func TestSMTPUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	m := &smtpMailer{host: "127.0.0.1", port: port, helloName: "idp.test", now: time.Now}
	if err := m.send(context.Background(), testMail); err == nil || !strings.Contains(err.Error(), "connect to 127.0.0.1:"+strconv.Itoa(port)) {
		t.Fatalf("error %v", err)
	}
}

func TestLoopbackHosts(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "127.1.2.3": true,
		"smtp.example.com": false, "10.0.0.1": false, "": false} {
		if got := isLoopbackHost(host); got != want {
			t.Errorf("isLoopbackHost(%q) = %v", host, got)
		}
	}
}
