package htmltext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/postroom/postroom/internal/htmltext"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

func convert(src string) string {
	var c htmltext.Converter
	return string(c.Append(nil, []byte(src)))
}

func TestAppend(t *testing.T) {
	for _, tc := range []struct {
		name, html, want string
	}{
		{"empty", "", ""},
		{"paragraphs", "<p>One\n  two</p><p>Three</p>", "One two\n\nThree\n"},
		{"br", "a<br>b<br/><br>c", "a\nb\n\nc\n"},
		{"inline", "<p><b>bold</b>and <i>it</i>.</p>", "boldand it.\n"},
		{"headings", "<h1>Title</h1><p>x</p><h3>Sub</h3>", "# Title\n\nx\n\n### Sub\n"},
		{"unordered list", "<p>Items:</p><ul><li>one</li><li>two</li></ul><p>end</p>", "Items:\n\n* one\n* two\n\nend\n"},
		{"ordered list", "<ol><li>first</li><li>second</li></ol>", "1. first\n2. second\n"},
		{"nested list", "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "* a\n  * b\n* c\n"},
		{"link", `<p>See <a href="https://x.example/a?b=1&amp;c=2">the page</a>.</p>`, "See the page (https://x.example/a?b=1&c=2).\n"},
		{"link equal to its text", `<a href="https://x.example/">https://x.example</a>`, "https://x.example\n"},
		{"mailto equal to its text", `<a href="mailto:help@x.example">help@x.example</a>`, "help@x.example\n"},
		{"link without text", `<a href="https://x.example/"></a>`, "https://x.example/\n"},
		{"anchor link", `<a href="#top">top</a>`, "top\n"},
		{"image link", `<a href="https://x.example/"><img src="cid:logo" alt="Shop"></a>`, "Shop (https://x.example/)\n"},
		{"table", "<table><tr><th>Item</th><th>Price</th></tr><tr><td><p>Boots</p></td><td><p>89 EUR</p></td></tr></table>", "Item | Price\nBoots | 89 EUR\n"},
		{"style script head", "<html><head><title>T</title><style>p{color:red}</style></head><body><script>alert(1)</script><p>text</p></body></html>", "text\n"},
		{"hidden", `<div style="display: none; max-height:0">preheader</div><p>shown</p>`, "shown\n"},
		{"entities", "<p>Fish &amp; chips &copy; 2026&nbsp;Shop &lt;b&gt; &#x1F600;</p>", "Fish & chips © 2026 Shop <b> \U0001F600\n"},
		{"comments", "<p>a<!-- hidden --><!--[if mso]>x<![endif]-->b</p>", "ab\n"},
		{"blockquote", "<blockquote><p>quoted</p></blockquote><p>after</p>", "> quoted\n\nafter\n"},
		{"pre", "<pre>  a  b\n c</pre>", "  a  b\n c\n"},
		{"hr", "<p>a</p><hr><p>b</p>", "a\n\n---\n\nb\n"},
		{"no blank line runs", "<div><div><p></p><p>x</p></div></div><br><br><br><br><p>y</p>", "x\n\ny\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := convert(tc.html); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestWrap checks that lines are at most Width characters unless a word
// alone is longer, which then stays whole.
func TestWrap(t *testing.T) {
	long := strings.Repeat("wörd ", 100)
	url := "https://x.example/" + strings.Repeat("p", 100)
	got := convert("<p>" + long + "</p><ul><li>" + long + "</li></ul><p>see <a href=\"" + url + "\">this</a> " + long + "</p>")
	for line := range strings.Lines(got) {
		line = strings.TrimSuffix(line, "\n")
		if n := utf8.RuneCountInString(line); n > htmltext.Width && !strings.Contains(line, url) {
			t.Errorf("line of %d characters: %q", n, line)
		}
	}
	if !strings.Contains(got, "("+url+")") {
		t.Errorf("the url was cut: %q", got)
	}
	if !strings.Contains(got, "\n  wörd") {
		t.Errorf("a list item's wrapped lines are not indented under its text:\n%s", got)
	}
}

// TestConverterReuse checks that a Converter keeps nothing from one
// document to the next: an unclosed link, list or skipped element.
func TestConverterReuse(t *testing.T) {
	var c htmltext.Converter
	c.Append(nil, []byte(`<ul><li><a href="https://x.example/">x<style>`))
	if got := string(c.Append(nil, []byte("<p>plain</p>"))); got != "plain\n" {
		t.Errorf("second document: %q", got)
	}
	if got := string(c.Append([]byte("pre:"), []byte("<p>x</p>"))); got != "pre:x\n" {
		t.Errorf("appending: %q", got)
	}
}

// BenchmarkWorkload converts the workload's html as rendered for its
// sample recipients, one after the other with one Converter, as a worker
// of the engine does. Besides ns/op it reports cpu-ns/op, the process's
// CPU time per conversion, which a busy machine inflates less than wall
// time (run it with -cpu 1).
func BenchmarkWorkload(b *testing.B) {
	w := fixture.Shared(b)
	var docs [][]byte
	size := 0
	for i := range w.Samples() {
		p, err := w.Rendered(i)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, []byte(p.HTML))
		size += len(p.HTML)
	}
	var c htmltext.Converter
	var out []byte
	b.SetBytes(int64(size / len(docs)))
	b.ReportAllocs()
	i := 0
	cpu0, ok := processCPU()
	for b.Loop() {
		out = c.Append(out[:0], docs[i%len(docs)])
		i++
	}
	if cpu1, ok1 := processCPU(); ok && ok1 {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
