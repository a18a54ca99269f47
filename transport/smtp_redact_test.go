package transport_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/postroom/postroom/transport"
)

// TestSMTPPrintingRedactsPassword prints the options and the transport by
// every path a program logs them (fmt's verbs, nested in a struct, slog's
// text and JSON handlers): the password or token never shows, the address
// does.
func TestSMTPPrintingRedactsPassword(t *testing.T) {
	const secret = "hunter2-s3cret-token"
	opts := transport.SMTPOptions{Addr: "smtp.example.org:587", Username: "user@example.org", Password: secret, Auth: transport.AuthXOAUTH2}
	tr, err := transport.NewSMTP(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	type config struct {
		SMTP transport.SMTPOptions
		T    *transport.SMTP
	}
	values := map[string]any{
		"options":          opts,
		"*options":         &opts,
		"transport":        tr,
		"struct of both":   config{opts, tr},
		"*struct of both":  &config{opts, tr},
		"slice of options": []transport.SMTPOptions{opts},
	}
	leaks := []string{secret, hex.EncodeToString([]byte(secret)), strings.ToUpper(hex.EncodeToString([]byte(secret)))}
	check := func(t *testing.T, what, out string, wantAddr bool) {
		t.Helper()
		for _, l := range leaks {
			if strings.Contains(out, l) {
				t.Errorf("%s shows the password: %s", what, out)
			}
		}
		if wantAddr && !strings.Contains(out, "smtp.example.org") {
			t.Errorf("%s lacks the address: %s", what, out)
		}
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X"} {
				check(t, verb, fmt.Sprintf(verb, v), verb != "%x" && verb != "%X")
			}
			check(t, "Sprint", fmt.Sprint(v), true)
			j, err := json.Marshal(v)
			if err != nil {
				t.Errorf("json.Marshal: %v", err)
			}
			check(t, "json.Marshal", string(j), true)
			check(t, "Sprintln", fmt.Sprintln(v), true)
			for _, h := range []struct {
				name string
				new  func(*bytes.Buffer) slog.Handler
			}{
				{"text", func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) }},
				{"json", func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) }},
			} {
				var b bytes.Buffer
				slog.New(h.new(&b)).Info("smtp", "v", v)
				check(t, "slog "+h.name, b.String(), true)
			}
		})
	}
	if got := fmt.Sprintf("%#v", opts); !strings.HasPrefix(got, "transport.SMTPOptions{") {
		t.Errorf("%%#v = %s, want transport.SMTPOptions{...}", got)
	}
}
