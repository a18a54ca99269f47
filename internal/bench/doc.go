// Package bench holds the bodies of postroom's render-path benchmarks
// (RenderPostroom, RenderRaymond, MIMEPostroom, MIMEGoMail,
// PipelinePostroom, PipelineObvious, Memmove, SendTemplate) and of the
// compile path's (OneRecipient, CompilePostroom, ParseRaymond), the obvious raymond + go-mail
// pipeline they compare against (Obvious), and their helpers. The Benchmark
// functions of package benchmarks and the report of benchmarks/cmd/report
// both run them; the benchmarks package documents what each comparison
// measures and how its figures are reported.
//
// Its code is safe for concurrent use only where a doc comment says so.
//
// The costs of watching a call have their bodies here too
// (PipelineOnResult, SMTPLogging; observability.go).
//
// From the module it imports postroom, internal/program,
// internal/fixture, and for SMTPLogging transport and internal/smtptest;
// only package benchmarks' tests and benchmarks/cmd/report import it.
package bench
