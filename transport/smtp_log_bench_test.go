package transport_test

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/postroom/postroom/transport"
)

// sinkServer is the least an SMTP server can do: it answers every command
// at once (EHLO with PIPELINING and CHUNKING), reads BDAT chunks and drops
// them. Against it the client's own costs show, which go-smtp's hide.
type sinkServer struct {
	ln net.Listener
	wg sync.WaitGroup
	mu sync.Mutex
	cs []net.Conn
}

func newSinkServer(b *testing.B) *sinkServer {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &sinkServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cs = append(s.cs, c)
			s.mu.Unlock()
			s.wg.Go(func() { serveSink(c) })
		}
	})
	b.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.cs {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func serveSink(c net.Conn) {
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	w.WriteString("220 sink\r\n")
	for {
		if r.Buffered() == 0 && w.Flush() != nil {
			return
		}
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		verb, rest, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(" "))
		switch string(bytes.ToUpper(verb)) {
		case "EHLO":
			w.WriteString("250-sink\r\n250-PIPELINING\r\n250-8BITMIME\r\n250 CHUNKING\r\n")
		case "BDAT":
			size, _, _ := bytes.Cut(rest, []byte(" "))
			n, _ := strconv.ParseInt(string(size), 10, 64)
			if _, err := io.CopyN(io.Discard, r, n); err != nil {
				return
			}
			w.WriteString("250 2.0.0 queued\r\n")
		case "QUIT":
			w.WriteString("221 bye\r\n")
			_ = w.Flush()
			return
		default:
			w.WriteString("250 ok\r\n")
		}
	}
}

// BenchmarkSMTPLogging is the client side of transport.SMTP sending the
// workload's messages to a server that does nothing (sinkServer), with
// its Logger silent, at info level and at debug level (the protocol
// trace), through a TextHandler into io.Discard; MaxMessagesPerConn is
// the default 100, so a dial and its records come every 100 messages.
// allocs/op are the client's, per benchBatch messages; cpu-ns/msg is the
// process's CPU time per message (the sink's, small, included), steadier
// than wall time on a machine shared with other work.
//
// Run: go test -run '^$' -bench SMTPLogging -count 5 ./transport
func BenchmarkSMTPLogging(b *testing.B) {
	for _, l := range []struct {
		name   string
		logger *slog.Logger
	}{
		{"silent", nil},
		{"info", slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))},
		{"debug", slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))},
	} {
		b.Run(l.name, func(b *testing.B) {
			envs := workloadEnvelopes(b)
			srv := newSinkServer(b)
			tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.ln.Addr().String(), TLS: transport.NoTLS, MaxConns: benchConns, Logger: l.logger})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = tr.Close() })
			cpu, cpuOK := processCPU()
			runBatches(b, func(_, i int) error {
				env := envs[i%len(envs)]
				return tr.Send(b.Context(), &env)
			})
			if end, ok := processCPU(); ok && cpuOK {
				b.ReportMetric(float64(end-cpu)/float64(b.N*benchBatch), "cpu-ns/msg")
			}
			if s := tr.Stats(); s.Sent == 0 || s.Sent != s.Sent+s.Temporary+s.Permanent+s.Uncertain+s.Unusable+s.Partial+s.Canceled {
				b.Fatalf("Stats %+v: want only sent messages", s)
			}
		})
	}
}
