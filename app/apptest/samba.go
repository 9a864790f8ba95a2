package apptest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// ActiveDirectory is a Samba Active Directory domain controller
// provisioned for one test in t.TempDir(), serving LDAP on port 389 of a
// loopback address of its own (127.x.y.z): AD's ports are fixed, and an
// address per test keeps tests that run at once apart. It stops at the end
// of the test.
type ActiveDirectory struct {
	URL           string // ldap://127.x.y.z
	Realm         string // CORP.EXAMPLE
	Domain        string // CORP, the NetBIOS name
	BaseDN        string // DC=corp,DC=example
	UsersDN       string // CN=Users under BaseDN, where samba-tool puts users
	AdminDN       string // the Administrator, by DN
	AdminPassword string
	t             testing.TB
	conf          string
	cmd           *exec.Cmd
	done          chan struct{}
	log           bytes.Buffer
}

// ADUser is a user StartAD creates.
type ADUser struct {
	Name, GivenName, Surname, Mail, Password string
	Disabled                                 bool
}

// StartAD provisions a domain, creates users and the computer accounts
// (sAMAccountName without the $), and starts Samba's LDAP server.
// Provisioning takes seconds: a test should start one and share it among
// its subtests. A missing samba skips the test, or fails it under CI=true;
// so does a user that may not bind port 389.
func StartAD(t testing.TB, users []ADUser, computers ...string) *ActiveDirectory {
	t.Helper()
	for _, tool := range []string{"samba", "samba-tool"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat(sbin(tool)); err != nil {
				missingTool(t, tool+" (Debian packages samba, samba-ad-dc and samba-ad-provision)")
			}
		}
	}
	if _, err := os.Stat("/usr/share/samba/setup/ad-schema"); err != nil {
		missingTool(t, "Samba's AD schema (Debian package samba-ad-provision)")
	}
	addr := loopbackFor389(t)
	dir := t.TempDir()
	d := &ActiveDirectory{URL: "ldap://" + addr, Realm: "CORP.EXAMPLE", Domain: "CORP", BaseDN: "DC=corp,DC=example",
		UsersDN: "CN=Users,DC=corp,DC=example", AdminDN: "CN=Administrator,CN=Users,DC=corp,DC=example",
		AdminPassword: "Adm1n-Secret!", t: t, conf: filepath.Join(dir, "etc", "smb.conf"), done: make(chan struct{})}
	d.tool("domain", "provision", "--targetdir="+dir, "--realm="+d.Realm, "--domain="+d.Domain, "--server-role=dc",
		"--dns-backend=NONE", "--adminpass="+d.AdminPassword, "--use-rfc2307", "--host-name=dc1")
	// Provisioning writes a configuration for a whole domain controller;
	// this one serves LDAP alone, from the test's folder, and takes simple
	// binds without TLS.
	conf := fmt.Sprintf(`[global]
	netbios name = DC1
	realm = %[2]s
	workgroup = %[3]s
	server role = active directory domain controller
	server services = ldap
	interfaces = %[4]s/8
	bind interfaces only = yes
	private dir = %[1]s/private
	state directory = %[1]s/state
	cache directory = %[1]s/cache
	lock directory = %[1]s
	binddns dir = %[1]s/bind-dns
	pid directory = %[1]s/run
	ncalrpc dir = %[1]s/run/ncalrpc
	winbindd socket directory = %[1]s/run/winbindd
	log file = %[1]s/samba.log
	idmap_ldb:use rfc2307 = yes
	ldap server require strong auth = no
	tls enabled = no
	old password allowed period = 0
`, dir, d.Realm, d.Domain, addr)
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		args := []string{"user", "create", u.Name, u.Password, "--given-name=" + u.GivenName, "--surname=" + u.Surname}
		if u.Mail != "" {
			args = append(args, "--mail-address="+u.Mail)
		}
		d.tool(append(args, "-s", d.conf)...)
		if u.Disabled {
			d.tool("user", "disable", u.Name, "-s", d.conf)
		}
	}
	for _, c := range computers {
		d.tool("computer", "create", c, "-s", d.conf)
	}
	t.Cleanup(d.stop)
	d.start()
	return d
}

// loopbackFor389 picks a loopback address whose port 389 is free.
func loopbackFor389(t testing.TB) string {
	t.Helper()
	var err error
	for range 20 {
		addr := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
		var l net.Listener
		if l, err = net.Listen("tcp", net.JoinHostPort(addr, "389")); err == nil {
			l.Close()
			return addr
		}
	}
	missingTool(t, fmt.Sprintf("a free port 389 on a loopback address (%v)", err))
	return ""
}

func (d *ActiveDirectory) tool(args ...string) {
	d.t.Helper()
	if out, err := exec.Command(sbin("samba-tool"), args...).CombinedOutput(); err != nil {
		d.t.Fatalf("samba-tool %s: %v\n%s", args[0]+" "+args[1], err, out)
	}
}

// start runs samba as one process and waits until the Administrator can
// bind.
func (d *ActiveDirectory) start() {
	d.t.Helper()
	d.cmd = exec.Command(sbin("samba"), "-i", "-M", "single", "-s", d.conf)
	d.cmd.Stdout, d.cmd.Stderr = &d.log, &d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		d.t.Fatalf("start samba: %v", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	waitForBind(d.t, "samba", d.URL, d.AdminDN, d.AdminPassword, 60*time.Second, d.done, d.stop, d.log.String)
}

// stop kills samba's process group and waits for it.
func (d *ActiveDirectory) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	select {
	case <-d.done:
		return
	default:
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.done
}

// Modify replaces attributes of the entry dn, as the Administrator.
func (d *ActiveDirectory) Modify(dn string, replace map[string][]string) {
	d.t.Helper()
	c, err := ldap.DialURL(d.URL)
	if err != nil {
		d.t.Fatal(err)
	}
	defer c.Close()
	if err := c.Bind(d.AdminDN, d.AdminPassword); err != nil {
		d.t.Fatal(err)
	}
	req := ldap.NewModifyRequest(dn, nil)
	for attr, values := range replace {
		req.Replace(attr, values)
	}
	if err := c.Modify(req); err != nil {
		d.t.Fatalf("modify %s: %v", dn, err)
	}
}

// UserDN is the DN samba-tool gives a user it creates: by its full name.
func (d *ActiveDirectory) UserDN(u ADUser) string {
	return "CN=" + u.GivenName + " " + u.Surname + "," + d.UsersDN
}
