package transport

import (
	"crypto/tls"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/postroom/postroom/option"
)

// opNewSMTP is NewSMTP's name in its *option.Error.
const opNewSMTP = "transport.NewSMTP"

// optionError is NewSMTP's refusal of the field of SMTPOptions named by
// field ("Addr", "Retry.Attempts").
func optionError(field, reason string) error {
	return &option.Error{Op: opNewSMTP, Field: "SMTPOptions." + field, Reason: reason}
}

// validate refuses the option sets that can never work, field by field in
// SMTPOptions' order (the numbers, defaulted by setDefaults, before
// HELOName's check, since an empty HELOName gets the host's name), and
// sets the defaults of the zero fields. It returns Addr's host.
func (o *SMTPOptions) validate() (string, error) {
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil || host == "" || port == "" {
		return "", optionError("Addr", strconv.Quote(o.Addr)+" is not host:port")
	}
	if hasSpaceOrControl(host) {
		return "", optionError("Addr", strconv.Quote(o.Addr)+" has white space or a control character in its host")
	}
	if n, err := strconv.Atoi(port); err == nil && (n < 1 || n > 65535) || err != nil && hasSpaceOrControl(port) {
		return "", optionError("Addr", strconv.Quote(o.Addr)+" has no valid port (1 to 65535, or a service name such as smtp)")
	}
	if o.TLS < StartTLSOpportunistic || o.TLS > NoTLS {
		return "", optionError("TLS", "is an unknown TLSMode "+strconv.Itoa(int(o.TLS)))
	}
	if err := checkTLSConfig(o.TLSConfig); err != nil {
		return "", err
	}
	if err := o.checkAuth(); err != nil {
		return "", err
	}
	if err := o.setDefaults(); err != nil {
		return "", err
	}
	if hasSpaceOrControl(o.HELOName) || !isASCII(o.HELOName) {
		return "", optionError("HELOName", strconv.Quote(o.HELOName)+" is not a domain or address literal: it has white space, a control character or a non-ASCII byte (use the A-label)")
	}
	return host, nil
}

// checkTLSConfig refuses a TLS configuration under which no handshake can
// succeed: crypto/tls speaks TLS 1.0 to 1.3.
func checkTLSConfig(c *tls.Config) error {
	if c == nil {
		return nil
	}
	switch {
	case c.MinVersion > tls.VersionTLS13:
		return optionError("TLSConfig.MinVersion", "is above TLS 1.3, the highest version crypto/tls speaks")
	case c.MaxVersion != 0 && c.MaxVersion < tls.VersionTLS10:
		return optionError("TLSConfig.MaxVersion", "is below TLS 1.0, the lowest version crypto/tls speaks")
	case c.MaxVersion != 0 && c.MinVersion > c.MaxVersion:
		return optionError("TLSConfig.MinVersion", "is above TLSConfig.MaxVersion")
	}
	return nil
}

// checkAuth refuses credentials that no server can accept, and AUTH that
// would send them in plaintext without AllowInsecureAuth.
func (o *SMTPOptions) checkAuth() error {
	switch o.Auth {
	case "", AuthPlain, AuthLogin, AuthCRAMMD5, AuthXOAUTH2:
	default:
		return optionError("Auth", "is an unknown AuthMechanism "+strconv.Quote(string(o.Auth)))
	}
	switch {
	case o.Username == "" && o.Password != "":
		return optionError("Password", "is set without Username")
	case o.Username == "" && o.Auth != "":
		return optionError("Auth", "is set without Username: AUTH runs only with a Username")
	case o.Username == "":
		return nil
	case strings.ContainsAny(o.Username+o.Password, "\r\n"):
		return optionError("Username", "or Password holds CR or LF")
	case o.Auth == AuthPlain && strings.ContainsRune(o.Username+o.Password, 0):
		return optionError("Username", "or Password holds NUL, which separates PLAIN's fields")
	case o.Auth == AuthXOAUTH2 && o.Password == "":
		return optionError("Password", "is empty: AuthXOAUTH2 needs the OAuth 2 access token")
	case o.Auth == AuthXOAUTH2 && strings.ContainsRune(o.Username+o.Password, 1):
		return optionError("Username", "or Password holds 0x01, which separates XOAUTH2's fields")
	case o.TLS == NoTLS && !o.AllowInsecureAuth:
		return &option.Error{Op: opNewSMTP, Field: "SMTPOptions.Username", Reason: "is set with NoTLS and without AllowInsecureAuth", Err: ErrInsecureAuth}
	}
	return nil
}

// setDefaults gives every zero field of o its default by the module's
// rule (package option): zero means the default, and a negative value is
// refused, except where the field's documentation gives it a meaning (a
// negative MaxMessagesPerConn, HealthCheckAfter, SetupCoolDown or
// PoolWaitLogThreshold turns off what it bounds, and is kept as -1). A
// negative or NaN RateLimit is refused; zero is no limit. An empty
// HELOName becomes the machine's host name (or "localhost"), a nil
// Logger one that discards (so that every record costs one Enabled
// call), a nil Dial a net.Dialer's.
func (o *SMTPOptions) setDefaults() error {
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
		off  bool // a negative value turns off what the field bounds
	}{
		{"HealthCheckAfter", &o.HealthCheckAfter, DefaultHealthCheckAfter, true},
		{"IdleTimeout", &o.IdleTimeout, DefaultIdleTimeout, false},
		{"ConnectTimeout", &o.ConnectTimeout, DefaultConnectTimeout, false},
		{"CommandTimeout", &o.CommandTimeout, DefaultCommandTimeout, false},
		{"DataTimeout", &o.DataTimeout, DefaultDataTimeout, false},
		{"EndOfDataTimeout", &o.EndOfDataTimeout, DefaultEndOfDataTimeout, false},
		{"SetupCoolDown", &o.SetupCoolDown, DefaultSetupCoolDown, true},
		{"PoolWaitLogThreshold", &o.PoolWaitLogThreshold, DefaultPoolWaitLogThreshold, true},
		{"Retry.Base", &o.Retry.Base, DefaultRetryBase, false},
		{"Retry.Cap", &o.Retry.Cap, DefaultRetryCap, false},
	} {
		def := option.Default[time.Duration]
		if f.off {
			def = option.DefaultOrOff[time.Duration]
		}
		if err := def(opNewSMTP, "SMTPOptions."+f.name, f.v, f.def); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
		off  bool
	}{
		{"MaxConns", &o.MaxConns, DefaultMaxConns, false},
		{"MaxMessagesPerConn", &o.MaxMessagesPerConn, DefaultMaxMessagesPerConn, true},
		{"Retry.Attempts", &o.Retry.Attempts, DefaultRetryAttempts, false},
	} {
		def := option.Default[int]
		if f.off {
			def = option.DefaultOrOff[int]
		}
		if err := def(opNewSMTP, "SMTPOptions."+f.name, f.v, f.def); err != nil {
			return err
		}
	}
	if o.RateLimit < 0 || math.IsNaN(o.RateLimit) {
		return optionError("RateLimit", "is negative or NaN")
	}
	if o.HELOName == "" {
		name, err := os.Hostname()
		if err != nil || name == "" || hasSpaceOrControl(name) || !isASCII(name) {
			name = "localhost"
		}
		o.HELOName = name
	}
	o.Logger = option.Logger(o.Logger)
	if o.Dial == nil {
		var d net.Dialer
		o.Dial = d.DialContext
	}
	return nil
}

// hasSpaceOrControl reports whether s has a byte that is white space or
// a control character in ASCII.
func hasSpaceOrControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
