package bench

import (
	"crypto/sha256"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom/internal/testkit/fixture"
)

// DKIMFloor measures the floor of a DKIM-signed message: the SHA-256 of
// one finished postroom message, which the body hash cannot cost less
// than, and a copy of it into a cold buffer, as Memmove makes. It runs on
// GOMAXPROCS goroutines, as the pipelines do, each rotating through its
// share of FloorBytes of destination buffers, so that its ns/recipient
// compares with PipelineDKIM's at any -cpu; both also report
// cpu-ns/recipient, the process's CPU time, which a busy machine inflates
// less. MB/s counts the size of that message.
func DKIMFloor(b *testing.B, w *fixture.Workload) {
	src, err := Message(w, 0)
	if err != nil {
		b.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	bufs := make([][][]byte, procs) // each goroutine's destinations
	for g := range bufs {
		bufs[g] = make([][]byte, max(2, FloorBytes/procs/len(src)))
		for i := range bufs[g] {
			bufs[g][i] = make([]byte, len(src))
		}
	}
	var next atomic.Int32
	var sums atomic.Int64 // keeps the sums from being optimized away
	m := startMeter(b, len(src), 1, false)
	b.ResetTimer() // the buffers are made; RunParallel, unlike b.Loop, does not reset it
	cpu := startCPU()
	b.RunParallel(func(pb *testing.PB) {
		dst := bufs[int(next.Add(1)-1)%procs]
		i, n := 0, 0
		for pb.Next() {
			copy(dst[i], src)
			sum := sha256.Sum256(src)
			n += int(sum[0])
			if i++; i == len(dst) {
				i = 0
			}
		}
		sums.Add(int64(n))
	})
	cpu.stop(b, 1, "cpu-ns/recipient")
	m.stop()
	_ = sums.Load()
}
