package transport_test

import (
	"crypto/tls"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/postroom/postroom/option"
	"github.com/postroom/postroom/transport"
)

// TestNewSMTPValidates goes through SMTPOptions field by field: each
// option set that can never work is refused with an *option.Error naming
// the field, and the near misses that can work are accepted.
func TestNewSMTPValidates(t *testing.T) {
	const addr = "smtp.example.org:587"
	tests := []struct {
		name  string
		opts  transport.SMTPOptions
		field string // "" for an option set NewSMTP accepts
		want  error  // a sentinel the error wraps, if any
	}{
		// Addr
		{"Addr without port", transport.SMTPOptions{Addr: "localhost"}, "Addr", nil},
		{"Addr empty host", transport.SMTPOptions{Addr: ":25"}, "Addr", nil},
		{"Addr port 0", transport.SMTPOptions{Addr: "localhost:0"}, "Addr", nil},
		{"Addr port over 65535", transport.SMTPOptions{Addr: "localhost:65536"}, "Addr", nil},
		{"Addr host with a space", transport.SMTPOptions{Addr: "smtp example.org:25"}, "Addr", nil},
		{"Addr port with a space", transport.SMTPOptions{Addr: "localhost: 25"}, "Addr", nil},
		{"Addr service name", transport.SMTPOptions{Addr: "localhost:smtp"}, "", nil},
		{"Addr IPv6", transport.SMTPOptions{Addr: "[::1]:25"}, "", nil},
		// TLS
		{"TLS unknown", transport.SMTPOptions{Addr: addr, TLS: 7}, "TLS", nil},
		{"TLS negative", transport.SMTPOptions{Addr: addr, TLS: -1}, "TLS", nil},
		// TLSConfig
		{"TLSConfig MinVersion above 1.3", transport.SMTPOptions{Addr: addr, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS13 + 1}}, "TLSConfig.MinVersion", nil},
		{"TLSConfig MaxVersion below 1.0", transport.SMTPOptions{Addr: addr, TLSConfig: &tls.Config{MaxVersion: tls.VersionTLS10 - 1}}, "TLSConfig.MaxVersion", nil}, // SSL 3.0
		{"TLSConfig MinVersion above MaxVersion", transport.SMTPOptions{Addr: addr, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS12}}, "TLSConfig.MinVersion", nil},
		{"TLSConfig MinVersion 1.3 alone", transport.SMTPOptions{Addr: addr, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS13}}, "", nil},
		{"TLSConfig with NoTLS is unused, not wrong", transport.SMTPOptions{Addr: addr, TLS: transport.NoTLS, TLSConfig: &tls.Config{}}, "", nil},
		// Username, Password, Auth, AllowInsecureAuth
		{"Password without Username", transport.SMTPOptions{Addr: addr, Password: "p"}, "Password", nil},
		{"Auth without Username", transport.SMTPOptions{Addr: addr, Auth: transport.AuthPlain}, "Auth", nil},
		{"Auth unknown", transport.SMTPOptions{Addr: addr, Username: "u", Auth: "NTLM"}, "Auth", nil},
		{"Username with CR LF", transport.SMTPOptions{Addr: addr, Username: "u\r\nRSET", Password: "p"}, "Username", nil},
		{"Password with LF", transport.SMTPOptions{Addr: addr, Username: "u", Password: "p\n"}, "Username", nil},
		{"PLAIN with NUL", transport.SMTPOptions{Addr: addr, Username: "u", Password: "p\x00q", Auth: transport.AuthPlain}, "Username", nil},
		{"LOGIN with NUL can work", transport.SMTPOptions{Addr: addr, Username: "u", Password: "p\x00q", Auth: transport.AuthLogin}, "", nil},
		{"XOAUTH2 without token", transport.SMTPOptions{Addr: addr, Username: "u", Auth: transport.AuthXOAUTH2}, "Password", nil},
		{"XOAUTH2 with 0x01", transport.SMTPOptions{Addr: addr, Username: "u", Password: "t\x01", Auth: transport.AuthXOAUTH2}, "Username", nil},
		{"Username with NoTLS", transport.SMTPOptions{Addr: addr, TLS: transport.NoTLS, Username: "u", Password: "p"}, "Username", transport.ErrInsecureAuth},
		{"Username with NoTLS and AllowInsecureAuth", transport.SMTPOptions{Addr: addr, TLS: transport.NoTLS, Username: "u", Password: "p", AllowInsecureAuth: true}, "", nil},
		{"Username without Password can work", transport.SMTPOptions{Addr: addr, Username: "u"}, "", nil},
		{"AllowInsecureAuth without Username is unused, not wrong", transport.SMTPOptions{Addr: addr, AllowInsecureAuth: true}, "", nil},
		// HELOName
		{"HELOName with a space", transport.SMTPOptions{Addr: addr, HELOName: "a b"}, "HELOName", nil},
		{"HELOName with a control character", transport.SMTPOptions{Addr: addr, HELOName: "a\x00b"}, "HELOName", nil},
		{"HELOName not ASCII", transport.SMTPOptions{Addr: addr, HELOName: "bücher.example"}, "HELOName", nil},
		{"HELOName address literal", transport.SMTPOptions{Addr: addr, HELOName: "[192.0.2.1]"}, "", nil},
		// MaxConns, MaxMessagesPerConn, IdleTimeout, HealthCheckAfter
		{"MaxConns negative", transport.SMTPOptions{Addr: addr, MaxConns: -1}, "MaxConns", nil},
		{"MaxMessagesPerConn negative means no limit", transport.SMTPOptions{Addr: addr, MaxMessagesPerConn: -1}, "", nil},
		{"IdleTimeout negative", transport.SMTPOptions{Addr: addr, IdleTimeout: -time.Second}, "IdleTimeout", nil},
		{"HealthCheckAfter negative means never", transport.SMTPOptions{Addr: addr, HealthCheckAfter: -1}, "", nil},
		// The timeouts
		{"ConnectTimeout negative", transport.SMTPOptions{Addr: addr, ConnectTimeout: -time.Second}, "ConnectTimeout", nil},
		{"CommandTimeout negative", transport.SMTPOptions{Addr: addr, CommandTimeout: -time.Second}, "CommandTimeout", nil},
		{"DataTimeout negative", transport.SMTPOptions{Addr: addr, DataTimeout: -time.Second}, "DataTimeout", nil},
		{"EndOfDataTimeout negative", transport.SMTPOptions{Addr: addr, EndOfDataTimeout: -time.Second}, "EndOfDataTimeout", nil},
		// DisableChunking has no wrong value. SetupCoolDown: negative means none.
		{"SetupCoolDown negative means none", transport.SMTPOptions{Addr: addr, SetupCoolDown: -1}, "", nil},
		// Retry
		{"Retry.Attempts negative", transport.SMTPOptions{Addr: addr, Retry: transport.RetryPolicy{Attempts: -1}}, "Retry.Attempts", nil},
		{"Retry.Base negative", transport.SMTPOptions{Addr: addr, Retry: transport.RetryPolicy{Base: -1}}, "Retry.Base", nil},
		{"Retry.Cap negative", transport.SMTPOptions{Addr: addr, Retry: transport.RetryPolicy{Cap: -1}}, "Retry.Cap", nil},
		{"Retry.Base above Cap is capped", transport.SMTPOptions{Addr: addr, Retry: transport.RetryPolicy{Base: time.Minute, Cap: time.Second}}, "", nil},
		// RateLimit
		{"RateLimit negative", transport.SMTPOptions{Addr: addr, RateLimit: -1}, "RateLimit", nil},
		{"RateLimit NaN", transport.SMTPOptions{Addr: addr, RateLimit: math.NaN()}, "RateLimit", nil},
		{"RateLimit infinite means none", transport.SMTPOptions{Addr: addr, RateLimit: math.Inf(1)}, "", nil},
		// Dial, Logger: nil means the default. PoolWaitLogThreshold: negative means never.
		{"PoolWaitLogThreshold negative means never", transport.SMTPOptions{Addr: addr, PoolWaitLogThreshold: -1}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := transport.NewSMTP(tt.opts)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("NewSMTP: %v, want a transport", err)
				}
				_ = tr.Close()
				return
			}
			var oe *option.Error
			if tr != nil || !errors.As(err, &oe) || oe.Op != "transport.NewSMTP" || oe.Field != "SMTPOptions."+tt.field {
				t.Fatalf("NewSMTP = %v, %v; want an *option.Error for SMTPOptions.%s", tr, err, tt.field)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("NewSMTP: %v, want %v", err, tt.want)
			}
		})
	}
}
