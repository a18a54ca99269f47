package postroom_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

func TestEscaping(t *testing.T) {
	call := smallCall("a@example.com")
	call.Recipients[0].Params = map[string]any{"who": "Tom & Jerry <3", "link": "https://x.example/u?a=1&b=2"}
	call.Message.Subject = "For {{who}}"
	call.Message.Text = "Text {{who}} / {{{who}}}"
	call.Message.HTML = "<p>{{who}}</p><p>{{{who}}}</p>"
	call.Message.Headers = []postroom.Header{{Name: "List-Unsubscribe", Value: "<{{link}}>"}, {Name: "X-Who", Value: "{{who}}"}}
	res, p := sendOne(t, call)
	if p == nil {
		t.Fatalf("result %+v", res)
	}
	if got := p.HeaderValue("Subject"); got != "For Tom & Jerry <3" {
		t.Errorf("Subject %q", got)
	}
	if got := p.Header.Get("List-Unsubscribe"); got != "<https://x.example/u?a=1&b=2>" {
		t.Errorf("List-Unsubscribe %q", got)
	}
	if got := p.HeaderValue("X-Who"); got != "Tom & Jerry <3" {
		t.Errorf("X-Who %q", got)
	}
	if got := string(p.Find(t, "multipart/alternative>text/plain").Body); got != "Text Tom & Jerry <3 / Tom & Jerry <3" {
		t.Errorf("text %q", got)
	}
	if got := string(p.Find(t, "multipart/alternative>text/html").Body); got != "<p>Tom &amp; Jerry &lt;3</p><p>Tom & Jerry <3</p>" {
		t.Errorf("html %q", got)
	}
}

func TestParams(t *testing.T) {
	call := smallCall("a@example.com")
	call.GlobalParams = map[string]any{"a": "global-a", "b": "global-b", "n": 3.0, "f": 2.5}
	call.Recipients[0].Params = map[string]any{"a": "own-a", "evil": "{{b}}{{#each x}}"}
	call.Message.HTML = ""
	call.Message.Text = "{{a}} {{b}} {{evil}} {{n}} {{f}} [{{missing}}] {{#each obj}}{{@key}}={{this}};{{/each}}"
	call.GlobalParams["obj"] = map[string]any{"zeta": 1.0, "alpha": 2.0, "mid": 3.0}
	res, p := sendOne(t, call)
	if p == nil {
		t.Fatalf("result %+v", res)
	}
	want := "own-a global-b {{b}}{{#each x}} 3 2.5 [] alpha=2;mid=3;zeta=1;"
	if got := string(p.Parts[0].Body); got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
}

func TestStrictParams(t *testing.T) {
	call := smallCall("a@example.com", "b@example.com")
	call.Message.Subject = "{{name}} {{order.id}}"
	call.Message.Text = "{{zip}} {{name}}{{#if flag}}x{{/if}}{{#each items}}{{sku}}{{/each}}"
	call.Message.HTML = ""
	call.Recipients[1].Params = map[string]any{"name": "B", "zip": "1", "order": map[string]any{"id": 7.0}, "items": []any{map[string]any{"sku": "S1"}}}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{StrictParams: true})
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Status != postroom.StatusInvalid || r.Reason != "missing-param: items, order.id, zip" || r.SendID != "" {
		t.Fatalf("result 0 = %+v", r)
	}
	if r := results[1]; r.Status != postroom.StatusSent {
		t.Fatalf("result 1 = %+v", r)
	}
	if mem.Len() != 1 {
		t.Fatalf("%d messages sent, want 1", mem.Len())
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	call := smallCall("a@example.com")
	call.Message.HTML = "<p>\n<b>{{#if a}}</b>\n"
	_, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Send(t.Context(), call)
	var ve *postroom.ValidationError
	if !errors.As(err, &ve) || ve.Field != "message.html" || !regexp.MustCompile(`line \d+`).MatchString(ve.Reason) {
		t.Fatalf("error %v: want a ValidationError on message.html naming a line", err)
	}
}

