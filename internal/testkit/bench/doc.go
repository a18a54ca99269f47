// Package bench holds the bodies of postroom's render-path benchmarks
// (RenderPostroom, RenderRaymond, MIMEPostroom, MIMEGoMail,
// PipelinePostroom, PipelineObvious, Memmove, SendTemplate), of the
// signing's (PipelineDKIM, PipelineObviousDKIM, DKIMFloor; dkimfloor.go,
// dkimobvious.go), of the generated text part's (PipelineHTMLOnlyPostroom,
// PipelineHTMLOnlyObvious, TextPartPostroom, TextPartHTML2Text;
// textpart.go) and of the compile path's (OneRecipient,
// OneRecipientFresh, OneRecipientObvious, CompilePostroom, ParseRaymond;
// call.go, onerecipient.go), the obvious raymond + go-mail pipeline they
// compare against (Obvious, which also makes a missing text part with
// k3a/html2text and signs with go-msgauth's dkim.Sign), and their
// helpers. The Benchmark functions of package benchmarks and the report of
// benchmarks/cmd/report both run them; the benchmarks package documents
// what each comparison measures and how its figures are reported.
//
// Its code is safe for concurrent use only where a doc comment says so.
//
// The costs of watching a call have their bodies here too
// (PipelineOnResult, SMTPLogging; observability.go).
//
// From the module it imports postroom, internal/program,
// internal/testkit/fixture, internal/htmltext and internal/mimemsg (the parts
// measured alone), postroomtest (to check the text part), and for
// SMTPLogging transport and internal/testkit/smtptest;
// only package benchmarks' tests and benchmarks/cmd/report import it.
package bench
