// Package postfixtest runs a private Postfix for tests: its own
// configuration, queue and log in a temporary folder, its smtpd on a free
// port of 127.0.0.1, its master in the foreground of the test binary. It
// is for the module's tests only; a test whose machine has no Postfix
// skips naming its install command (fails under CI=true).
package postfixtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// Postfix is a private Postfix instance: its own configuration, queue and
// log in a temporary folder, its smtpd on a free port of 127.0.0.1, its
// master run in the foreground by the test (and sent SIGTERM when the
// test binary dies, so no daemon outlives it).
type Postfix struct {
	t    testing.TB
	conf string // config_directory
	log  string // maillog_file
	// Addr is smtpd's host:port.
	Addr string
	sbin string // the folder of postfix, postqueue, postconf
}

// Need returns the postfix command and the uid of the user postfix, or
// skips t (fails it under CI=true) when Postfix is not installed or the
// test does not run as root.
func Need(t testing.TB) (bin string, uid int) {
	t.Helper()
	bin, err := exec.LookPath("postfix")
	if err != nil {
		bin = "/usr/sbin/postfix"
		if _, err := os.Stat(bin); err != nil {
			testenv.Missing(t, "postfix is not installed", "apt-get install postfix")
		}
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "a private Postfix instance needs root to start its master (its daemons run as the user postfix)", "run the test as root, as CI does")
	}
	pfUser, err := user.Lookup("postfix")
	if err != nil {
		testenv.Missing(t, "the user postfix is missing: "+err.Error(), "apt-get install postfix")
	}
	uid, _ = strconv.Atoi(pfUser.Uid)
	return bin, uid
}

// Options configure Start.
type Options struct {
	// Transports are the transport_maps: domain to next hop, such as
	// "lmtp:inet:127.0.0.1:2525" or "smtp:[127.0.0.1]:2526".
	Transports map[string]string
	// StockRetry keeps Postfix's own queue lifetimes and retry times (a
	// message deferred is tried again minutes later); false tries each
	// message once: a temporary failure returns a DSN at once
	// (maximal_queue_lifetime = 0, bounce_queue_lifetime = 0).
	StockRetry bool
}

// Start starts Postfix with o.Transports as transport_maps, relaying for
// 127.0.0.1 only, with no DNS.
//
// Postfix's master must start as root (it runs its daemons as the user
// postfix); run as another user, the test is skipped (or fails under
// CI=true). The instance stops when t ends.
func Start(t testing.TB, o Options) *Postfix {
	t.Helper()
	transports := o.Transports
	bin, uid := Need(t)
	daemons := postconf(t, bin, "daemon_directory")
	dir := t.TempDir()
	// The daemons (user postfix) must reach the folder; t.TempDir makes
	// it and its parent 0700.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := &Postfix{t: t, conf: filepath.Join(dir, "etc"), log: filepath.Join(dir, "maillog"), sbin: filepath.Dir(bin)}
	for _, d := range []string{p.conf, filepath.Join(dir, "queue"), filepath.Join(dir, "data")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(filepath.Join(dir, "data"), uid, -1); err != nil {
		t.Fatal(err)
	}
	p.Addr = freeAddr(t)

	var tm bytes.Buffer
	for domain, next := range transports {
		fmt.Fprintf(&tm, " %s=%s", domain, next)
	}
	lifetimes := "maximal_queue_lifetime = 0\nbounce_queue_lifetime = 0\n"
	if o.StockRetry {
		lifetimes = ""
	}
	mainCF := fmt.Sprintf(`compatibility_level = 3.6
queue_directory = %[1]s/queue
data_directory = %[1]s/data
maillog_file = %[1]s/maillog
maillog_file_prefixes = %[1]s
mail_owner = postfix
setgid_group = postdrop
myhostname = mta.postroom.test
mydomain = postroom.test
mydestination =
relayhost =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject
transport_maps = inline:{%[2]s }
%[3]ssmtp_dns_support_level = disabled
smtp_host_lookup = native
lmtp_host_lookup = native
smtp_tls_security_level = none
lmtp_tls_security_level = none
alias_maps =
alias_database =
local_recipient_maps =
biff = no
`, dir, tm.String(), lifetimes)
	masterCF := p.Addr + " inet n - n - - smtpd\n" + `pickup    unix  n - n 60   1 pickup
cleanup   unix  n - n -    0 cleanup
qmgr      unix  n - n 300  1 qmgr
rewrite   unix  - - n -    - trivial-rewrite
bounce    unix  - - n -    0 bounce
defer     unix  - - n -    0 bounce
trace     unix  - - n -    0 bounce
verify    unix  - - n -    1 verify
flush     unix  n - n 1000? 0 flush
proxymap  unix  - - n -    - proxymap
smtp      unix  - - n -    - smtp
relay     unix  - - n -    - smtp
showq     unix  n - n -    - showq
error     unix  - - n -    - error
retry     unix  - - n -    - error
discard   unix  - - n -    - discard
lmtp      unix  - - n -    - lmtp
anvil     unix  - - n -    1 anvil
scache    unix  - - n -    1 scache
postlog   unix-dgram n - n - 1 postlogd
`
	for name, text := range map[string]string{"main.cf": mainCF, "master.cf": masterCF} {
		if err := os.WriteFile(filepath.Join(p.conf, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// check makes the queue's folders with their owners and modes.
	if out, err := exec.Command(bin, "-c", p.conf, "check").CombinedOutput(); err != nil {
		t.Fatalf("postfix check: %v\n%s\n%s", err, out, p.Maillog())
	}
	master := exec.Command(filepath.Join(daemons, "master"), "-c", p.conf, "-d")
	master.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	var masterOut bytes.Buffer
	master.Stdout, master.Stderr = &masterOut, &masterOut
	if err := master.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- master.Wait() }()
	t.Cleanup(func() {
		master.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			master.Process.Kill()
			<-exited
			t.Errorf("Postfix's master did not stop within 20 s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("Postfix's log:\n%s\nmaster's output:\n%s", p.Maillog(), masterOut.String())
		}
	})
	// Wait for smtpd's port.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", p.Addr)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("Postfix's master exited: %v\n%s\n%s", err, masterOut.String(), p.Maillog())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Postfix's smtpd did not listen on %s within 20 s\n%s", p.Addr, p.Maillog())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// Flush asks Postfix to deliver its queue now (postqueue -f).
func (p *Postfix) Flush() {
	if out, err := exec.Command(filepath.Join(p.sbin, "postqueue"), "-c", p.conf, "-f").CombinedOutput(); err != nil {
		p.t.Logf("postqueue -f: %v: %s", err, out)
	}
}

// Maillog returns Postfix's log.
func (p *Postfix) Maillog() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// postconf returns the default of Postfix's parameter name.
func postconf(t testing.TB, postfixBin, name string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(filepath.Dir(postfixBin), "postconf"), "-dh", name).Output()
	if err != nil {
		t.Fatalf("postconf -dh %s: %v", name, err)
	}
	return string(bytes.TrimSpace(out))
}

// freeAddr returns a 127.0.0.1 address with a port free at the time.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// WaitFor polls cond every 200 ms, flushing Postfix's queue each second,
// until it holds or d has passed; it reports whether it held. With flush
// false it only polls, and a deferred message waits for Postfix's own
// retry.
func (p *Postfix) WaitFor(ctx context.Context, d time.Duration, flush bool, cond func() bool) bool {
	deadline := time.Now().Add(d)
	lastFlush := time.Now()
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		if flush && time.Since(lastFlush) > time.Second {
			p.Flush()
			lastFlush = time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return true
}
