package mimemsg

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom/internal/testkit/workload"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// mimeWorkload is the shared workload's message as the MIME layer gets it
// (bodies unrendered: the layer does not care).
func mimeWorkload(t testing.TB) (*Layout, *Varying) {
	t.Helper()
	// The workload call's fields this layer reads: the root package's
	// Call has the same JSON tags, but this package does not import it.
	type file struct {
		Name        string `json:"name"`
		CID         string `json:"cid"`
		ContentType string `json:"content_type"`
		Content     string `json:"content"`
	}
	var call struct {
		Message struct {
			FromName  string `json:"from_name"`
			FromEmail string `json:"from_email"`
			HTML      string `json:"html"`
			Text      string `json:"text"`
			Headers   []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"headers"`
			Images      []file `json:"images"`
			Attachments []file `json:"attachments"`
		} `json:"message"`
		Recipients []struct {
			Email string `json:"email"`
			Name  string `json:"name"`
		} `json:"recipients"`
	}
	if err := json.Unmarshal(workload.Read(t), &call); err != nil {
		t.Fatalf("decoding the workload: %v", err)
	}
	m := call.Message
	decode := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("workload base64: %v", err)
		}
		return b
	}
	l := &Layout{
		FromName: m.FromName, FromAddr: m.FromEmail,
		Date:    time.Date(2024, 11, 5, 9, 30, 0, 0, time.UTC),
		HasText: m.Text != "", HasHTML: m.HTML != "",
	}
	for _, h := range m.Headers {
		l.Headers = append(l.Headers, Header{Name: h.Name, Value: h.Value})
	}
	for _, img := range m.Images {
		l.Images = append(l.Images, File{Name: img.Name, CID: img.CID, ContentType: img.ContentType, Data: decode(img.Content)})
	}
	for _, a := range m.Attachments {
		l.Attachments = append(l.Attachments, File{Name: a.Name, ContentType: a.ContentType, Data: decode(a.Content)})
	}
	r := call.Recipients[0]
	v := &Varying{
		ToName: r.Name, ToAddr: r.Email,
		Subject:      "Your order #ORD-10000000 is confirmed, Alice",
		MessageID:    "<0123456789abcdef0123456789abcdef@shop.example.com>",
		HeaderValues: []string{},
		Text:         []byte(m.Text), HTML: []byte(m.HTML),
	}
	return l, v
}

// mimeCRLF is b with every lone LF turned into CRLF.
func mimeCRLF(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
}

func TestMIMEWorkloadGolden(t *testing.T) {
	l, v := mimeWorkload(t)
	msg := mimeBuild(t, l, v)
	p := mimeParse(t, msg)
	if want := "mixed(alternative(text/plain,related(text/html,image/png,image/png)),application/pdf)"; p.Tree != want {
		t.Errorf("tree %s, want %s", p.Tree, want)
	}
	if got := p.Leaf(t, "text/html").Body; !bytes.Equal(got, mimeCRLF(v.HTML)) {
		t.Errorf("html does not decode to the input with CRLF line breaks")
	}
	if got := p.Leaf(t, "text/plain").Body; !bytes.Equal(got, mimeCRLF(v.Text)) {
		t.Errorf("text does not decode to the input with CRLF line breaks")
	}
	mimeCheckFile(t, p.Leaf(t, "application/pdf"), l.Attachments[0], "attachment", "invoice.pdf")

	golden := filepath.Join("testdata", "golden", "workload.eml")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, msg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading the golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(msg, want) {
		t.Errorf("message differs from %s (run with -update if the change is intended)", golden)
	}
}

func TestMIMEDeterminism(t *testing.T) {
	l, v := mimeWorkload(t)
	build := func(seed byte) []byte {
		sk, err := New(l, mimeSeededRand(seed))
		if err != nil {
			t.Fatal(err)
		}
		msg, err := sk.Append(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	a, b, c := build(7), build(7), build(8)
	if !bytes.Equal(a, b) {
		t.Error("the same random source gave different messages")
	}
	if bytes.Equal(a, c) {
		t.Error("different random sources gave the same boundaries")
	}

	// A random source that repeats itself still gives one boundary per level.
	sk, err := New(l, bytes.NewReader(make([]byte, 64)))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := sk.Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if p := mimeParse(t, msg); !strings.HasPrefix(p.Tree, "mixed(alternative(text/plain,related(") {
		t.Errorf("zero random source: tree %s", p.Tree)
	}

	if _, err := New(l, bytes.NewReader(nil)); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("empty random source: err = %v, want EOF", err)
	}
}

func TestMIMEConcurrent(t *testing.T) {
	l, v := mimeWorkload(t)
	l.Headers = append(l.Headers, Header{Name: "X-Recipient", Dynamic: true})
	sk, err := New(l, mimeSeededRand(1))
	if err != nil {
		t.Fatal(err)
	}
	varying := func(i int) *Varying {
		w := *v
		w.ToAddr = workload.Address(i)
		w.Subject = fmt.Sprintf("Order %d für Zoë", i)
		w.HeaderValues = []string{fmt.Sprint(i)}
		return &w
	}
	const n = 16
	want := make([][]byte, n)
	for i := range n {
		if want[i], err = sk.Append(nil, varying(i)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for g := range 4 {
		wg.Go(func() {
			var buf []byte
			for i := range n {
				k := (i + g) % n
				var err error
				buf, err = sk.Append(buf[:0], varying(k))
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(buf, want[k]) {
					errs <- fmt.Errorf("goroutine %d, message %d differs from the serial one", g, k)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	p := mimeParse(t, want[3])
	if got := p.Header.Get("X-Recipient"); got != "3" {
		t.Errorf("X-Recipient %q, want 3", got)
	}
}

func BenchmarkAppendMessage(b *testing.B) {
	l, v := mimeWorkload(b)
	sk, err := New(l, mimeSeededRand(1))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name            string
		toName, subject string
	}{
		{"ascii", "Alice Example", "Your order #ORD-10000000 is confirmed, Alice"},
		{"utf8", "Zoë Example", "Your order #ORD-10000074 is confirmed, Zoë"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := *v
			w.ToName, w.Subject = bc.toName, bc.subject
			msg, err := sk.Append(nil, &w)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				msg, err = sk.Append(msg[:0], &w)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// A new buffer per message: the one allocation Append makes
	// when dst has no room, and the cost of writing into cold memory.
	b.Run("fresh", func(b *testing.B) {
		msg, err := sk.Append(nil, v)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sk.Append(nil, v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkNewSkeleton(b *testing.B) {
	l, _ := mimeWorkload(b)
	rnd := mimeSeededRand(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(l, rnd); err != nil {
			b.Fatal(err)
		}
	}
}
