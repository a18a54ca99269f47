// Package benchmarks measures postroom's render path end to end on the
// workload (testdata/workload/transactional.json in the repository, written
// by internal/workload), side by side with the obvious way of doing the same
// work in Go: raymond's Exec for the templates and one go-mail Msg per
// recipient for the MIME. The package has no API: its Benchmark functions
// run the benchmark bodies of internal/bench.
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
//     (internal/bench's Obvious) at the same concurrency.
//   - SendTemplateStore: a one-recipient send_template call whose html and
//     text bodies are looked up in a template store, Memory against SQL on
//     a real PostgreSQL (internal/pgtest starts one; skipped when
//     PostgreSQL is not installed). The difference is the lookups' round
//     trips; the rest is the call's template compilation and one message.
//   - Memmove: one core copying a finished message into a buffer that is
//     not in cache: the floor of writing a message into memory. A pipeline
//     on several cores, reusing warm buffers, can go below it per recipient.
//   - PipelineDKIM and DKIMFloor: the 25,000-recipient pipeline unsigned
//     and DKIM-signed with an ed25519 and an rsa-2048 key, against the
//     floor of signing: the SHA-256 of each message (the body hash cannot
//     cost less) and a copy of it, on as many goroutines as there are
//     cores. Compare them at -cpu 1 (see docs/perf-dkim.md).
//   - OneRecipient: the compile path. A one-recipient call (most
//     transactional calls) through Send, with the Mailer's compiled-template
//     cache warm and off (cold: every call compiles its subject, html, text
//     and header values).
//   - Compile: the workload's html (8 KB) and a 512 KiB template compiled by
//     postroom against raymond's parse of the same source.
//
// The compile path's goals are stated for one core; run it with
//
//	go test -run '^$' -bench 'OneRecipient|Compile' -cpu 1 ./benchmarks
//
// OneRecipient and Compile also report cpu-ns/op, the process's CPU time
// per operation, which a busy machine inflates less than wall time.
//   - PipelineOnResult: the 25,000-recipient pipeline without and with a
//     progress callback (RunOptions.OnResult appending to a mutex-guarded
//     slice).
//   - SMTPLogging: transport.SMTP per message with its Logger silent, at
//     info level and at debug level (the protocol trace), through a
//     TextHandler into io.Discard.
//
// Every benchmark reports ns/recipient, allocs/recipient and B/recipient;
// MB/s is always counted in postroom's message size, so that rows compare.
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
