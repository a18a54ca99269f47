package htmltext_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/htmltext"
	"github.com/postroom/postroom/internal/program"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/workload"
)

// differ compares the Converter with the reference, each keeping its
// buffers from one document to the next as the engine does.
type differ struct {
	t    *testing.T
	got  htmltext.Converter
	want referenceConverter
	n    int
}

// check fails the test when the two texts of src differ, naming where src
// came from.
func (d *differ) check(from string, src []byte) {
	d.t.Helper()
	d.n++
	want := d.want.Append([]byte("x"), src)
	got := d.got.Append([]byte("x"), src)
	if !bytes.Equal(got, want) {
		d.t.Errorf("%s: the text differs from the reference's\nhtml %q\ngot  %q\nwant %q", from, src, got, want)
	}
}

// hostile are html inputs at the edges of the tokenizer's states, each
// also compared cut at every byte.
var hostile = []string{
	// Raw text elements, their end tags and script's escapes.
	"<script>a</script >b", "<script>a</scripx>b</script>c", "<SCRIPT>x</ScRiPt>y", "<script>a<!--<script>x</script>y-->z</script>w",
	"<script><!--x--></script>y", "<script><!-- <script> </script> --></script>after", "<script><!--<SCRIPT/x</script>y--></script>z",
	"<script>a</script", "<script>a</scr", "<script><!-", "<script><!--a-<b--<c--->d</script>e", "<script><!--<script>-<-->x</script>y",
	"<style/>x</style>y", "<style>p{}</style\tx>y", "<title>a&amp;b</title>c", "<textarea>a&amp;b<b>\x00\r\n</textarea>z",
	"<xmp><b>&amp;</xmp>", "<plaintext><b>x&amp;\x00", "<noscript><p>a</p></noscript>b", "<iframe>x</iframe>", "<noembed>a</noembed >b",
	"<noframes>a</noframes/>b", "<title></title>x", "<textarea></textarea>", "<script/>x</script>y", "<Style>a</STYLE>b",
	// Comments, doctypes, bogus comments and what is not a tag.
	"<!-->a", "<!--->a", "<!---->a", "a<!--x--!>b", "<!--x--!-y-->z", "<!--x--!", "<!--x--", "<!--", "<!-", "<!", "<!x", "<!>a",
	"<!DOCTYPE html>a", "<!doctypex>a", "<!DOCTYP", "<![CDATA[a>b]]>c", "<?xml?>a", "<?", "</>a", "</ x>a", "</", "a</", "a<", "<",
	"a<b", "a < b <3 <> <= <\x00", "x<!--a-->y<!---->z", "<!--a--!b-->c", "<!---x-->y",
	// Tags and attributes.
	"<a href", "<a href='x", "<a href=x", "<p =x>a", "<p a b==c>x", "<br a=x/>", "<br a=/>", "<br a a=/>", "<br a=x a=/>y",
	"<img alt=x alt=y>", "<img ALT=\"a&amp;b\" alt=c>", "<img alt='  '>x", "<img/alt=a/>", "<p/a/b>c", "<p\ta\n=\fb>c", "<A HREF=x>Y</A>",
	"<a href=x>t</a", "<a\x00b>x", "<h\x001>x</h\x001>", "<p\r\n>a</p\r\n>", "<img alt='x\x00y\r\nz'>", "<img alt=>x",
	"<div hidden style=color:red>x</div>y", "<div style=display:none hidden>x</div>y", "<div style='D\u0130SPLAY:NONE'>x</div>y",
	"<div style='visib\u0130l\u0130ty : h i d d e n'>x</div>y", "<div style='display&colon;none'>x</div>y", "<div style='d i s p l a y : n o n e'>x</div>y",
	"<div style='display:&#110;one'>x</div>y", "<div style='display:\x00none'>x</div>y", "<div style='display:\u212aone'>x</div>y",
	"<div style=\"x\" style=\"display:none\">a</div>b", "<img style=display:none alt=a>b", "<a style=display:none href=x>a</a>b",
	"<foo hidden>a<foo>b</foo>c</foo>d", "<foo style=display:none>a<bar>b</bar>c</foo>d", "<span hidden>a<span/>b</span>c</span>d",
	"<div hidden><script></div>x</script></div>y", "<hr hidden>a", "<br hidden>a<br>b", "<p hidden/>a", "<head><title>x</title></head>y",
	"<svg><title>x</title></svg>y", "<object>a</object>b", "<template>a</template>b", "<head/>a",
	// Character references.
	"&notit; &notin; &amp &ampx &#x41; &#65 &#0; &#x110000; &#128; &#xD800; &nLt; &nGt; &semi; &fjlig; &#; &#x; &# &",
	"&#99999999999999999999; &#x7fffffff; &AMP &AMP; &lt&gt &copy2026 &nbsp&nbsp; &zwnj; &ThickSpace;",
	"<a href='&notit;'>x</a>", "<a href='?a=1&amp=2&copy=3&copy;=4'>x</a>", "<a href='&semi;'>x</a>", "<a href='&amp'>x</a>",
	"<a href='&ampx'>x</a>", "<a href='&fjlig;&nLt;&#x41'>x</a>", "<img alt='&notit;&not=&not;'>",
	// Text, white space and links.
	"\r\n\r", "a\x00b", "a\u00a0b\u00a0 c", "\xc2\xc2\xa0x\xc2", "\xff\xfe<p>\xc3</p>", "<a href=\"x\x00y\">t</a>",
	"<a href='mailto:A@B'>a@b</a>", "<a href='HTTPS://X/'>x</a>", "<a href='JAVASCR\u0130PT:x'>j</a>", "<a href=' CID:x '>c</a>",
	"<a href='https\u017f://x'>https\u017f://x</a>", "<a href=x>a<a href=y>b</a>c</a>", "<a href=x>", "<a>t</a>", "<a href=#x>t</a>",
	"<table><tr><td>a<td>b<tr><th>c</table>", "<ol><li>a<li>b<ol><li>c</ol></ol>", "<ul><li></li><li><p>x</p></li></ul>",
	"<pre>a\r\nb\n\n\nc  </pre>x", "<blockquote><blockquote>q</blockquote></blockquote>", "<h7>x</h7>", "<p>" + strings.Repeat("ab ", 40) + "</p>",
	"<li>" + strings.Repeat("w\u00e9 ", 30) + "</li>", strings.Repeat("x", 100) + " y<br>" + strings.Repeat("z ", 50),
	"a<b>b</b>c" + strings.Repeat("d", 76) + "<i>e</i>", "<p>" + strings.Repeat("a ", 38) + "b<!---->cd</p>",
}

