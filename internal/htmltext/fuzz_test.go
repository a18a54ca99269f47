package htmltext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/postroom/postroom/internal/htmltext"
)

// FuzzAppend checks that the text of any html is the reference's
// (reference_test.go), byte for byte, and invariants of it: it is valid
// UTF-8 when the html is, ends with one line break unless empty, never holds
// two empty lines in a row, and shows nothing of script or style content
// (of a script and a style element at the start, which no input can turn
// into something else). For html without markup, it wraps every line that
// has room to break within Width characters. With markup, a line may be
// longer, in the reference too: a word that markup splits ("a<b>b</b>c",
// testdata/fuzz/FuzzAppend/39dbb69671bbb153) is written in pieces with no
// break point between them, and so is an image's alt text after a word,
// a line of pre, or a link's target with spaces in it.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{
		"<p>a b c</p>", "<ul><li>x<ol><li>y</li></ol></li></ul>", "<table><tr><td>a</td><td><p>b</p></td></tr></table>",
		`<a href="https://x.example/">t</a><img alt="i">`, "<pre>  a\n\n\n b</pre>", "<blockquote>q<br><br><br>r</blockquote>",
		"<h2>h</h2>&amp;&nbsp;&#0;", strings.Repeat("word ", 40),
	} {
		f.Add(s)
	}
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		// The same Converter converts src, then src with its halves
		// swapped, so that the second reads tags the first read
		// (memo.go).
		var c htmltext.Converter
		var ref referenceConverter
		for _, doc := range []string{src, src[len(src)/2:] + src[:len(src)/2]} {
			if got, want := c.Append(nil, []byte(doc)), ref.Append(nil, []byte(doc)); string(got) != string(want) {
				t.Fatalf("the text differs from the reference's\nhtml %q\ngot  %q\nwant %q", doc, got, want)
			}
		}
		const secret = "SECRETXYZ"
		head := "<script>" + secret + "</script><style>" + secret + "</style>" // read as such whatever follows
		src = head + src
		out := string(c.Append(nil, []byte(src)))
		if utf8.ValidString(src) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input: %q", out)
		}
		if out != "" && (!strings.HasSuffix(out, "\n") || strings.HasSuffix(out, "\n\n")) {
			t.Fatalf("does not end with exactly one line break: %q", out)
		}
		if strings.Contains(out, "\n\n\n") || strings.HasPrefix(out, "\n") {
			t.Fatalf("empty lines in a row or at the start: %q", out)
		}
		if strings.Contains(out, secret) && !strings.Contains(src[len(head):], secret) {
			t.Fatalf("script or style content shown: %q", out)
		}
		if strings.Contains(src[len(head):], "<") {
			return
		}
		for line := range strings.Lines(out) {
			line = strings.TrimSuffix(line, "\n")
			if utf8.RuneCountInString(line) <= htmltext.Width {
				continue
			}
			// A long line is allowed only when its first Width+1
			// characters hold no break point beyond the indentation.
			head := []rune(strings.TrimLeft(line, " >*#0123456789."))
			if n := utf8.RuneCountInString(line) - len(head); n < htmltext.Width && strings.ContainsAny(string(head[:min(len(head), htmltext.Width-n)]), " ") {
				t.Fatalf("line of %d characters could have been wrapped: %q", utf8.RuneCountInString(line), line)
			}
		}
	})
}
