package postroomotel

// The call's span: Run and Send around the Mailer's.

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

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

// Run is m.Run(ctx, op, call, o) inside a span of the call, which gets
// the recipients' counts by status when the call ends; each recipient's
// final status and reason code are counted in postroom.recipients. The
// call's measurements (messages, octets and events, through a Transport
// wrapper and OnEvent) are added up in the call and recorded once when
// it ends. Its results and error are m.Run's, as they are.
func (t *Telemetry) Run(ctx context.Context, m *postroom.Mailer, op postroom.Operation, call *postroom.Call, o postroom.RunOptions) ([]postroom.Result, error) {
	ctx, span := t.tracer.Start(ctx, op.String(), t.callStart...)
	defer span.End()
	n := 0
	if call != nil {
		n = len(call.Recipients)
	}
	tl := &tally{Context: ctx, t: t, spans: n <= t.opts.MessageSpanLimit}
	results, err := m.Run(tl, op, call, o)
	tl.flush()
	if results == nil && err != nil {
		if span.IsRecording() {
			b := t.attrBuf()
			span.SetAttributes(callAttrs(b, call, nil, err, "refused")...)
			t.putAttrBuf(b)
			span.SetStatus(codes.Error, "refused")
		}
		return results, err
	}
	var counts [len(statuses)]int
	type group struct {
		status postroom.Status
		code   postroom.ReasonCode
	}
	// Few distinct (status, code) pairs in any call: a slice beats a
	// map, and one on the stack holds them all in most calls.
	var gbuf [4]group
	var sbuf [4]int64
	groups, sizes := gbuf[:0], sbuf[:0]
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
		t.counts.recipient(g.status, g.code).n.Add(sizes[j])
	}
	if span.IsRecording() {
		typ := ""
		if err != nil {
			// The call stopped early: ctx done, or the transport unusable.
			typ = errorType(ctx, err)
			span.SetStatus(codes.Error, typ)
		}
		b := t.attrBuf()
		span.SetAttributes(callAttrs(b, call, &counts, err, typ)...)
		t.putAttrBuf(b)
	}
	return results, err
}

// callAttrs returns the attributes of a call's span in b, all set when
// it ends in one SetAttributes (each call of it on a span that has
// attributes costs a pass over them): counts holds the recipients'
// counts by status (nil for a refused call), and typ is the error.type
// of a call that failed.
func callAttrs(b *attrBuf, call *postroom.Call, counts *[len(statuses)]int, err error, typ string) []attribute.KeyValue {
	set := append(b.kv[:0], b.t.system, attrOperationSend, attrTypeSend)
	if call != nil {
		set = append(set, attribute.String("postroom.account_id", call.AccountID),
			attribute.Int("messaging.batch.message_count", len(call.Recipients)))
	}
	if counts != nil {
		for s, n := range counts {
			if n > 0 {
				set = append(set, attribute.Int(countKeys[s], n))
			}
		}
	}
	if err != nil {
		set = append(set, attribute.String("error.type", typ))
	}
	return set
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

// OnEvent counts e in postroom.events by its type and reason: at once,
// or, for an event of a call run through Run, in the call, recorded when
// it ends. Give it as postroom.Options.OnEvent (or call it from yours);
// it is safe for concurrent use.
func (t *Telemetry) OnEvent(ctx context.Context, e postroom.Event) {
	if tl := t.tallyOf(ctx); tl != nil {
		tl.event(e.Type, e.Reason)
		return
	}
	t.counts.event(e.Type, e.Reason).n.Add(1)
}
