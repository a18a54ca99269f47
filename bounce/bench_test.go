package bounce

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParse parses every message of testdata (the unit messages and
// the corpus) per iteration, and reports messages per second of wall
// time and of CPU time. Run it with GOMAXPROCS=1 for one core.
func BenchmarkParse(b *testing.B) {
	var msgs [][]byte
	size := 0
	for _, dir := range []string{"unit", "corpus"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.eml"))
		for _, p := range files {
			m, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, m)
			size += len(m)
		}
	}
	if len(msgs) == 0 {
		b.Skip("no messages in testdata")
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		for _, m := range msgs {
			if _, err := Parse(bytes.NewReader(m)); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		// The same per CPU second of the process (GOMAXPROCS=1: one
		// core), which a loaded machine does not distort.
		b.ReportMetric(float64(n)/cpu.Seconds(), "msgs/cpu-s")
	}
}

// BenchmarkParse25MB parses a 25 MB bounce (a DSN returning a message
// with a 25 MB attachment) made as it is read: the allocations per
// operation show the bound, whatever the size.
func BenchmarkParse25MB(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bigBounce()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLongLine parses 25 MB without a line end.
func BenchmarkParseLongLine(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r := io.MultiReader(bytes.NewReader([]byte("Subject: x\n\n")), &repeatReader{line: strings.Repeat("x", 4096), n: 25 << 20 / 4096})
		if _, err := Parse(r); err != nil {
			b.Fatal(err)
		}
	}
}
