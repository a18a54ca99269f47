package transport_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"maps"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aymerick/raymond"
	gomail "github.com/wneessen/go-mail"
	gomailsmtp "github.com/wneessen/go-mail/smtp"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/internal/testkit/workload"
	"github.com/postroom/postroom/transport"
)

// benchConns is the number of connections (and sending goroutines) on
// both sides of BenchmarkSMTP.
const benchConns = 8

// benchBatch is how many messages one b.Loop iteration sends.
const benchBatch = 64

// workloadEnvelopes builds the shared workload's 16 sample messages once,
// through a Mailer with a capturing transport.
func workloadEnvelopes(b *testing.B) []postroom.Envelope {
	b.Helper()
	var mu sync.Mutex
	var envs []postroom.Envelope
	capture := postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		mu.Lock()
		defer mu.Unlock()
		envs = append(envs, postroom.Envelope{SendID: env.SendID, From: env.From, To: append([]string(nil), env.To...), Data: bytes.Clone(env.Data)})
		return nil
	})
	m, err := postroom.New(capture, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	results, err := m.Send(b.Context(), fixture.Shared(b).Call(16))
	if err != nil || len(envs) != 16 {
		b.Fatalf("building the workload's messages: %v (%d of 16; %v)", err, len(envs), results)
	}
	return envs
}

// runBatches sends benchBatch messages per b.Loop iteration from
// benchConns goroutines and reports messages per second.
func runBatches(b *testing.B, send func(worker, i int) error) {
	b.Helper()
	jobs := make(chan int)
	var wg, batch sync.WaitGroup
	var failed atomic.Int64
	for w := range benchConns {
		wg.Go(func() {
			for i := range jobs {
				if err := send(w, i); err != nil && failed.Add(1) == 1 {
					b.Errorf("send %d: %v", i, err)
				}
				batch.Done()
			}
		})
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		batch.Add(benchBatch)
		for range benchBatch {
			jobs <- n
			n++
		}
		batch.Wait()
	}
	close(jobs)
	wg.Wait()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkSMTP compares transport.SMTP with go-mail's Client on the shared
// workload's messages, against the same loopback test server, which offers
// CHUNKING (as Postfix since 3.4, Exchange and Gmail do), with benchConns
// connections each:
//
//   - postroom: transport.SMTP.Send of the ready message bytes, as one BDAT
//     chunk.
//   - postroom-data: the same with DisableChunking: DATA, dot-stuffed.
//   - go-mail: a go-mail Msg built per recipient, as a go-mail user would
//     (rendered bodies, the two inline images, the PDF, the extra headers),
//     sent with Client.SendWithSMTPClient on one smtp.Client per goroutine.
//     go-mail's smtp package has no BDAT: it sends DATA whatever the server
//     offers, so against a server offering CHUNKING it pays for
//     dot-stuffing on both sides where postroom does not. That is a real
//     difference between the two clients, not one of this benchmark;
//     postroom-data shows postroom without it.
//
// Most of the time goes to the in-process server (go-smtp reads DATA a
// byte at a time), and allocs/op count both sides, per benchBatch messages.
//
// Run: go test -run '^$' -bench SMTP -benchtime 300x -count 3 ./transport
func BenchmarkSMTP(b *testing.B) {
	for _, bb := range []struct {
		name string
		opts transport.SMTPOptions
	}{
		{"postroom", transport.SMTPOptions{}},
		{"postroom-data", transport.SMTPOptions{DisableChunking: true}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			envs := workloadEnvelopes(b)
			srv := smtptest.NewServer(b, smtptest.Options{DiscardData: true, Chunking: true})
			opts := bb.opts
			opts.Addr, opts.TLS, opts.MaxConns, opts.MaxMessagesPerConn = srv.Addr(), transport.NoTLS, benchConns, -1
			tr, err := transport.NewSMTP(opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = tr.Close() })
			size := 0
			for _, e := range envs {
				size += len(e.Data)
			}
			b.SetBytes(int64(size / len(envs) * benchBatch))
			runBatches(b, func(_, i int) error {
				env := envs[i%len(envs)]
				return tr.Send(b.Context(), &env)
			})
			if got := srv.Messages(); len(got) == 0 || got[0].Chunked == opts.DisableChunking {
				b.Fatalf("the server got %d messages, the first with Chunked %v; want DisableChunking %v", len(got), len(got) > 0 && got[0].Chunked, opts.DisableChunking)
			}
		})
	}
	b.Run("go-mail", func(b *testing.B) {
		w := goMailWorkload(b)
		srv := smtptest.NewServer(b, smtptest.Options{DiscardData: true, Chunking: true})
		host, portStr, _ := net.SplitHostPort(srv.Addr())
		port, _ := strconv.Atoi(portStr)
		clients := make([]*gomail.Client, benchConns)
		conns := make([]*gomailsmtp.Client, benchConns)
		for i := range clients {
			c, err := gomail.NewClient(host, gomail.WithPort(port), gomail.WithTLSPolicy(gomail.NoTLS), gomail.WithHELO("localhost"))
			if err != nil {
				b.Fatal(err)
			}
			sc, err := c.DialToSMTPClientWithContext(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			clients[i], conns[i] = c, sc
			b.Cleanup(func() { _ = c.CloseWithSMTPClient(sc) })
		}
		runBatches(b, func(worker, i int) error {
			msg, err := w.msg(i)
			if err != nil {
				return err
			}
			return clients[worker].SendWithSMTPClient(conns[worker], msg)
		})
	})
}

