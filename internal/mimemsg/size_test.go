package mimemsg

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestMIMEStaticSize(t *testing.T) {
	l, v := mimeWorkload(t)
	sk, err := New(l, mimeSeededRand(1))
	if err != nil {
		t.Fatal(err)
	}
	empty := *v
	empty.ToName, empty.Subject, empty.Text, empty.HTML = "", "", nil, nil
	msg, err := sk.Append(nil, &empty)
	if err != nil {
		t.Fatal(err)
	}
	// Only the recipient's address and the Message-ID remain beyond the
	// static bytes: " <addr>" and " <id>".
	extra := len(" <"+empty.ToAddr+">") + len(" "+empty.MessageID)
	if got := sk.StaticSize(); got != len(msg)-extra {
		t.Errorf("StaticSize() = %d, want %d", got, len(msg)-extra)
	}
	var files int
	for _, f := range slices.Concat(l.Images, l.Attachments) {
		files += len(f.Data)
	}
	if sk.StaticSize() < files*4/3 {
		t.Errorf("StaticSize() = %d, less than the base64 of the files (%d)", sk.StaticSize(), files*4/3)
	}
}

// TestMIMEMaxSize: a message of exactly Layout.MaxSize octets is
// built; one octet more is refused with ErrTooLarge, dst untouched,
// whichever part crosses the limit (the text body measured exactly when it
// ends the message, with or without its final soft line break).
func TestMIMEMaxSize(t *testing.T) {
	for _, tc := range []struct {
		name       string
		text, html bool
		body       string
	}{
		{"text and html", true, true, "Hi,\r\nline\r\n"},
		{"text ends the message with a line break", true, false, "Hi,\r\nZoë = café\n"},
		{"text ends the message without one", true, false, "Hi,\r\n" + strings.Repeat("Zoë ", 40)},
		{"empty text", true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mimeTestVarying()
			v.Text = []byte(tc.body)
			l := mimeTestLayout(mimeTestParts{Text: tc.text, HTML: tc.html})
			want := mimeBuild(t, l, v)
			for _, max := range []int{len(want), len(want) - 1} {
				l := mimeTestLayout(mimeTestParts{Text: tc.text, HTML: tc.html})
				l.MaxSize = max
				sk, err := New(l, mimeSeededRand(1))
				if err != nil {
					t.Fatal(err)
				}
				got, err := sk.Append([]byte("pre"), v)
				switch {
				case max == len(want) && (err != nil || string(got) != "pre"+string(want)):
					t.Errorf("MaxSize %d, the message's size: %v, %d octets", max, err, len(got)-3)
				case max < len(want) && (!errors.Is(err, ErrTooLarge) || string(got) != "pre"):
					t.Errorf("MaxSize %d, one octet short: %v, %d octets", max, err, len(got)-3)
				}
			}
		})
	}
}

// TestMIMEMaxSizeBoundsMemory: Append never reserves more than
// MaxSize, and refuses a part that cannot fit before encoding it, so that
// refusing a message allocates about MaxSize whatever its parts hold (the
// bound leaves room for what other tests allocate meanwhile).
func TestMIMEMaxSizeBoundsMemory(t *testing.T) {
	const max = 64 << 10
	utf8MiB := strings.Repeat("é", 1<<19) // 1 MiB, 6 MiB in quoted-printable
	for _, tc := range []struct {
		name string
		set  func(v *Varying)
	}{
		{"text", func(v *Varying) { v.Text = []byte(utf8MiB) }},
		{"html", func(v *Varying) { v.HTML = []byte(utf8MiB) }},
		{"subject", func(v *Varying) { v.Subject = utf8MiB }},
		{"header", func(v *Varying) { v.HeaderValues = []string{utf8MiB} }},
		{"small parts", func(v *Varying) { v.Text, v.HTML = []byte(utf8MiB[:50<<10]), []byte(utf8MiB[:50<<10]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mimeTestLayout(mimeTestParts{Text: true, HTML: true})
			l.MaxSize = max
			sk, err := New(l, mimeSeededRand(1))
			if err != nil {
				t.Fatal(err)
			}
			v := mimeTestVarying()
			tc.set(v)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = sk.Append(nil, v)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Append: %v, want ErrTooLarge", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 4*max {
				t.Errorf("refusing the message allocated %d octets, want at most 4 × MaxSize", n)
			}
		})
	}
}

func TestMIMEHeaderValueCount(t *testing.T) {
	sk, err := New(mimeTestLayout(mimeTestParts{Text: true}), mimeSeededRand(1))
	if err != nil {
		t.Fatal(err)
	}
	v := mimeTestVarying()
	v.HeaderValues = nil
	if _, err := sk.Append(nil, v); err == nil {
		t.Fatal("Append with too few header values succeeded")
	}
}
