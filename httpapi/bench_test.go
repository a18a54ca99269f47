package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// benchCall is the body of the shared workload's call with n recipients,
// as its README says.
func benchCall(b *testing.B, n int) []byte {
	b.Helper()
	return marshal(b, fixture.Shared(b).Call(n))
}

// BenchmarkSend is one message.send call of the shared workload through
// real HTTP on loopback into a transport that discards the messages. The
// results are not logged as they complete (ResultLog.Off): the tests'
// log recorder keeps every record, which would grow with b.N.
func BenchmarkSend(b *testing.B) {
	for _, n := range []int{16, 1000} {
		b.Run(fmt.Sprintf("recipients=%d", n), func(b *testing.B) {
			var size atomic.Int64
			discard := postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
				size.Add(int64(len(env.Data)))
				return nil
			})
			url, _ := startHandler(b, discard, postroom.Options{}, Options{ResultLog: ResultLog{Off: true}})
			body := benchCall(b, n)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := tryDo(context.Background(), http.MethodPost, url+"/api/1.0/message.send", "application/json", body)
				if err != nil || r.Status != http.StatusOK || len(r.Results) != n {
					b.Fatalf("%v %+v", err, r)
				}
				if c := postroom.CountStatuses(r.Results); c[postroom.StatusSent] != n {
					b.Fatalf("statuses %v; want %d sent", c, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/recipient")
			b.ReportMetric(float64(size.Load())/float64(b.N*n), "message-bytes")
		})
	}
}

// BenchmarkDecodeCall compares the handler's decoding (checkShape, then
// encoding/json) with encoding/json alone, on the workload's body.
func BenchmarkDecodeCall(b *testing.B) {
	body := benchCall(b, 1000)
	for _, bc := range []struct {
		name   string
		decode func([]byte, *postroom.Call) error
	}{
		{"DecodeCall", func(data []byte, c *postroom.Call) error {
			got, err := postroom.DecodeCall(data)
			if err == nil {
				*c = *got
			}
			return err
		}},
		{"Unmarshal", func(data []byte, c *postroom.Call) error { return json.Unmarshal(data, c) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var call postroom.Call
				if err := bc.decode(body, &call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
