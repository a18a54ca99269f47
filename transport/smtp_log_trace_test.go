package transport

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// lineCapture keeps the "line" of each trace record, "C: " or "S: "
// first.
type lineCapture struct{ lines *[]string }

func (h lineCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h lineCapture) Handle(_ context.Context, r slog.Record) error {
	var dir, line string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "dir":
			dir = a.Value.String()
		case "line":
			line = a.Value.String()
		}
		return true
	})
	*h.lines = append(*h.lines, dir+": "+line)
	return nil
}
func (h lineCapture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h lineCapture) WithGroup(string) slog.Handler      { return h }

// chunks cuts b into pieces whose lengths come from cuts, as writes and
// reads of any size would.
func chunks(b, cuts []byte) [][]byte {
	var out [][]byte
	for i := 0; len(b) > 0; i++ {
		n := len(b)
		if len(cuts) > 0 {
			n = min(n, int(cuts[i%len(cuts)])+1)
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// traceLines is the oracle: the lines the trace shows for text sent as
// is: each line up to LF, its CR dropped, cut at maxTraceLine.
func traceLines(dir string, text []byte) []string {
	var out []string
	for _, l := range bytes.SplitAfter(text, []byte("\n")) {
		if len(l) == 0 || l[len(l)-1] != '\n' {
			continue
		}
		l = l[:len(l)-1]
		cut := false
		if len(l) > maxTraceLine {
			l, cut = l[:maxTraceLine], true
		}
		s := string(bytes.TrimSuffix(l, []byte("\r")))
		if cut {
			s += " [cut]"
		}
		out = append(out, dir+": "+strings.ToValidUTF8(s, "?"))
	}
	return out
}

// FuzzTrace: whatever the commands and the message, however the bytes are
// cut into writes and reads, the trace shows the commands and replies
// line by line as they are, the message only as its size, and in the
// AUTH exchange nothing of what either side sends but the mechanism.
func FuzzTrace(f *testing.F) {
	f.Add([]byte("MAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\n"), []byte("250 ok\r\n"), []byte("Subject: x\r\n\r\nsecret\r\n.\r\n"), []byte("AUTH PLAIN AHUAcHc=\r\n"), []byte{3, 0, 7})
	f.Add([]byte("EHLO x\n"), []byte("334 VXNlcm5hbWU6\r\n235 ok\r\n"), []byte(""), []byte("AUTH LOGIN\r\ndXNlcg==\r\ncGFzcw==\r\n"), []byte{})
	f.Add([]byte(strings.Repeat("x", 700)+"\r\n"), []byte("250-a\r\n250 b\r\n"), []byte("\n\n\r\n"), []byte("auth xoauth2 dXNlcj0\r\n*\r\n"), []byte{0})
	f.Fuzz(func(t *testing.T, cmds, replies, body, auth, cuts []byte) {
		for _, b := range []*[]byte{&cmds, &replies, &auth} {
			if len(*b) > 0 && (*b)[len(*b)-1] != '\n' {
				*b = append(*b, '\n') // commands and replies end their lines
			}
		}
		var got []string
		l := &smtpLog{l: slog.New(lineCapture{&got})}
		tr := l.newTracer(context.Background(), 1)
		write := func(b []byte) {
			for _, c := range chunks(b, cuts) {
				tr.wrote(c)
			}
		}
		read := func(b []byte) {
			for _, c := range chunks(b, cuts) {
				tr.read(c)
			}
		}

		write(cmds)
		read(replies)
		tr.auth(true)
		write(auth)
		read(replies)
		tr.auth(false)
		tr.beginContent(0)
		write(body)
		tr.endContent()
		tr.beginContent(1)
		write([]byte("BDAT 9 LAST\r\n"))
		write(body)
		tr.endContent()

		var want []string
		want = append(want, traceLines("C", cmds)...)
		want = append(want, traceLines("S", replies)...)
		for i, line := range traceLines("C", auth) {
			if i == 0 {
				want = append(want, "C: "+redactAuth(strings.TrimPrefix(line, "C: ")))
			} else {
				want = append(want, "C: [redacted]")
			}
		}
		for _, line := range traceLines("S", replies) {
			if strings.HasPrefix(line, "S: 334") {
				line = "S: 334 [redacted]"
			}
			want = append(want, line)
		}
		want = append(want, fmt.Sprintf("C: [message text: %d bytes]", len(body)), "C: BDAT 9 LAST", fmt.Sprintf("C: [message text: %d bytes]", len(body)))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// The AUTH exchange shows nothing but AUTH and the mechanism.
		for _, line := range got[len(traceLines("C", cmds))+len(traceLines("S", replies)):][:len(traceLines("C", auth))] {
			f := strings.Fields(strings.TrimPrefix(line, "C: "))
			if line != "C: [redacted]" && !(len(f) >= 1 && strings.EqualFold(f[0], "AUTH") && (len(f) <= 2 || len(f) == 3 && f[2] == redacted)) {
				t.Errorf("AUTH exchange traced as %q", line)
			}
		}
	})
}
