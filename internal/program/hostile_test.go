package program

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestHostileTemplates checks that no template or data makes a panic escape
// and that each ends in a compile error, a render error or bounded output.
func TestHostileTemplates(t *testing.T) {
	big := make([]any, 1_000_000)
	for i := range big {
		big[i] = float64(i)
	}
	cyclic := map[string]any{"x": "leaf"}
	cyclic["self"] = cyclic
	cyclicSlice := []any{"a"}
	cyclicSlice = append(cyclicSlice, nil)
	cyclicSlice[1] = cyclicSlice
	params := map[string]any{
		"big":    big,
		"a":      true,
		"f":      func() string { return "called" },
		"ch":     make(chan int),
		"cyclic": cyclic,
		"cslice": cyclicSlice,
		"arr":    []any{"zero", "one"},
		"s":      strings.Repeat("x", 1<<20),
	}
	limits := Options{Mode: HTML, MaxOutputBytes: 1 << 20, MaxSteps: 2_000_000}
	type outcome int
	const (
		compileError outcome = iota
		renderError
		rendered
	)
	for _, tc := range []struct {
		name    string
		src     string
		opts    Options
		want    outcome
		wantErr error // for render errors, when a sentinel applies
		output  string
	}{
		{"equal three args", "{{equal A A A}}", limits, compileError, nil, ""},
		{"equal block three args", "{{#equal A A A}}x{{/equal}}", limits, compileError, nil, ""},
		{"bad path segment", "{{#if wat[0].fnord}}x{{/if}}", limits, compileError, nil, ""},
		{"deep nesting at the ceiling", strings.Repeat("{{#if a}}", MaxNesting) + "x" + strings.Repeat("{{/if}}", MaxNesting), limits, rendered, nil, "x"},
		{"deep nesting over the ceiling", strings.Repeat("{{#if a}}", MaxNesting+1) + "x" + strings.Repeat("{{/if}}", MaxNesting+1), limits, compileError, nil, ""},
		{"deep nesting over MaxDepth", strings.Repeat("{{#if a}}", 101) + strings.Repeat("{{/if}}", 101), Options{Mode: HTML, MaxDepth: 100}, compileError, nil, ""},
		{"deep unclosed nesting", strings.Repeat("{{#if a}}", 50_000), limits, compileError, nil, ""},
		{"deep subexpressions", "{{upper " + strings.Repeat("(lower ", 20_000) + "x" + strings.Repeat(")", 20_000) + "}}", limits, compileError, nil, ""},
		{"long else chain", "{{#if a}}" + strings.Repeat("{{else if a}}", 20_000) + "{{/if}}", limits, compileError, nil, ""},
		{"huge each, output cap", "{{#each big}}{{this}},{{/each}}", Options{Mode: HTML, MaxOutputBytes: 100_000}, renderError, ErrOutputTooLarge, ""},
		{"huge nested each, step cap", "{{#each big}}{{#each ../big}}{{/each}}{{/each}}", Options{Mode: HTML, MaxSteps: 1_000_000}, renderError, ErrTooManySteps, ""},
		{"huge array printed, step cap", "{{big}}", Options{Mode: HTML, MaxSteps: 1000}, renderError, ErrTooManySteps, ""},
		{"paths in a huge array context", "{{#with big}}" + strings.Repeat("{{x}}", 100) + "{{/with}}", Options{Mode: HTML, MaxSteps: 2_000_000}, rendered, nil, ""},
		{"helper over a huge string, step cap", strings.Repeat("{{#if (eq s s)}}{{/if}}", 200), Options{Mode: HTML, MaxSteps: 100_000}, renderError, ErrTooManySteps, ""},
		{"helper over a huge array, step cap", strings.Repeat("{{#if (eq big big)}}{{/if}}", 3), Options{Mode: HTML, MaxSteps: 2_000_000}, renderError, ErrTooManySteps, ""},
		{"equal over a huge string, step cap", strings.Repeat("{{#equal s s}}{{/equal}}", 200), Options{Mode: HTML, MaxSteps: 100_000}, renderError, ErrTooManySteps, ""},
		{"root as a value, step cap", strings.Repeat("{{length this}}", 100), Options{Mode: HTML, MaxSteps: 500}, renderError, ErrTooManySteps, ""},
		{"partial missing from the table", "{{> partial}}", limits, renderError, nil, ""},
		{"dynamic partial", "{{> (lookup a b)}}", limits, compileError, nil, ""},
		{"unknown helper", "{{nope a}}", limits, compileError, nil, ""},
		{"unclosed block", "{{#if a}}x", limits, compileError, nil, ""},
		{"unclosed each in if", "{{#if a}}{{#each big}}x{{/if}}", limits, compileError, nil, ""},
		{"each without args", "{{#each}}x{{/each}}", limits, compileError, nil, ""},
		{"lookup without args", "{{lookup}}", limits, compileError, nil, ""},
		{"lookup odd args", "{{lookup a}}", limits, compileError, nil, ""},
		{"lookup negative index", "[{{lookup arr -1}}][{{lookup arr 1}}]", limits, rendered, nil, "[][one]"},
		{"func value", "{{f}}", limits, renderError, nil, ""},
		{"func in helper", "{{upper f}}", limits, renderError, nil, ""},
		{"func not called in path", "{{f.x}}", limits, rendered, nil, ""},
		{"func as condition", "{{#if f}}t{{/if}}", limits, rendered, nil, "t"},
		{"chan value", "{{ch}}", limits, renderError, nil, ""},
		{"cyclic map printed", "{{cyclic}}", limits, rendered, nil, "[object Object]"},
		{"cyclic slice printed", "{{cslice}}", limits, renderError, nil, ""},
		{"cyclic map walked", "{{cyclic.self.self.self.x}}", limits, rendered, nil, "leaf"},
		{"cyclic map iterated", "{{#each cyclic}}{{@key}}{{#each this}}{{@key}}{{/each}};{{/each}}", limits, rendered, nil, "selfselfx;x;"},
		{"output cap on text", strings.Repeat("x", 200), Options{Mode: Text, MaxOutputBytes: 100}, renderError, ErrOutputTooLarge, ""},
		{"source cap", strings.Repeat("x", 200), Options{Mode: Text, MaxSourceBytes: 100}, compileError, nil, ""},
		{"decorator", "{{* deco}}", limits, compileError, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile(t.Context(), tc.src, tc.opts)
			if tc.want == compileError {
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("Compile = %v, want an *Error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			out, err := p.Append(t.Context(), []byte("pre"), &Data{Params: params})
			if tc.want == renderError {
				var re *RenderError
				if !errors.As(err, &re) {
					t.Fatalf("Append = %.80q, %v; want a *RenderError", out, err)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("Append error %v, want %v", err, tc.wantErr)
				}
				if string(out) != "pre" {
					t.Errorf("Append returned %.80q on error, want the input buffer", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			if string(out) != "pre"+tc.output {
				t.Errorf("Append = %.200q, want %q", out, "pre"+tc.output)
			}
		})
	}
}

func TestLimitsAreExact(t *testing.T) {
	p, err := Compile(t.Context(), "{{x}}", Options{Mode: Text, MaxOutputBytes: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		x    string
		fail bool
	}{{"12345", false}, {"123456", true}} {
		t.Run(tc.x, func(t *testing.T) {
			_, err := p.Append(t.Context(), nil, &Data{Params: map[string]any{"x": tc.x}})
			if got := errors.Is(err, ErrOutputTooLarge); got != tc.fail {
				t.Errorf("len %d: ErrOutputTooLarge = %v, want %v", len(tc.x), got, tc.fail)
			}
		})
	}
}

func TestLog(t *testing.T) {
	var got [][]any
	p, err := Compile(t.Context(), "a{{log name}}b{{log (upper name)}}c{{log 3}}", Options{Mode: HTML, Log: func(args []any) {
		got = append(got, append([]any(nil), args...))
	}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Append(t.Context(), nil, &Data{Params: map[string]any{"name": "x&y"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "abc" {
		t.Errorf("output %q, want %q", out, "abc")
	}
	want := [][]any{{"x&y"}, {"X&Y"}, {3}}
	if len(got) != len(want) {
		t.Fatalf("Log got %v, want %v", got, want)
	}
	for i := range want {
		if len(got[i]) != 1 || got[i][0] != want[i][0] {
			t.Errorf("Log call %d: %v, want %v", i, got[i], want[i])
		}
	}
	quiet, err := Compile(t.Context(), "a{{log name}}b", Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := quiet.Append(t.Context(), nil, nil); err != nil || string(out) != "ab" {
		t.Errorf("nil Log: %q, %v", out, err)
	}
}

// TestConcurrentAppend renders one Program from many goroutines (run with
// -race): a Program is read-only and per-render state is not shared.
func TestConcurrentAppend(t *testing.T) {
	params, globals := testParams(t)
	src := "{{#each items as |it i|}}{{i}}{{it.name}}{{#each ../obj}}{{@key}}{{/each}}{{/each}}{{missing}}"
	p, err := Compile(t.Context(), src, Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Append(t.Context(), nil, &Data{Params: params, Globals: globals})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var buf []byte
			d := &Data{Params: params, Globals: globals}
			for range 200 {
				d.Missing = d.Missing[:0]
				var err error
				if buf, err = p.Append(t.Context(), buf[:0], d); err != nil {
					t.Error(err)
					return
				}
				if string(buf) != string(want) || len(d.Missing) != 1 {
					t.Errorf("concurrent render %q (missing %q), want %q", buf, d.Missing, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// countdownCtx is a context whose Err turns context.Canceled after its
// first n calls: a deadline passing mid-work, without timing. calls counts
// every call to Err.
type countdownCtx struct {
	context.Context
	n, calls int
}

func (c *countdownCtx) Err() error {
	c.calls++
	if c.calls > c.n {
		return context.Canceled
	}
	return nil
}

// TestAppendChecksContext renders a template of 9 million steps with no
// step limit under a context canceled after its third check: Append must
// stop at the next check, a few thousand steps later, with ctx's error.
func TestAppendChecksContext(t *testing.T) {
	big := make([]any, 3000)
	for i := range big {
		big[i] = float64(i)
	}
	p, err := Compile(t.Context(), "{{#each big}}{{#each ../big}}{{/each}}{{/each}}", Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &countdownCtx{Context: t.Context(), n: 3}
	out, err := p.Append(ctx, []byte("pre"), &Data{Params: map[string]any{"big": big}})
	var re *RenderError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &re) {
		t.Fatalf("Append = %v, want a *RenderError wrapping context.Canceled", err)
	}
	if string(out) != "pre" || ctx.calls != ctx.n+1 {
		t.Errorf("Append returned %q after %d checks of ctx, want %q after %d", out, ctx.calls, "pre", ctx.n+1)
	}
	if _, err := p.Append(&countdownCtx{Context: t.Context()}, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a done ctx = %v, want context.Canceled", err)
	}
}

// TestCompileChecksContext compiles a template of 20,000 statements under
// a context canceled after a few checks: Compile checks it between its
// phases and every 1024 statements.
func TestCompileChecksContext(t *testing.T) {
	src := strings.Repeat("{{a}}.", 20_000)
	for _, n := range []int{0, 1, 3, 5} {
		ctx := &countdownCtx{Context: t.Context(), n: n}
		if p, err := Compile(ctx, src, Options{Mode: HTML}); !errors.Is(err, context.Canceled) || p != nil {
			t.Errorf("Compile after %d checks = %v, %v; want context.Canceled", n, p, err)
		}
		if ctx.calls != n+1 {
			t.Errorf("Compile checked ctx %d times after it was done after %d", ctx.calls, n)
		}
	}
}

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBudget checks Data.MaxBytes: it bounds the renders with one Data
// together, by ErrOverBudget, unless Options.MaxOutputBytes is tighter.
func TestBudget(t *testing.T) {
	render := func(p *Program, d *Data) error {
		t.Helper()
		out, err := p.Append(t.Context(), []byte("pre"), d)
		if err != nil && string(out) != "pre" {
			t.Errorf("failed Append returned %.40q, want the input buffer", out)
		}
		return err
	}
	compile := func(src string, max int) *Program {
		t.Helper()
		p, err := Compile(t.Context(), src, Options{Mode: HTML, MaxOutputBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	params := map[string]any{"x": "12345678"}
	t.Run("across renders", func(t *testing.T) {
		p, static := compile("<{{x}}>", 0), compile("static", 0)
		d := &Data{Params: params, MaxBytes: 20}
		if err := render(p, d); err != nil || d.Written != 10 {
			t.Fatalf("first render: %v, Written %d; want nil, 10", err, d.Written)
		}
		if err := render(p, d); err != nil || d.Written != 20 {
			t.Fatalf("second render: %v, Written %d; want nil, 20", err, d.Written)
		}
		if err := render(p, d); !errors.Is(err, ErrOverBudget) || d.Written != 20 {
			t.Fatalf("third render: %v, Written %d; want ErrOverBudget, 20", err, d.Written)
		}
		if err := render(static, d); !errors.Is(err, ErrOverBudget) {
			t.Fatalf("static render over budget: %v, want ErrOverBudget", err)
		}
		if err := render(compile("{{! nothing }}", 0), d); err != nil {
			t.Fatalf("empty render at the budget: %v", err)
		}
	})
	t.Run("tighter part limit", func(t *testing.T) {
		if err := render(compile("{{x}}{{x}}", 10), &Data{Params: params, MaxBytes: 12}); !errors.Is(err, ErrOutputTooLarge) {
			t.Errorf("got %v, want ErrOutputTooLarge", err)
		}
		if err := render(compile("{{x}}{{x}}", 12), &Data{Params: params, MaxBytes: 10}); !errors.Is(err, ErrOverBudget) {
			t.Errorf("got %v, want ErrOverBudget", err)
		}
	})
	// A render stops before it appends what would exceed its bound, so that
	// an 8 MiB value (40 MiB escaped) under a 64 KiB budget costs about the
	// budget, not the value.
	t.Run("stops early", func(t *testing.T) {
		huge := map[string]any{"x": strings.Repeat("&", 8<<20)}
		for _, src := range []string{"{{x}}", "{{{x}}}", strings.Repeat("y", 1<<20) + "{{x}}"} {
			p := compile(src, 0)
			var err error
			n := allocated(func() { err = render(p, &Data{Params: huge, MaxBytes: 64 << 10}) })
			if !errors.Is(err, ErrOverBudget) {
				t.Errorf("%.20s: %v, want ErrOverBudget", src, err)
			}
			if n > 1<<20 {
				t.Errorf("%.20s: a render over a 64 KiB budget allocated %d bytes", src, n)
			}
		}
	})
}
