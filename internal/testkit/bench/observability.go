package bench

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// The costs of watching a call (PipelineOnResult, SMTPLogging): what a
// progress callback adds to the pipeline, and what the SMTP transport's
// logging adds per message.

// Collector is a realistic RunOptions.OnResult: it appends each result,
// with its index, to a slice behind a mutex, as a caller streaming or
// recording progress would. It is safe for concurrent use.
type Collector struct {
	mu  sync.Mutex
	got []IndexedResult
}

// IndexedResult is one result as the Collector keeps it.
type IndexedResult struct {
	I int
	R postroom.Result
}

// NewCollector returns a Collector with room for n results.
func NewCollector(n int) *Collector {
	return &Collector{got: make([]IndexedResult, 0, n)}
}

// OnResult is the callback.
func (c *Collector) OnResult(i int, r postroom.Result) {
	c.mu.Lock()
	c.got = append(c.got, IndexedResult{i, r})
	c.mu.Unlock()
}

// Len is the number of results collected.
func (c *Collector) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// PipelineOnResult is PipelinePostroom through Mailer.Run, without a
// progress callback or, when collect is set, with RunOptions.OnResult set
// to a new Collector's for each call; it fails the benchmark unless every
// recipient was sent (and collected). Besides PipelinePostroom's figures
// it reports cpu-ns/recipient, the process's CPU time (see cpuMeter).
func PipelineOnResult(b *testing.B, w *fixture.Workload, n int, collect bool) {
	size := messageSize(b, w)
	call := w.Call(n)
	mailer, err := NewMailer(Discard(), Concurrency())
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	m := startMeter(b, size, n, true)
	cpu := startCPU()
	for b.Loop() {
		var o postroom.RunOptions
		var c *Collector
		if collect {
			c = NewCollector(n)
			o.OnResult = c.OnResult
		}
		results, err := mailer.Run(ctx, postroom.OpSend, call, o)
		if err == nil {
			err = allSent(results)
		}
		if err != nil {
			b.Fatal(err)
		}
		if collect && c.Len() != n {
			b.Fatalf("collected %d results, want %d", c.Len(), n)
		}
	}
	cpu.stop(b, n, "cpu-ns/recipient")
	m.stop()
}

// SMTPConns is the number of connections, and of sending goroutines, of
// SMTPLogging.
const SMTPConns = 8

// SMTPBatch is the number of messages one SMTPLogging iteration sends.
const SMTPBatch = 64

// SMTPLogging measures transport.SMTP sending the workload's sample
// messages (as the Mailer builds them) to an in-process test server that
// offers CHUNKING and discards them, from SMTPConns goroutines over
// SMTPConns connections, with logger as SMTPOptions.Logger (nil: silent)
// and the other options at their defaults (MaxMessagesPerConn 100: a
// dial, and its records, every 100 messages). Its ns/recipient and
// cpu-ns/recipient (see cpuMeter) are per message; most of the time goes
// to the server.
func SMTPLogging(b *testing.B, w *fixture.Workload, logger *slog.Logger) {
	envs, err := sampleEnvelopes(w)
	if err != nil {
		b.Fatal(err)
	}
	srv := smtptest.NewServer(b, smtptest.Options{DiscardData: true, Chunking: true})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS, MaxConns: SMTPConns, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tr.Close() })
	size := 0
	for _, e := range envs {
		size += len(e.Data)
	}
	ctx := b.Context()
	jobs := make(chan int)
	var wg, batch sync.WaitGroup
	var failed atomic.Int64
	for range SMTPConns {
		wg.Go(func() {
			for i := range jobs {
				env := envs[i%len(envs)]
				if err := tr.Send(ctx, &env); err != nil && failed.Add(1) == 1 {
					b.Errorf("send %d: %v", i, err)
				}
				batch.Done()
			}
		})
	}
	n := 0
	m := startMeter(b, size/len(envs), SMTPBatch, false)
	cpu := startCPU()
	for b.Loop() {
		batch.Add(SMTPBatch)
		for range SMTPBatch {
			jobs <- n
			n++
		}
		batch.Wait()
	}
	cpu.stop(b, SMTPBatch, "cpu-ns/recipient")
	m.stop()
	close(jobs)
	wg.Wait()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
	if s := tr.Stats(); s.Sent != int64(n) {
		b.Fatalf("the transport counted %d messages sent, want %d", s.Sent, n)
	}
}

// sampleEnvelopes builds the workload's sample messages through a Mailer,
// one envelope each, owned by the caller.
func sampleEnvelopes(w *fixture.Workload) ([]postroom.Envelope, error) {
	var mu sync.Mutex
	var envs []postroom.Envelope
	m, err := NewMailer(postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		mu.Lock()
		defer mu.Unlock()
		envs = append(envs, postroom.Envelope{SendID: env.SendID, From: env.From, To: append([]string(nil), env.To...), Data: bytes.Clone(env.Data)})
		return nil
	}), 0)
	if err != nil {
		return nil, err
	}
	if err := SendAll(context.Background(), m, w.Call(w.Samples())); err != nil {
		return nil, err
	}
	return envs, nil
}
