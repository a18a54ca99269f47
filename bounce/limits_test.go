package bounce

import (
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatReader gives line n times, without holding more than line.
type repeatReader struct {
	line string
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 && r.n > 0 {
		c := copy(p, r.line[r.off:])
		p, total, r.off = p[c:], total+c, r.off+c
		if r.off == len(r.line) {
			r.off, r.n = 0, r.n-1
		}
	}
	if total == 0 && r.n == 0 {
		return 0, io.EOF
	}
	return total, nil
}

const bigHead = "From: MAILER-DAEMON@mx.example.com\nTo: bounces+0123456789abcdef0123456789abcdef@bounce.example.com\n" +
	"Subject: Undelivered Mail Returned to Sender\nMIME-Version: 1.0\n" +
	"Content-Type: multipart/report; report-type=delivery-status; boundary=\"B\"\n\n" +
	"--B\nContent-Type: text/plain\n\nThe mail system\n\n" +
	"--B\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.com\n\n" +
	"Final-Recipient: rfc822; gone@example.net\nAction: failed\nStatus: 5.1.1\n" +
	"Diagnostic-Code: smtp; 550 5.1.1 <gone@example.net>: User unknown\n\n" +
	"--B\nContent-Type: message/rfc822\n\nFrom: news@example.com\nTo: gone@example.net\nSubject: big\n" +
	"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"I\"\n\n--I\nContent-Type: application/pdf\n" +
	"Content-Transfer-Encoding: base64\n\n"

// bigBounce returns a reader of a 25 MB bounce: a DSN returning a message
// with a 25 MB attachment, made as it is read.
func bigBounce() io.Reader {
	line := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 3)[:76] + "\n"
	return io.MultiReader(strings.NewReader(bigHead), &repeatReader{line: line, n: 25 << 20 / len(line)},
		strings.NewReader("--I--\n--B--\n"))
}

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc:
// every allocation counts, whether or not it was freed since).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseBoundedMemory: a 25 MB bounce, and 25 MB of worse shapes (one
// endless line, an endless text part, an endless header), are read
// with at most 2 MiB allocated in all: Parse keeps its bounded share and
// streams past the rest.
func TestParseBoundedMemory(t *testing.T) {
	const limit = 2 << 20
	cases := map[string]func() io.Reader{
		"attachment": bigBounce,
		"one line": func() io.Reader {
			return io.MultiReader(strings.NewReader("Subject: x\n\n"), &repeatReader{line: strings.Repeat("x", 4096), n: 25 << 20 / 4096})
		},
		"text part": func() io.Reader {
			return io.MultiReader(strings.NewReader("From: MAILER-DAEMON@x.example\nSubject: failure notice\n\n"),
				&repeatReader{line: "<a@example.net>: 550 5.1.1 user unknown and more words\n", n: 25 << 20 / 50})
		},
		"header": func() io.Reader {
			return io.MultiReader(strings.NewReader("Subject: x\n"), &repeatReader{line: "X-Filler: abcdefghijklmnopqrstuvwxyz\n", n: 25 << 20 / 36})
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			var rep *Report
			var err error
			n := allocated(func() { rep, err = Parse(mk()) })
			if err != nil {
				t.Fatal(err)
			}
			if n > limit {
				t.Errorf("allocated %d bytes, more than %d", n, limit)
			}
			t.Logf("allocated %d bytes", n)
			checkInvariants(t, rep)
		})
	}
}

// TestParseBigBounce: the 25 MB bounce's report is read right.
func TestParseBigBounce(t *testing.T) {
	rep, err := Parse(bigBounce())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeBounce || len(rep.Recipients) != 1 || !rep.Recipients[0].Hard ||
		rep.SendID != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("got %+v", rep)
	}
}

// TestParseReadBound: Parse stops reading at its bound on an endless
// reader.
func TestParseReadBound(t *testing.T) {
	cr := &countingReader{r: &repeatReader{line: "Subject: x\n", n: 1 << 40}}
	if _, err := Parse(cr); err != nil {
		t.Fatal(err)
	}
	if cr.n > maxRead {
		t.Fatalf("read %d bytes, bound %d", cr.n, maxRead)
	}
}

// TestParseRecipientBound: a bounce naming thousands of addresses, in
// its text and in its report, lists at most maxRecipients.
func TestParseRecipientBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("From: MAILER-DAEMON@x.example\nSubject: failure notice\nContent-Type: multipart/report; boundary=x\n\n--x\nContent-Type: text/plain\n\n")
	for i := 0; i < 3000; i++ {
		b.WriteString("u" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i) + "@example.com: 550 5.1.1 user unknown\n")
	}
	b.WriteString("--x--\n")
	rep, err := Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Recipients) == 0 || len(rep.Recipients) > maxRecipients {
		t.Fatalf("%d recipients, want 1 to %d", len(rep.Recipients), maxRecipients)
	}
	b.Reset()
	b.WriteString("Subject: x\nContent-Type: multipart/report; boundary=x\n\n--x\nContent-Type: message/delivery-status\n\n")
	for i := 0; i < 3000; i++ {
		b.WriteString("Final-Recipient: rfc822; u" + itoa(i) + "@example.com\nAction: failed\nStatus: 5.1.1\n\n")
	}
	rep, err = Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Recipients) != maxRecipients {
		t.Fatalf("%d recipients, want %d", len(rep.Recipients), maxRecipients)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}