func TestHostileTemplates(t *testing.T) {
	huge := make([]any, 1_000_000)
	for i := range huge {
		huge[i] = "x"
	}
	tests := []struct {
		name   string
		html   string
		params map[string]any
		call   bool // true: refused at call level; false: the recipient is invalid or sent
	}{
		{"equal arity", "{{equal A A A}}", nil, true},
		{"if on odd path", "{{#if wat[0].fnord}}x{{/if}}", nil, true},
		{"if on odd path with data", "{{#if wat.[0].fnord}}x{{/if}}", map[string]any{"wat": []any{map[string]any{"fnord": true}}}, false},
		{"deep nesting", strings.Repeat("{{#if a}}", 10000) + strings.Repeat("{{/if}}", 10000), map[string]any{"a": true}, true},
		{"huge each", "{{#each big}}{{this}}{{#each ../big}}{{/each}}{{/each}}", map[string]any{"big": huge}, false},
		{"partial", "{{> evil}}", nil, true},
		{"unclosed", "{{#each items}}", nil, true},
		{"lookup without args", "{{lookup}}", nil, true},
		{"lookup on a number", "{{lookup 1 2}}", nil, false},
		{"log", "{{log name}}", nil, false},
		{"func value", "{{f}} {{#each f}}x{{/each}}", map[string]any{"f": func() string { return "called" }}, false},
		{"huge source", strings.Repeat("x", 600<<10), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.HTML, call.Message.Text = tt.html, ""
			if tt.params != nil {
				call.Recipients[0].Params = tt.params
			}
			mem := transport.NewMemory()
			results, err := newMailer(t, mem, postroom.Options{MaxRenderBytes: 1 << 20}).Send(t.Context(), call)
			if tt.call {
				var ve *postroom.ValidationError
				if !errors.As(err, &ve) || ve.Field != "message.html" {
					t.Fatalf("err = %v, want a ValidationError on message.html", err)
				}
				return
			}
			if err != nil || len(results) != 1 {
				t.Fatalf("Send = %v, %v", results, err)
			}
			r := results[0]
			if r.Status == postroom.StatusInvalid && r.Code != postroom.ReasonRenderError {
				t.Fatalf("result %+v, want sent or render-error", r)
			}
			if (r.Status == postroom.StatusSent) != (mem.Len() == 1) {
				t.Fatalf("result %+v but %d messages", r, mem.Len())
			}
		})
	}
}

// TestMessageBudgetBoundsMemory: 8 recipients whose subject, html, text and
// one header would each render 8 MiB (within MaxRenderBytes) under a 1 MiB
// message limit. Their parts together are checked against the limit while
// they render, so the call allocates a small multiple of the limit, not
// the 32 MiB per recipient the parts would render to (plus three times
// that in reserved message buffer).
func TestMessageBudgetBoundsMemory(t *testing.T) {
	const limit = 1 << 20
	const eightMiB = "{{#each parts}}{{this}}{{/each}}" // few tokens: compiling allocates little
	call := smallCall()
	call.Message.Subject, call.Message.HTML, call.Message.Text = eightMiB, eightMiB, eightMiB
	call.Message.Headers = []postroom.Header{{Name: "X-Big", Value: eightMiB}}
	parts := make([]any, 128) // 128 × 64 KiB
	for i := range parts {
		parts[i] = strings.Repeat("words of 64 KiB ", 4<<10)
	}
	params := map[string]any{"parts": parts}
	for i := range 8 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("u%d@example.com", i), Params: params})
	}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{Concurrency: 1, MaxMessageBytes: limit})
	var results []postroom.Result
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	results, err = m.Send(t.Context(), call)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Status != postroom.StatusInvalid || r.Code != postroom.ReasonMessageTooLarge {
			t.Fatalf("result %+v, want invalid, %s", r, postroom.ReasonMessageTooLarge)
		}
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*limit {
		t.Errorf("the call allocated %d bytes, want at most 4 × MaxMessageBytes (%d)", n, 4*limit)
	}
}

// countdownCtx is a context whose Err turns context.Canceled after its
// first n calls: a deadline passing mid-call, without timing.
type countdownCtx struct {
	context.Context
	n, calls atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.calls.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestCancelWhileRendering: a recipient whose html takes 100 million steps
// (MaxRenderSteps allows them) under a context that is done after a few
// dozen checks. The render checks ctx as it goes: the call returns ctx's
// error with the recipient deferred, a few checks after ctx is done, not
// after the 100,000 checks the whole render would make.
func TestCancelWhileRendering(t *testing.T) {
	big := make([]any, 10_000)
	for i := range big {
		big[i] = float64(i)
	}
	call := smallCall("a@example.com")
	call.Message.HTML = "{{#each big}}{{#each ../big}}{{/each}}{{/each}}"
	call.Recipients[0].Params = map[string]any{"big": big}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{MaxRenderSteps: 1 << 40})
	ctx := &countdownCtx{Context: t.Context()}
	ctx.n.Store(30)
	results, err := m.Send(ctx, call)
	if !errors.Is(err, context.Canceled) || len(results) != 1 {
		t.Fatalf("Send = %+v, %v; want one result and context.Canceled", results, err)
	}
	if r := results[0]; r.Status != postroom.StatusDeferred || r.Code != postroom.ReasonCanceled {
		t.Errorf("result %+v, want deferred, %s", r, postroom.ReasonCanceled)
	}
	if calls := ctx.calls.Load(); calls > ctx.n.Load()+10 || mem.Len() != 0 {
		t.Errorf("ctx checked %d times after it was done after %d; %d messages sent", calls, ctx.n.Load(), mem.Len())
	}
}