// goMailWork is the workload as a go-mail user holds it: templates
// rendered per sample recipient, attachments decoded once.
type goMailWork struct {
	call                   *postroom.Call
	subjects, htmls, texts []string
	images, attachments    [][]byte
}

func goMailWorkload(b *testing.B) *goMailWork {
	b.Helper()
	call := fixture.Shared(b).Call(16)
	w := &goMailWork{call: call}
	render := func(tpl string, params map[string]any) string {
		s, err := raymond.Render(tpl, params)
		if err != nil {
			b.Fatalf("rendering: %v", err)
		}
		return s
	}
	for _, r := range call.Recipients {
		p := maps.Clone(call.GlobalParams)
		maps.Copy(p, r.Params)
		w.subjects = append(w.subjects, render(call.Message.Subject, p))
		w.htmls = append(w.htmls, render(call.Message.HTML, p))
		w.texts = append(w.texts, render(call.Message.Text, p))
	}
	decode := func(s string) []byte {
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	for _, img := range call.Message.Images {
		w.images = append(w.images, decode(img.Content))
	}
	for _, a := range call.Message.Attachments {
		w.attachments = append(w.attachments, decode(a.Content))
	}
	return w
}

// msg builds recipient i's go-mail message.
func (w *goMailWork) msg(i int) (*gomail.Msg, error) {
	s := i % len(w.subjects)
	m := w.call.Message
	msg := gomail.NewMsg()
	if err := msg.FromFormat(m.FromName, m.FromEmail); err != nil {
		return nil, err
	}
	if err := msg.AddToFormat(w.call.Recipients[s].Name, workload.Address(i)); err != nil {
		return nil, err
	}
	msg.Subject(w.subjects[s])
	for _, h := range m.Headers {
		msg.SetGenHeader(gomail.Header(h.Name), h.Value)
	}
	msg.SetBodyString(gomail.TypeTextPlain, w.texts[s])
	msg.AddAlternativeString(gomail.TypeTextHTML, w.htmls[s])
	for k, img := range m.Images {
		msg.EmbedReadSeeker(img.Name, bytes.NewReader(w.images[k]), gomail.WithFileContentID(img.CID), gomail.WithFileContentType(gomail.ContentType(img.ContentType)))
	}
	for k, a := range m.Attachments {
		msg.AttachReadSeeker(a.Name, bytes.NewReader(w.attachments[k]), gomail.WithFileContentType(gomail.ContentType(a.ContentType)))
	}
	return msg, nil
}
