package apptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// Directory is an OpenLDAP slapd started for one test, on a free loopback
// port, over a database in t.TempDir(); it stops at the end of the test.
type Directory struct {
	URL           string // ldap://127.0.0.1:PORT
	LDAPSURL      string // ldaps://127.0.0.1:PORT, with TLS on (StartDirectoryTLS)
	CAPEM         string // the CA of the TLS certificate, for 127.0.0.1 and localhost
	Suffix        string // dc=example,dc=org
	AdminDN       string // the rootdn: binds without limits
	AdminPassword string
	PeopleDN      string // ou=people under Suffix
	GroupsDN      string // ou=groups under Suffix
	t             testing.TB
	dir, conf     string
	cmd           *exec.Cmd
	done          chan struct{}
	stderr        bytes.Buffer
}

// DirectorySuffix is the suffix of every test directory.
const DirectorySuffix = "dc=example,dc=org"

// StartDirectory starts slapd with the suffix, ou=people and ou=groups,
// and the entries of ldif (loaded with slapadd before it starts). A
// missing slapd skips the test, or fails it under CI=true.
func StartDirectory(t testing.TB, ldif string) *Directory {
	t.Helper()
	return startDirectory(t, ldif, false)
}

// StartDirectoryTLS is StartDirectory with TLS: StartTLS on URL, and
// LDAPSURL, with a certificate for 127.0.0.1 and localhost signed by
// CAPEM, a CA made for the test.
func StartDirectoryTLS(t testing.TB, ldif string) *Directory {
	t.Helper()
	return startDirectory(t, ldif, true)
}

func startDirectory(t testing.TB, ldif string, withTLS bool) *Directory {
	t.Helper()
	slapd, err := exec.LookPath("slapd")
	if err != nil {
		slapd = "/usr/sbin/slapd"
		if _, statErr := os.Stat(slapd); statErr != nil {
			missingTool(t, "slapd (Debian packages slapd and ldap-utils)")
		}
	}
	if _, err := exec.LookPath("slapadd"); err != nil {
		if _, statErr := os.Stat("/usr/sbin/slapadd"); statErr != nil {
			missingTool(t, "slapadd (Debian package slapd)")
		}
	}
	dir := t.TempDir()
	d := &Directory{Suffix: DirectorySuffix, AdminDN: "cn=admin," + DirectorySuffix, AdminPassword: "admin-secret",
		PeopleDN: "ou=people," + DirectorySuffix, GroupsDN: "ou=groups," + DirectorySuffix, t: t, dir: dir,
		conf: filepath.Join(dir, "slapd.conf"), done: make(chan struct{})}
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	tlsConf := ""
	if withTLS {
		tlsConf = d.writeTLS()
	}
	conf := tlsConf + fmt.Sprintf(`include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
pidfile %[1]s/slapd.pid
database mdb
maxsize 1073741824
suffix "%[2]s"
rootdn "%[3]s"
rootpw %[4]s
directory %[1]s/db
index objectClass eq
index uid,mail eq
index entryUUID eq
index modifyTimestamp eq
index member eq
overlay memberof
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
`, dir, d.Suffix, d.AdminDN, d.AdminPassword)
	if err := os.WriteFile(d.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n"+
		"dn: %s\nobjectClass: organizationalUnit\nou: people\n\ndn: %s\nobjectClass: organizationalUnit\nou: groups\n\n",
		d.Suffix, d.PeopleDN, d.GroupsDN)
	data := filepath.Join(dir, "data.ldif")
	if err := os.WriteFile(data, []byte(base+ldif), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sbin("slapadd"), "-q", "-f", d.conf, "-l", data).CombinedOutput(); err != nil {
		t.Fatalf("slapadd: %v\n%s", err, out)
	}
	d.start(slapd)
	t.Cleanup(d.Stop)
	return d
}

func sbin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return "/usr/sbin/" + name
}

func missingTool(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, and CI=true needs it", what)
	}
	t.Skipf("%s is not installed: skipping the tests against a real directory", what)
}

