package inbound

import (
	"encoding/binary"
	"encoding/hex"
	"runtime"
	"testing"
	"time"
)

// BenchmarkUnknownSends fills a Receiver's memory of unknown send ids to
// DefaultMaxUnknownSends, then goes round it once more (each id
// forgetting the oldest), and reports the heap it holds per id once full
// (retained-B/id: its map and ring, without the id strings themselves,
// which the messages' addresses hold: 32 bytes and a header more). Each
// op collects garbage twice, so ns/op is no cost of retry.
func BenchmarkUnknownSends(b *testing.B) {
	const n = DefaultMaxUnknownSends
	ids := make([]string, 2*n)
	for i := range ids {
		var k [16]byte
		binary.BigEndian.PutUint64(k[8:], uint64(i))
		ids[i] = hex.EncodeToString(k[:])
	}
	now := time.Now()
	var retained float64
	b.ReportAllocs()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		u := newUnknownSends(DefaultUnknownSendGrace, n)
		for _, id := range ids {
			if !u.retry(id, now) {
				b.Fatal("a new id was not given the grace")
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		retained = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(u)
	}
	b.ReportMetric(retained, "retained-B/id")
}
