package program

import (
	"encoding/json"
	"testing"

	"github.com/aymerick/raymond"

	"github.com/postroom/postroom/internal/testkit/workload"
)

// workloadPath is the shared benchmark workload's path, or "" when the
// repository root is not found (the fuzz seeds then leave the workload out;
// loadWorkload fails the test).
var workloadPath, _ = workload.Path()

// workloadCall is the part of the workload's call that the program renders.
type workloadCall struct {
	GlobalParams map[string]any `json:"global_params"`
	Message      struct {
		Subject string `json:"subject"`
		HTML    string `json:"html"`
		Text    string `json:"text"`
	} `json:"message"`
	Recipients []struct {
		Email  string         `json:"email"`
		Params map[string]any `json:"params"`
	} `json:"recipients"`
}

func loadWorkload(tb testing.TB) *workloadCall {
	tb.Helper()
	var w workloadCall
	if err := json.Unmarshal(workload.Read(tb), &w); err != nil {
		tb.Fatal(err)
	}
	if len(w.Recipients) != 16 {
		tb.Fatalf("workload has %d recipients, want 16", len(w.Recipients))
	}
	return &w
}

func TestWorkloadMatchesRaymond(t *testing.T) {
	w := loadWorkload(t)
	parts := []struct {
		name, src string
		mode      Mode
	}{
		{"html", w.Message.HTML, HTML},
		{"subject", w.Message.Subject, Text},
		{"text", w.Message.Text, Text},
	}
	for _, part := range parts {
		p, err := Compile(t.Context(), part.src, Options{Mode: part.mode})
		if err != nil {
			t.Fatalf("%s: %v", part.name, err)
		}
		tpl := raymond.MustParse(part.src)
		for i, r := range w.Recipients {
			t.Run(part.name+"/"+r.Email, func(t *testing.T) {
				d := &Data{Params: r.Params, Globals: w.GlobalParams}
				got, err := p.Append(t.Context(), nil, d)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.Missing) != 0 {
					t.Errorf("recipient %d: missing %q", i, d.Missing)
				}
				want, err := tpl.Exec(merge(r.Params, w.GlobalParams))
				if err != nil {
					t.Fatal(err)
				}
				if part.mode == Text {
					// raymond always escapes; Text mode never does.
					want, err = raymondUnescaped(part.src, merge(r.Params, w.GlobalParams))
					if err != nil {
						t.Fatal(err)
					}
				}
				if normEscapes(string(got)) != normEscapes(want) {
					t.Errorf("recipient %d: output differs from raymond's\n got %q\nwant %q", i, got, want)
				}
			})
		}
	}
}

// raymondUnescaped renders src with raymond after turning every {{x}} of a
// template without blocks into {{{x}}}: the reference for Text mode.
func raymondUnescaped(src string, ctx map[string]any) (string, error) {
	tpl, err := raymond.Parse(triple(src))
	if err != nil {
		return "", err
	}
	return tpl.Exec(ctx)
}

// triple rewrites "{{" not followed by '{', '#', '/', '!', '^' or '>' to
// "{{{" and the matching "}}" to "}}}".
func triple(src string) string {
	var out []byte
	for i := 0; i < len(src); i++ {
		if src[i] == '{' && i+2 < len(src) && src[i+1] == '{' && !containsByte("{#/!^>", src[i+2]) {
			j := i + 2
			for j+1 < len(src) && !(src[j] == '}' && src[j+1] == '}') {
				j++
			}
			out = append(out, "{{{"...)
			out = append(out, src[i+2:j]...)
			out = append(out, "}}}"...)
			i = j + 1
			continue
		}
		out = append(out, src[i])
	}
	return string(out)
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// BenchmarkRender renders the workload's html, text and subject for each of
// its 16 recipients in turn: raymond parsed once and Exec'd with the params
// merged into one map (what raymond needs), against a compiled Program
// appending into a reused buffer.
func BenchmarkRender(b *testing.B) {
	w := loadWorkload(b)
	srcs := []string{w.Message.HTML, w.Message.Text, w.Message.Subject}
	modes := []Mode{HTML, Text, Text}
	var size int64
	for _, s := range srcs {
		size += int64(len(s))
	}
	b.Run("raymond", func(b *testing.B) {
		tpls := make([]*raymond.Template, len(srcs))
		for i, s := range srcs {
			tpls[i] = raymond.MustParse(s)
		}
		b.SetBytes(size)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			r := w.Recipients[i%len(w.Recipients)]
			i++
			ctx := make(map[string]any, len(r.Params)+len(w.GlobalParams))
			for k, v := range w.GlobalParams {
				ctx[k] = v
			}
			for k, v := range r.Params {
				ctx[k] = v
			}
			for _, t := range tpls {
				if _, err := t.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("program", func(b *testing.B) {
		progs := make([]*Program, len(srcs))
		for i, s := range srcs {
			p, err := Compile(b.Context(), s, Options{Mode: modes[i]})
			if err != nil {
				b.Fatal(err)
			}
			progs[i] = p
		}
		b.SetBytes(size)
		b.ReportAllocs()
		var buf []byte
		d := &Data{Globals: w.GlobalParams}
		i := 0
		for b.Loop() {
			d.Params = w.Recipients[i%len(w.Recipients)].Params
			d.Missing = d.Missing[:0]
			i++
			for _, p := range progs {
				var err error
				if buf, err = p.Append(b.Context(), buf[:0], d); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