// start runs slapd, on a free port the first time and on the same one
// after, and waits until the admin can bind.
func (d *Directory) start(slapd string) {
	d.t.Helper()
	if d.URL == "" {
		d.URL = "ldap://" + freePort(d.t)
		if d.CAPEM != "" {
			d.LDAPSURL = "ldaps://" + freePort(d.t)
		}
	}
	d.done = make(chan struct{})
	d.stderr.Reset()
	urls := d.URL
	if d.LDAPSURL != "" {
		urls += " " + d.LDAPSURL
	}
	d.cmd = exec.Command(slapd, "-f", d.conf, "-h", urls, "-d", "0")
	d.cmd.Stderr = &d.stderr
	if err := d.cmd.Start(); err != nil {
		d.t.Fatalf("start slapd: %v", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	waitForBind(d.t, "slapd", d.URL, d.AdminDN, d.AdminPassword, 15*time.Second, d.done, d.Stop, d.stderr.String)
}

// waitForBind waits until dn binds with password at url, the directory
// server name started. It fails the test when the server exits (done is
// closed) or does not answer within timeout, which stop ends it for, with
// what the server wrote (log).
func waitForBind(t testing.TB, name, url, dn, password string, timeout time.Duration, done <-chan struct{},
	stop func(), log func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c, err := ldap.DialURL(url, ldap.DialWithDialer(&net.Dialer{Timeout: time.Second}))
		if err == nil {
			err = c.Bind(dn, password)
			c.Close()
			if err == nil {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("%s exited: %s", name, log())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%s did not answer within %s: %v; %s", name, timeout, err, log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops slapd and waits for it; the directory stays on disk.
func (d *Directory) Stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Kill()
	<-d.done
}

// Restart starts a stopped slapd again over the same database and port.
func (d *Directory) Restart() {
	d.t.Helper()
	d.Stop()
	d.start(sbin("slapd"))
}

// Modify applies an LDIF of changes (changetype records) with ldapmodify,
// as the admin.
func (d *Directory) Modify(ldif string) {
	d.t.Helper()
	cmd := exec.Command("ldapmodify", "-x", "-H", d.URL, "-D", d.AdminDN, "-w", d.AdminPassword)
	cmd.Stdin = strings.NewReader(ldif)
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Fatalf("ldapmodify: %v\n%s", err, out)
	}
}

// Person is the LDIF of an inetOrgPerson under ou=people with the given
// uid, names, mail and password, last modified in 2020 (so that a
// change made by the test is the only recent one).
func Person(uid, givenName, sn, mail, password string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s %s\nsn: %s\n",
		uid, DirectorySuffix, uid, givenName, sn, sn)
	for _, kv := range [][2]string{{"givenName", givenName}, {"mail", mail}, {"userPassword", password}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
	}
	b.WriteString("modifyTimestamp: 20200101000000Z\n\n")
	return b.String()
}

// Group is the LDIF of a groupOfNames under ou=groups with the given
// members (DNs).
func Group(cn string, members ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dn: cn=%s,ou=groups,%s\nobjectClass: groupOfNames\ncn: %s\n", cn, DirectorySuffix, cn)
	for _, m := range members {
		fmt.Fprintf(&b, "member: %s\n", m)
	}
	b.WriteString("\n")
	return b.String()
}

// PersonDN is the DN of Person(uid, …).
func PersonDN(uid string) string { return "uid=" + uid + ",ou=people," + DirectorySuffix }

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// writeTLS makes a CA and a server certificate for 127.0.0.1 and
// localhost into the directory's folder, and answers the slapd.conf lines
// that use them.
func (d *Directory) writeTLS() string {
	d.t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		d.t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test directory CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		d.t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		d.t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		d.t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		d.t.Fatal(err)
	}
	d.CAPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	files := map[string][]byte{
		"ca.pem":   []byte(d.CAPEM),
		"cert.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"key.pem":  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(d.dir, name), data, 0o600); err != nil {
			d.t.Fatal(err)
		}
	}
	return fmt.Sprintf("TLSCACertificateFile %[1]s/ca.pem\nTLSCertificateFile %[1]s/cert.pem\nTLSCertificateKeyFile %[1]s/key.pem\n", d.dir)
}

// NeedTool answers the path of a tool the test needs: missing, the test
// is skipped, or failed under CI=true.
func NeedTool(t testing.TB, name, what string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missingTool(t, what)
	}
	return p
}
