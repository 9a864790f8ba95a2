package loadtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// loadDirectory is an OpenLDAP slapd the ldap-bind scenario starts on a
// loopback port, over a database in the run's directory, with its people
// loaded by slapadd before it starts.
type loadDirectory struct {
	url    string
	people int
	cmd    *exec.Cmd
	done   chan struct{}
	stderr bytes.Buffer
	// floorConns are the connections the floor's binds went over, closed
	// with the directory.
	floorConns []*ldap.Conn
}

// The directory's names.
const (
	ldapSuffix    = "dc=loadtest,dc=example"
	ldapPeopleDN  = "ou=people," + ldapSuffix
	ldapAdminDN   = "cn=admin," + ldapSuffix
	ldapAdminPass = "load-test-directory-admin"
	// ldapPeople is how many people the directory holds at most: the realm
	// of a directory of this size is the common case, and slapadd loads it
	// in a second.
	ldapPeople = 1000
)

func ldapUsername(i int) string { return fmt.Sprintf("ldapuser%05d", i) }
func ldapUserDN(i int) string   { return "uid=" + ldapUsername(i) + "," + ldapPeopleDN }

// The files of Debian's slapd package a directory needs beside its
// programs: the schemas it includes and the database backend it loads.
var slapdFiles = []string{"/etc/ldap/schema/core.schema", "/etc/ldap/schema/cosine.schema",
	"/etc/ldap/schema/inetorgperson.schema", "/usr/lib/ldap/back_mdb.la"}

// findSbin finds a program of /usr/sbin, which is seldom on a user's PATH.
func findSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := "/usr/sbin/" + name
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// startDirectory starts slapd with people entries, each with password (as
// a salted SHA-1 hash, as directories keep them), in dir. A slapd that is
// not installed is errSkipScenario.
func startDirectory(ctx context.Context, dir string, people int, password string) (*loadDirectory, error) {
	notInstalled := func(what string) error {
		return fmt.Errorf("%w: %s is not installed (Debian packages slapd and ldap-utils)", errSkipScenario, what)
	}
	slapd, err := findSbin("slapd")
	if err != nil {
		return nil, notInstalled("slapd")
	}
	slapadd, err := findSbin("slapadd")
	if err != nil {
		return nil, notInstalled("slapadd")
	}
	for _, f := range slapdFiles {
		if _, err := os.Stat(f); err != nil {
			return nil, notInstalled(f)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "slapd.conf")
	err = os.WriteFile(conf, fmt.Appendf(nil, `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
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
access to attrs=userPassword by self read by anonymous auth by * none
access to * by * read
`, dir, ldapSuffix, ldapAdminDN, ldapAdminPass), 0o600)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "people.ldif")
	if err := os.WriteFile(data, peopleLDIF(people, password), 0o600); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, slapadd, "-q", "-f", conf, "-l", data).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("slapadd: %w: %s", err, out)
	}
	addr, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	d := &loadDirectory{url: "ldap://" + addr, people: people, done: make(chan struct{})}
	// Not tied to ctx: the directory lives until stop, whatever the caller.
	d.cmd = exec.Command(slapd, "-f", conf, "-h", d.url, "-d", "0")
	d.cmd.Stderr = &d.stderr
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start slapd: %w", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	if err := d.waitBind(ctx, 15*time.Second); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

// peopleLDIF is the suffix, ou=people and people inetOrgPersons, every
// one with the same password hash: one salted hash made once.
func peopleLDIF(people int, password string) []byte {
	salt := make([]byte, 8)
	_, _ = rand.Read(salt)
	sum := sha1.Sum(append([]byte(password), salt...))
	hash := "{SSHA}" + base64.StdEncoding.EncodeToString(append(sum[:], salt...))
	var b bytes.Buffer
	fmt.Fprintf(&b, "dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: loadtest\no: Load test\n\n"+
		"dn: %s\nobjectClass: organizationalUnit\nou: people\n\n", ldapSuffix, ldapPeopleDN)
	for i := range people {
		name := ldapUsername(i)
		fmt.Fprintf(&b, "dn: %s\nobjectClass: inetOrgPerson\nuid: %s\ncn: Directory Person %d\ngivenName: Directory\n"+
			"sn: Person %d\nmail: %s@ldap.loadtest.example\nuserPassword: %s\n\n", ldapUserDN(i), name, i, i, name, hash)
	}
	return b.Bytes()
}

func freeLoopbackPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

var errDirectoryDown = errors.New("slapd did not answer")

// waitBind waits until the admin binds.
func (d *loadDirectory) waitBind(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := d.dial()
		if err == nil {
			err = c.Bind(ldapAdminDN, ldapAdminPass)
			c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-d.done:
			return fmt.Errorf("%w: it exited: %s", errDirectoryDown, strings.TrimSpace(d.stderr.String()))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w within %s: %w", errDirectoryDown, limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *loadDirectory) dial() (*ldap.Conn, error) {
	return ldap.DialURL(d.url, ldap.DialWithDialer(&net.Dialer{Timeout: time.Second}))
}

// stop closes the floor's connections and stops slapd.
func (d *loadDirectory) stop() {
	for _, c := range d.floorConns {
		c.Close()
	}
	d.floorConns = nil
	if d.cmd.Process != nil {
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}
