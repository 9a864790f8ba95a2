package ldapfed_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/ldapfed"
)

// directoryProvider is a provider of the test directory d, bound as its
// admin.
func directoryProvider(name string, d *apptest.Directory) map[string]any {
	return map[string]any{"name": name, "providerType": "ldap", "connectionUrl": d.URL, "bindDn": d.AdminDN,
		"bindCredential": d.AdminPassword, "usersDn": d.PeopleDN, "connectionTimeout": 2000, "readTimeout": 2000}
}

func testConnection(t *testing.T, s *apptest.Server, body map[string]any) ldapfed.ConnectionTest {
	t.Helper()
	p := createProvider(t, s, body)
	r := s.Admin(http.MethodPost, fedPath+"/"+p.ID+"/test-connection", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var out ldapfed.ConnectionTest
	r.Decode(t, &out)
	return out
}

// hungListener accepts connections and never answers on them.
func hungListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// selfSignedTLS listens with TLS and a self-signed certificate that no
// provider trusts.
func selfSignedTLS(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dir.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

func TestConnectionSucceeds(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "ann-pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "bob-pw")+apptest.Person("cy", "Cy", "Oh", "cy@example.org", "cy-pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	got := testConnection(t, s, directoryProvider("corp", d))
	if !got.Success || got.Error != "" || got.Vendor != "openldap" || got.UserCount != 3 || got.UserCountCapped ||
		!slices.Contains(got.NamingContexts, apptest.DirectorySuffix) {
		t.Fatalf("test-connection: %+v", got)
	}
	// The extra filter narrows the count; one page of one entry at a time still counts all.
	got = testConnection(t, s, with(directoryProvider("narrow", d), "userLdapFilter", "(|(uid=ann)(uid=cy))", "pagination", 1))
	if !got.Success || got.UserCount != 2 {
		t.Fatalf("filtered test-connection: %+v", got)
	}
	apptest.MustError(t, s.Admin(http.MethodPost, fedPath+"/00000000-0000-4000-8000-000000000000/test-connection", nil),
		http.StatusNotFound, "not_found", "")
}

func TestConnectionFailures(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "ann-pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	base := directoryProvider("corp", d)
	tests := []struct {
		name    string
		body    map[string]any
		kind    string
		detail  string
		maxTime time.Duration
	}{
		{"wrong port", with(base, "connectionUrl", "ldap://"+closedPort(t)), ldapfed.KindUnreachable, "refused", 0},
		{"unknown host", with(base, "connectionUrl", "ldap://no-such-host.invalid"), ldapfed.KindUnreachable, "", 0},
		{"metadata address", with(base, "connectionUrl", "ldap://169.254.169.254"), ldapfed.KindUnreachable, "link-local", 0},
		{"wrong password", with(base, "bindCredential", "wrong"), ldapfed.KindInvalidCredentials, "invalid credentials", 0},
		{"unknown bind DN", with(base, "bindDn", "cn=nobody,"+apptest.DirectorySuffix), ldapfed.KindInvalidCredentials, "", 0},
		{"wrong users DN", with(base, "usersDn", "ou=nobody,"+apptest.DirectorySuffix), ldapfed.KindNoSuchObject, "ou=nobody", 0},
		{"untrusted certificate", with(base, "connectionUrl", "ldaps://"+selfSignedTLS(t)), ldapfed.KindTLS, "unknown authority", 0},
		{"StartTLS refused", with(base, "startTls", true), ldapfed.KindTLS, "refused StartTLS", 0},
		{"TLS to a plain port", with(base, "connectionUrl", strings.Replace(d.URL, "ldap://", "ldaps://", 1)), ldapfed.KindTLS, "", 0},
		{"hung directory", with(base, "connectionUrl", "ldap://"+hungListener(t), "readTimeout", 300), ldapfed.KindTimeout, "", 0},
		{"hung TLS handshake", with(base, "connectionUrl", "ldaps://"+hungListener(t), "connectionTimeout", 300), ldapfed.KindTimeout, "", 0},
		{"hung StartTLS", with(base, "connectionUrl", "ldap://"+hungListener(t), "startTls", true, "connectionTimeout", 300), ldapfed.KindTimeout, "", 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["name"] = "p" + string(rune('a'+i))
			got := testConnection(t, s, tc.body)
			if got.Success || got.Error != tc.kind || !strings.Contains(got.Detail, tc.detail) || got.Detail == "" {
				t.Fatalf("got %+v, want kind %s with %q", got, tc.kind, tc.detail)
			}
			t.Logf("%s: %s", got.Error, got.Detail)
			if strings.Contains(got.Detail, d.AdminPassword) {
				t.Fatalf("detail shows the credential: %s", got.Detail)
			}
		})
	}
}

// TLS to a real slapd: LDAPS and StartTLS verified against the CA given,
// and refused without it.
func TestConnectionTLS(t *testing.T) {
	d := apptest.StartDirectoryTLS(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "ann-pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	base := with(directoryProvider("corp", d), "caPem", d.CAPEM, "useTruststore", false)
	tests := []struct {
		name string
		body map[string]any
		kind string
	}{
		{"ldaps", with(base, "connectionUrl", d.LDAPSURL), ""},
		{"ldaps by name", with(base, "connectionUrl", strings.Replace(d.LDAPSURL, "127.0.0.1", "localhost", 1)), ""},
		{"StartTLS", with(base, "startTls", true), ""},
		{"ldaps without the CA", with(base, "connectionUrl", d.LDAPSURL, "caPem", nil, "useTruststore", true), ldapfed.KindTLS},
		{"StartTLS without the CA", with(base, "startTls", true, "caPem", nil, "useTruststore", true), ldapfed.KindTLS},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["name"] = "p" + string(rune('a'+i))
			got := testConnection(t, s, tc.body)
			if tc.kind == "" && (!got.Success || got.UserCount != 1) {
				t.Fatalf("got %+v, want success", got)
			}
			if tc.kind != "" && (got.Success || got.Error != tc.kind || !strings.Contains(got.Detail, "unknown authority")) {
				t.Fatalf("got %+v, want %s naming the unknown authority", got, tc.kind)
			}
		})
	}
}
