package postroomotel

// The call's span: Run and Send around the Mailer's.

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/postroom/postroom"
)

// statuses are the Result statuses, in the order of the span's
// postroom.recipients.STATUS attributes.
var statuses = [...]postroom.Status{postroom.StatusSent, postroom.StatusQueued, postroom.StatusInvalid,
	postroom.StatusRejected, postroom.StatusDeferred, postroom.StatusUnknown}

// countKeys are the span attributes of the counts by status, in the
// order of statuses.
var countKeys = func() (keys [len(statuses)]string) {
	for i, st := range statuses {
		keys[i] = "postroom.recipients." + string(st)
	}
	return keys
}()

// Run is m.Run(ctx, op, call, o) inside a span of the call: the spans of
// the call's messages (with a Transport wrapper) are its children, and
// the span gets the recipients' counts by status. Each recipient's
// final status and reason code are counted in postroom.recipients. Its
// results and error are m.Run's, as they are.
func (t *Telemetry) Run(ctx context.Context, m *postroom.Mailer, op postroom.Operation, call *postroom.Call, o postroom.RunOptions) ([]postroom.Result, error) {
	name := op.String()
	var attrs []attribute.KeyValue
	if call != nil {
		attrs = []attribute.KeyValue{attribute.String("postroom.operation", name),
			attribute.String("postroom.account_id", call.AccountID),
			attribute.Int("messaging.batch.message_count", len(call.Recipients))}
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	defer span.End()
	var tl *tally
	if call != nil && len(call.Recipients) > t.opts.MessageSpanLimit {
		tl = &tally{t: t}
		ctx = context.WithValue(ctx, tallyKey{}, tl)
	}
	results, err := m.Run(ctx, op, call, o)
	if tl != nil {
		tl.flush(ctx)
	}
	if results == nil && err != nil {
		span.SetAttributes(attribute.String("error.type", "refused"))
		span.SetStatus(codes.Error, "refused")
		return results, err
	}
	var counts [len(statuses)]int
	type group struct {
		status postroom.Status
		code   postroom.ReasonCode
	}
	// Few distinct (status, code) pairs in any call: a slice beats a map.
	var groups []group
	var sizes []int64
	for i := range results {
		r := &results[i]
		for s, st := range statuses {
			if r.Status == st {
				counts[s]++
				break
			}
		}
		g := group{r.Status, r.Code}
		j := 0
		for j < len(groups) && groups[j] != g {
			j++
		}
		if j == len(groups) {
			groups = append(groups, g)
			sizes = append(sizes, 0)
		}
		sizes[j]++
	}
	for j, g := range groups {
		t.recipients.Add(ctx, sizes[j], t.label(labelKey{"recipients", string(g.status), string(g.code)})...)
	}
	if span.IsRecording() {
		var buf [len(statuses) + 1]attribute.KeyValue
		set := buf[:0]
		for s, n := range counts {
			if n > 0 {
				set = append(set, attribute.Int(countKeys[s], n))
			}
		}
		if err != nil {
			// The call stopped early: ctx done, or the transport unusable.
			set = append(set, attribute.String("error.type", errorType(ctx, err)))
			span.SetStatus(codes.Error, errorType(ctx, err))
		}
		span.SetAttributes(set...)
	}
	return results, err
}

// Send is Run with OpSend and zero RunOptions: m.Send inside a span.
func (t *Telemetry) Send(ctx context.Context, m *postroom.Mailer, call *postroom.Call) ([]postroom.Result, error) {
	return t.Run(ctx, m, postroom.OpSend, call, postroom.RunOptions{})
}

// SendTemplate is Run with OpSendTemplate and zero RunOptions.
func (t *Telemetry) SendTemplate(ctx context.Context, m *postroom.Mailer, call *postroom.Call) ([]postroom.Result, error) {
	return t.Run(ctx, m, postroom.OpSendTemplate, call, postroom.RunOptions{})
}

// errorType is the error.type of a call that stopped early with err.
func errorType(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return "canceled"
	}
	return classify(ctx, err).String()
}

// OnEvent counts e in postroom.events by its type and reason. Give it as
// postroom.Options.OnEvent (or call it from yours); it is safe for
// concurrent use.
func (t *Telemetry) OnEvent(ctx context.Context, e postroom.Event) {
	if tl := t.tallyOf(ctx); tl != nil {
		tl.event(e.Type, e.Reason)
		return
	}
	t.events.Add(ctx, 1, t.label(labelKey{"events", string(e.Type), e.Reason})...)
}
