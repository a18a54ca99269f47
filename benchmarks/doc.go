// Package benchmarks measures postroom's render path end to end on the
// workload (testdata/workload/transactional.json in the repository, written
// by internal/testkit/workload), side by side with the obvious way of doing the same
// work in Go: raymond's Exec for the templates and one go-mail Msg per
// recipient for the MIME. The package has no API: its Benchmark functions
// run the benchmark bodies of internal/testkit/bench.
//
// Run the benchmarks with
//
//	go test -run '^$' -bench . ./benchmarks
//
// and the one-table report, with the ratios and the memory figures, with
//
//	go run ./benchmarks/cmd/report
//
// from the repository root. The comparisons are:
//
//   - Render: the subject, html and text of one recipient, with postroom's
//     compiled program appending into reused buffers against raymond's
//     template parsed once and Exec'd per recipient over the params merged
//     into one map.
//   - MIME: the whole Mailer with Concurrency 1 on a call whose bodies have
//     no placeholder (so MIME plus the Mailer's own overhead: checks, send
//     ids, results) against one go-mail Msg per recipient written into a
//     reused buffer, on the same pre-rendered bodies.
//   - Pipeline: a call of N recipients sent into a transport that discards,
//     with postroom's Mailer against the obvious raymond + go-mail pipeline
//     (internal/testkit/bench's Obvious) at the same concurrency.
//   - SendTemplateStore: a one-recipient send_template call whose html and
//     text bodies are looked up in a template store, Memory against SQL on
//     a real PostgreSQL (internal/testkit/pgtest starts one; skipped when
//     PostgreSQL is not installed). The difference is the lookups' round
//     trips; the rest is the call's template compilation and one message.
//   - Memmove: one core copying a finished message into a buffer that is
//     not in cache: the floor of writing a message into memory. A pipeline
//     on several cores, reusing warm buffers, can go below it per recipient.
//   - PipelineDKIM, PipelineObviousDKIM and DKIMFloor: the
//     25,000-recipient pipeline unsigned and DKIM-signed with an ed25519
//     and an rsa-2048 key, postroom's against the obvious pipeline signing
//     each message with go-msgauth's dkim.Sign (relaxed/relaxed, as
//     postroom signs), and against the floor of signing: the SHA-256 of
//     each message (the body hash cannot cost less) and a copy of it, on
//     as many goroutines as there are cores. Compare them at -cpu 1 (see
//     docs/perf-dkim.md).
//   - PipelineHTMLOnly and TextPart: the generated text part. The
//     25,000-recipient pipeline on the workload's call without its text,
//     so that every recipient's text part is made from its rendered html,
//     postroom's against the obvious pipeline making it with
//     k3a/html2text's HTML2Text; and the conversion of one rendered html
//     alone, postroom's htmltext.Converter against HTML2Text (run it with
//     -cpu 1).
//   - OneRecipient: the compile path. A one-recipient call (most
//     transactional calls): the obvious way parsing its templates in every
//     call and parsing them once; postroom's Send with the Mailer's
//     compiled-template cache off (cold: every call compiles its subject,
//     html, text and header values), warm, and warm with each call's
//     files in strings of their own, as a server decoding each request
//     has them (32 copies of the call sent in turn).
//   - Compile: the workload's html (8 KB) and a 512 KiB template compiled by
//     postroom against raymond's parse of the same source.
//   - PipelineOnResult: the 25,000-recipient pipeline without and with a
//     progress callback (RunOptions.OnResult appending to a mutex-guarded
//     slice).
//   - SMTPLogging: transport.SMTP per message with its Logger silent, at
//     info level and at debug level (the protocol trace), through a
//     TextHandler into io.Discard.
//
// The one-recipient goals are stated for GOMAXPROCS 1 and 2, the
// compiles' for one core; run them with
//
//	go test -run '^$' -bench 'OneRecipient' -cpu 1,2 ./benchmarks
//	go test -run '^$' -bench 'Compile' -cpu 1 ./benchmarks
//
// OneRecipient, Compile, TextPart and the pipelines also report cpu-ns/op
// or cpu-ns/recipient, the process's CPU time, which a busy machine
// inflates less than wall time.
//
// Every benchmark but TextPart and Compile (which count per operation)
// reports ns/recipient, allocs/recipient and B/recipient; its MB/s is
// counted in postroom's message size, so that rows compare.
// Pipelines also report three heap figures, sampled every millisecond
// during the run from runtime/metrics: peak-heap-MB, the largest heap (bytes
// in heap objects, live or not yet collected); peak-live-MB, the largest
// heap found live by a collection, which does not depend on GOGC; and
// base-heap-MB, the heap when the run started (the workload and the call's
// recipients, which the caller owns). The peaks minus the base are what
// sending the call added, the returned results included.
//
// This package measures; it tunes nothing.
//
// Its only code is tests: it imports nothing, and nothing imports it.
package benchmarks