// TestReference compares the Converter with the reference on every html
// of the module's test corpora: the workload as rendered for its sample
// recipients (and cut at every byte), every string in the JSON corpora
// and fuzz corpora under testdata, the handlebars corpora's templates as
// internal/program renders them with their data, every string literal of
// the module's Go files (the examples of the tests among them), a
// document of more distinct tags than a Converter remembers, and the
// hostile inputs above, cut at every byte. One pair of Converters
// converts them all, one after the other, as an engine's worker does.
func TestReference(t *testing.T) {
	d := &differ{t: t}
	w := fixture.Shared(t)
	for i := range w.Samples() {
		p, err := w.Rendered(i)
		if err != nil {
			t.Fatal(err)
		}
		d.check("workload html", []byte(p.HTML))
		d.check("workload text", []byte(p.Text))
		if i == 0 {
			for j := range len(p.HTML) {
				d.check("workload html cut", []byte(p.HTML[:j]))
			}
		}
	}
	// More distinct tags than a Converter remembers, twice.
	var many strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&many, "<p class=c%d>%d <a href='https://x.example/%d'>l</a></p>\n", i, i, i%700)
	}
	d.check("many tags", []byte(many.String()))
	d.check("many tags", []byte(many.String()))
	for _, s := range hostile {
		for j := range len(s) + 1 {
			d.check("hostile", []byte(s[:j]))
		}
	}
	root, err := workload.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if n := e.Name(); n == "node_modules" || n != "." && strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		inTestdata := strings.Contains(filepath.ToSlash(rel), "testdata/")
		switch {
		case strings.HasSuffix(p, ".go"):
			goStrings(t, p, func(s string) { d.check(rel, []byte(s)) })
		case inTestdata && strings.HasSuffix(p, ".json"):
			jsonStrings(t, p, func(s string) { d.check(rel, []byte(s)) })
		case inTestdata && strings.Contains(filepath.ToSlash(rel), "testdata/fuzz/"):
			fuzzStrings(t, p, func(s string) { d.check(rel, []byte(s)) })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	renderCorpus(t, filepath.Join(root, "internal", "program", "testdata", "hbsjs"), d)
	t.Logf("%d documents compared", d.n)
}

// renderCorpus compares the html that internal/program renders from each
// template of the handlebars corpora in dir (email.json, raymond.json)
// with its data. A template it refuses, or one that needs partials, is
// left out: its strings are compared as they are.
func renderCorpus(t *testing.T, dir string, d *differ) {
	t.Helper()
	for _, name := range []string{"email.json", "raymond.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var cases []struct {
			Name, Template string
			Data           any
		}
		if err := json.Unmarshal(b, &cases); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			params, _ := c.Data.(map[string]any)
			p, err := program.Compile(t.Context(), c.Template, program.Options{Mode: program.HTML})
			if err != nil {
				continue
			}
			out, err := p.Append(t.Context(), nil, &program.Data{Params: params})
			if err != nil {
				continue
			}
			d.check(name+" rendered: "+c.Name, out)
		}
	}
}

// goStrings calls f with each string literal of the Go file at path.
func goStrings(t *testing.T, path string, f func(string)) {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
			if s, err := strconv.Unquote(l.Value); err == nil {
				f(s)
			}
		}
		return true
	})
}

// jsonStrings calls f with each string (keys too) of the JSON file at
// path.
func jsonStrings(t *testing.T, path string, f func(string)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return // the end, or a file that is not JSON
		}
		if s, ok := tok.(string); ok {
			f(s)
		}
	}
}

// fuzzStrings calls f with each string and []byte value of the fuzz
// corpus file at path ("go test fuzz v1").
func fuzzStrings(t *testing.T, path string, f func(string)) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range []string{"string(", "[]byte("} {
			if v, ok := strings.CutPrefix(line, p); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
					f(s)
				}
			}
		}
	}
}
