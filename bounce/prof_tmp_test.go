package bounce

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkSisimaiTmp(b *testing.B) {
	files, _ := filepath.Glob("/work/bounce-eval/ref/p5-sisimai/set-of-emails/maildir/bsd/*.eml")
	var msgs [][]byte
	for _, f := range files {
		m, _ := os.ReadFile(f)
		msgs = append(msgs, m)
	}
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		for _, m := range msgs {
			Parse(bytes.NewReader(m))
			n++
		}
	}
	b.ReportMetric(float64(n)/(cpuTime()-cpu0).Seconds(), "msgs/cpu-s")
}
