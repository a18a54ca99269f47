package bounce

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

// lineEndVariants returns msg with its line ends written each way a
// mailbox or a transfer may leave them: LF, CRLF, CR alone, CRLF and LF
// alternating, and CR CR LF.
func lineEndVariants(msg []byte) map[string][]byte {
	lf := regexp.MustCompile("\r\r?\n").ReplaceAll(msg, []byte("\n"))
	lf = bytes.ReplaceAll(lf, []byte("\r"), []byte("\n"))
	var mixed []byte
	for i, l := range bytes.SplitAfter(lf, []byte("\n")) {
		if i%2 == 1 {
			l = bytes.ReplaceAll(l, []byte("\n"), []byte("\r\n"))
		}
		mixed = append(mixed, l...)
	}
	return map[string][]byte{
		"LF":     lf,
		"CRLF":   bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n")),
		"CR":     bytes.ReplaceAll(lf, []byte("\n"), []byte("\r")),
		"mixed":  mixed,
		"CRCRLF": bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\r\n")),
	}
}

// TestLineEndsCorpus parses every corpus (and unit test) message with
// each kind of line end and requires the same Report as with LF: line
// ends never change what Parse tells.
func TestLineEndsCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	unit, _ := filepath.Glob(filepath.Join("testdata", "unit", "*.eml"))
	files = append(files, unit...)
	if len(files) == 0 {
		t.Skip("no testdata/corpus/*.eml")
	}
	for _, eml := range files {
		raw, err := os.ReadFile(eml)
		if err != nil {
			t.Fatal(err)
		}
		vs := lineEndVariants(raw)
		want := reportJSON(t, vs["LF"])
		for name, v := range vs {
			// One byte at a time too: a CR at the end of one read and
			// its LF at the start of the next are one line end.
			for _, r := range []io.Reader{bytes.NewReader(v), iotest.OneByteReader(bytes.NewReader(v))} {
				rep, err := Parse(r)
				if err != nil {
					t.Fatalf("%s %s: %v", eml, name, err)
				}
				got, _ := json.Marshal(rep)
				if string(got) != want {
					t.Errorf("%s with %s line ends:\n got %s\nwant %s", filepath.Base(eml), name, got, want)
				}
			}
		}
	}
}

func reportJSON(t *testing.T, msg []byte) string {
	t.Helper()
	rep, err := Parse(bytes.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	return string(b)
}

// TestEOLReader checks the line ends eolReader gives, whatever the sizes
// of the reads.
func TestEOLReader(t *testing.T) {
	for in, want := range map[string]string{
		"a\r\nb\r\n":         "a\nb\n",
		"a\rb\r":             "a\nb\n",
		"a\r\rb":             "a\n\nb",
		"a\r\r\nb\r\r\n\r\n": "a\nb\n\n",
		"a\nb":               "a\nb",
		"\r":                 "\n",
		"a\r\n\rb\n\r\n":     "a\n\nb\n\n",
		"a\r\r\r\nb":         "a\n\nb",
		"\r\r\r\r":           "\n\n\n\n",
		"":                   "",
	} {
		for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)), iotest.HalfReader(strings.NewReader(in))} {
			got, err := io.ReadAll(&eolReader{r: r})
			if err != nil || string(got) != want {
				t.Errorf("eolReader(%q) = %q, %v; want %q", in, got, err, want)
			}
		}
	}
}

// TestEOLReaderReadSizes: on random mixes of CR, LF and text, eolReader
// gives what the rule says (CR LF and CR CR LF: one LF; other CRs: one LF
// each) whatever the sizes of the reads below and above it.
func TestEOLReaderReadSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	crlf := regexp.MustCompile("\r\r?\n")
	for range 500 {
		b := make([]byte, rng.IntN(64))
		for i := range b {
			b[i] = "\r\r\na"[rng.IntN(4)]
		}
		want := strings.ReplaceAll(crlf.ReplaceAllString(string(b), "\n"), "\r", "\n")
		for _, r := range []io.Reader{bytes.NewReader(b), iotest.OneByteReader(bytes.NewReader(b)), iotest.HalfReader(bytes.NewReader(b))} {
			got, err := io.ReadAll(iotest.OneByteReader(&eolReader{r: r}))
			if err != nil || string(got) != want {
				t.Fatalf("eolReader(%q) = %q, %v; want %q", b, got, err, want)
			}
		}
		got, _ := io.ReadAll(&eolReader{r: iotest.HalfReader(bytes.NewReader(b))})
		if string(got) != want {
			t.Fatalf("eolReader(%q) = %q; want %q", b, got, want)
		}
	}
}

// stuckReader gives nothing and no error, forever.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

// TestEOLReaderNoProgress: a reader that never gives anything ends the
// read with io.ErrNoProgress instead of a hang, with or without CRs
// waiting for their next byte.
func TestEOLReaderNoProgress(t *testing.T) {
	for _, r := range []io.Reader{stuckReader{}, io.MultiReader(strings.NewReader("a\r"), stuckReader{})} {
		if _, err := io.ReadAll(&eolReader{r: r}); !errors.Is(err, io.ErrNoProgress) {
			t.Errorf("got %v, want io.ErrNoProgress", err)
		}
	}
}
