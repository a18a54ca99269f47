package postroom

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	tests := []struct {
		name, in, want string // want "" means refused
	}{
		{"plain", "user@example.com", "user@example.com"},
		{"domain lower-cased, local kept", "User.Name@Example.COM", "User.Name@example.com"},
		{"atext specials", "a!#$%&'*+-/?=^_`{|}~@example.com", "a!#$%&'*+-/?=^_`{|}~@example.com"},
		{"idn to a-label", "hans@bücher.example", "hans@xn--bcher-kva.example"},
		{"subdomains", "a@mail.eu.example.co.uk", "a@mail.eu.example.co.uk"},
		{"empty", "", ""},
		{"no at", "user.example.com", ""},
		{"empty local", "@example.com", ""},
		{"empty domain", "user@", ""},
		{"quoted local part", `"john doe"@example.com`, ""},
		{"comment", "user(comment)@example.com", ""},
		{"domain literal", "user@[192.0.2.1]", ""},
		{"display name", "Bob <bob@example.com>", ""},
		{"leading dot", ".user@example.com", ""},
		{"trailing dot", "user.@example.com", ""},
		{"double dot", "us..er@example.com", ""},
		{"space", "us er@example.com", ""},
		{"two ats", "a@b@example.com", ""},
		{"utf-8 local part", "zoë@example.com", ""},
		{"single-label domain", "root@localhost", ""},
		{"label starts with hyphen", "a@-x.example.com", ""},
		{"underscore in domain", "a@x_y.example.com", ""},
		{"empty label", "a@x..example.com", ""},
		{"CR", "a@example.com\r", ""},
		{"LF injection", "a@example.com\nBcc: evil@example.com", ""},
		{"NUL", "a\x00b@example.com", ""},
		{"encoded-word look-alike", "=?utf-8?q?ann=40victim.example?=@attacker.example", ""},
		{"encoded-word start inside", "ann=?x@example.com", ""},
		{"equals and question mark apart", "a=b?c@example.com", "a=b?c@example.com"},
		{"local part 64 octets", strings.Repeat("a", 64) + "@example.com", strings.Repeat("a", 64) + "@example.com"},
		{"local part 65 octets", strings.Repeat("a", 65) + "@example.com", ""},
		{"label 64 octets", "a@" + strings.Repeat("b", 64) + ".com", ""},
		{"path over 254 octets", strings.Repeat("a", 64) + "@" + strings.Repeat(strings.Repeat("b", 60)+".", 4) + "com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := parseAddress(tt.in)
			if tt.want == "" {
				if problem == "" || got != "" {
					t.Fatalf("parseAddress(%q) = %q, %q; want a problem", tt.in, got, problem)
				}
				return
			}
			if problem != "" || got != tt.want {
				t.Fatalf("parseAddress(%q) = %q, %q; want %q", tt.in, got, problem, tt.want)
			}
		})
	}
}

func TestCheckHeaderName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"X-Campaign-ID", true},
		{"List-Unsubscribe", true},
		{"List-Unsubscribe-Post", true},
		{"", false},
		{"X Bad", false},
		{"X-Colon:", false},
		{"X-Ünicode", false},
		{"X-Tab\t", false},
		{"X-CR\r", false},
		{"X-LF\nBcc", false},
		{"From", false},
		{"sender", false},
		{"TO", false},
		{"cc", false},
		{"Bcc", false},
		{"reply-to", false},
		{"Subject", false},
		{"date", false},
		{"Message-Id", false},
		{"MIME-Version", false},
		{"Content-Type", false},
		{"content-transfer-encoding", false},
		{"Content-Whatever", false},
		{"Return-Path", false},
		{"RECEIVED", false},
		{"DKIM-Signature", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkHeaderName(tt.name) == ""; got != tt.ok {
				t.Fatalf("checkHeaderName(%q) ok = %v, want %v (%s)", tt.name, got, tt.ok, checkHeaderName(tt.name))
			}
		})
	}
}

func TestParseBCC(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // nil with wantErr false: no bcc
		wantErr  bool
	}{
		{"empty", "", nil, false},
		{"blank", "  ", nil, false},
		{"one", "audit@example.com", []string{"audit@example.com"}, false},
		{"several with spaces", " a@example.com , b@example.org,c@example.net ", []string{"a@example.com", "b@example.org", "c@example.net"}, false},
		{"with names", "Audit <audit@example.com>, b@example.org", []string{"audit@example.com", "b@example.org"}, false},
		{"idn", "x@bücher.example", []string{"x@xn--bcher-kva.example"}, false},
		{"duplicates dropped", "a@example.com, A@EXAMPLE.com", []string{"a@example.com"}, false},
		{"empty entry skipped", "a@example.com,,b@example.com", []string{"a@example.com", "b@example.com"}, false},
		{"not an address", "a@example.com, nope", nil, true},
		{"single-label", "root@localhost", nil, true},
		{"injection", "a@example.com\r\nX-Evil: 1", nil, true},
		{"too many", strings.Repeat("a@example.com,", 3) + "b@example.com", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBCC(tt.in, 3)
			if tt.wantErr {
				var ve *ValidationError
				if !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, "message.bcc") {
					t.Fatalf("parseBCC(%q) = %v, %v; want a ValidationError on message.bcc", tt.in, got, err)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("parseBCC(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestStaticKeys(t *testing.T) {
	keys := StaticKeys{"acct": {"k1", "k2"}, "empty": {""}}
	tests := []struct {
		account, key string
		ok           bool
	}{
		{"acct", "k1", true},
		{"acct", "k2", true},
		{"acct", "k3", false},
		{"acct", "", false},
		{"acct", "k1 ", false},
		{"other", "k1", false},
		{"", "", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.account+"/"+tt.key, func(t *testing.T) {
			err := keys.Authenticate(t.Context(), tt.account, tt.key)
			if (err == nil) != tt.ok {
				t.Fatalf("Authenticate(%q, %q) = %v, want ok %v", tt.account, tt.key, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("error %v does not wrap ErrUnauthorized", err)
			}
		})
	}
}
