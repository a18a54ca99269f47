package postroomtest

import (
	"fmt"
	"mime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Want is what a test expects of a message, for Message.Check. Each zero
// field is not checked.
type Want struct {
	// Subject is the whole subject, decoded.
	Subject string
	// From is the From header's address (not its name).
	From string
	// To is the recipient's address: the first envelope recipient, which
	// is also the To header's address.
	To string
	// BCC are the bcc addresses, in the envelope after the recipient.
	BCC []string
	// HTMLContains and TextContains are strings the html or text part must
	// each contain; HTMLLacks and TextLacks strings they must not.
	HTMLContains, TextContains []string
	HTMLLacks, TextLacks       []string
	// Headers are header fields the message must have with exactly these
	// (decoded) values, such as {"X-Order": "1001"}.
	Headers map[string]string
	// Attachments are the file names of the attachments, in order.
	Attachments []string
	// Inline are the Content-IDs of the inline images, in order.
	Inline []string
}

// Check reports, with tb.Errorf, every way m differs from w, one line
// each, in the form `want subject "Your order 1001", got "Your order "`:
// values are quoted as Go strings, so that spaces at their ends, control
// characters and invalid UTF-8 show.
// It returns whether m matched.
func (m *Message) Check(tb testing.TB, w Want) bool {
	tb.Helper()
	var diffs []string
	differ := func(what string, want, got any) {
		diffs = append(diffs, fmt.Sprintf("want %s %q, got %q", what, want, got))
	}
	if w.Subject != "" && m.Subject != w.Subject {
		differ("subject", w.Subject, m.Subject)
	}
	if w.From != "" {
		got := ""
		if m.From != nil {
			got = m.From.Address
		}
		if !strings.EqualFold(got, w.From) {
			differ("from", w.From, got)
		}
	}
	if w.To != "" {
		got := ""
		if len(m.EnvelopeTo) > 0 {
			got = m.EnvelopeTo[0]
		}
		if !strings.EqualFold(got, w.To) {
			differ("to", w.To, got)
		}
	}
	if w.BCC != nil {
		var got []string
		if len(m.EnvelopeTo) > 1 {
			got = m.EnvelopeTo[1:]
		}
		if !slices.EqualFunc(got, w.BCC, strings.EqualFold) {
			differ("bcc", w.BCC, got)
		}
	}
	contains := func(part, body string, want []string, present bool) {
		for _, s := range want {
			if strings.Contains(body, s) != present {
				verb := "containing"
				if !present {
					verb = "without"
				}
				diffs = append(diffs, fmt.Sprintf("want %s part %s %q, got %q", part, verb, s, excerpt(body)))
			}
		}
	}
	contains("html", m.HTML, w.HTMLContains, true)
	contains("text", m.Text, w.TextContains, true)
	contains("html", m.HTML, w.HTMLLacks, false)
	contains("text", m.Text, w.TextLacks, false)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range w.Headers {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		if got := m.HeaderValue(name); got != w.Headers[name] {
			differ("header "+name, w.Headers[name], got)
		}
	}
	if w.Attachments != nil {
		got := make([]string, len(m.Attachments))
		for i, f := range m.Attachments {
			got[i] = f.Name
		}
		if !slices.Equal(got, w.Attachments) {
			differ("attachments", w.Attachments, got)
		}
	}
	if w.Inline != nil {
		got := make([]string, len(m.Inline))
		for i, f := range m.Inline {
			got[i] = f.ContentID
		}
		if !slices.Equal(got, w.Inline) {
			differ("inline images", w.Inline, got)
		}
	}
	for _, d := range diffs {
		tb.Errorf("postroomtest: message to %s: %s", m.recipient(), d)
	}
	return len(diffs) == 0
}

// HeaderValue returns the first value of the top-level header field name
// as it was written, leading and trailing spaces included (net/mail's
// Header trims them), decoded (RFC 2047 encoded words), or "" when the
// message has no such field; a value that does not decode is returned as
// it is.
func (m *Message) HeaderValue(name string) string {
	v := rawHeaderValue(m.Raw, name)
	if d, err := new(mime.WordDecoder).DecodeHeader(v); err == nil {
		return d
	}
	return v
}

// recipient is m's recipient for a failure's text.
func (m *Message) recipient() string {
	if len(m.EnvelopeTo) == 0 {
		return "(none)"
	}
	return m.EnvelopeTo[0]
}

// excerpt shortens a part's body for a failure's text, cutting at a
// character's start: a cut inside one would show as invalid bytes.
func excerpt(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
