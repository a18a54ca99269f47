package transport

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// redacted stands in for a secret wherever SMTPOptions or SMTP is printed.
const redacted = "[redacted]"

// smtpOptionsView is SMTPOptions without its methods, for printing.
type smtpOptionsView SMTPOptions

func (o SMTPOptions) view() smtpOptionsView {
	v := smtpOptionsView(o)
	if v.Password != "" {
		v.Password = redacted
	}
	return v
}

// Format implements fmt.Formatter: o prints as fmt would print it with
// any verb and flags (%v, %+v, %#v, %s...), except that a non-empty
// Password, the password or OAuth 2 token, prints as "[redacted]".
func (o SMTPOptions) Format(f fmt.State, verb rune) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), o.view())
	if verb == 'v' && f.Flag('#') {
		s = strings.Replace(s, "transport.smtpOptionsView", "transport.SMTPOptions", 1)
	}
	_, _ = io.WriteString(f, s)
}

// LogValue implements slog.LogValuer: the options that say where and how
// the transport connects, the password redacted.
func (o SMTPOptions) LogValue() slog.Value {
	pw := ""
	if o.Password != "" {
		pw = redacted
	}
	return slog.GroupValue(
		slog.String("addr", o.Addr),
		slog.Int("tls", int(o.TLS)),
		slog.String("username", o.Username),
		slog.String("password", pw),
		slog.String("auth", string(o.Auth)),
		slog.String("helo_name", o.HELOName),
		slog.Int("max_conns", o.MaxConns),
	)
}

// MarshalJSON encodes the attributes of LogValue as a JSON object, so that
// options inside a value a JSON logger encodes show no password either.
// (Without it encoding/json could not encode SMTPOptions: Dial is a func.)
func (o SMTPOptions) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	for _, a := range o.LogValue().Group() {
		m[a.Key] = a.Value.Any()
	}
	return json.Marshal(m)
}

// Format implements fmt.Formatter: t prints as its options do (see
// SMTPOptions.Format), never its password.
func (t *SMTP) Format(f fmt.State, verb rune) {
	if t == nil {
		_, _ = io.WriteString(f, "<nil>")
		return
	}
	_, _ = io.WriteString(f, "&transport.SMTP{")
	t.opts.Format(f, verb)
	_, _ = io.WriteString(f, "}")
}

// LogValue implements slog.LogValuer, as SMTPOptions.LogValue.
func (t *SMTP) LogValue() slog.Value {
	if t == nil {
		return slog.StringValue("<nil>")
	}
	return t.opts.LogValue()
}

// MarshalJSON encodes t's options, as SMTPOptions.MarshalJSON.
func (t *SMTP) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("null"), nil
	}
	return t.opts.MarshalJSON()
}
