package program

import (
	"strings"
	"testing"

	"github.com/aymerick/raymond/lexer"
)

// lexCases are sources on raymond's lexical corners, beyond the parser's
// tables (allParseSources): each must lex as raymond's lexer does.
var lexCases = []struct{ name, src string }{
	{"content only", "hello\nworld"},
	{"braces in content", "a { b } c }} d {"},
	{"escaped mustache", `a\{{b}}c`},
	{"escaped triple", `a\{{{b}}}c`},
	{"escaped many braces", `\{{{{{x}}`},
	{"escaped escape", `a\\{{b}}c`},
	{"three backslashes", `a\\\{{b}}c`},
	{"escape at start", `\{{a}}`},
	{"escape after escape", `\{{a}}\{{b}}\\{{c}}`},
	{"escaped then comment", `\{{!x}}{{!y}}`},
	{"backslash alone", `a\b\`},
	{"dash comment quirk", "{{!--}}x"},
	{"dash comment ends early", "{{!-- a --}} b --}}"},
	{"dash comment tilde", "{{~!-- a --~}}b"},
	{"dash comment dashes", "{{!-- a ---}} b"},
	{"dash comment spaced close", "{{!--a \n --}}"},
	{"dash comment with close", "{{!-- }} --}}"},
	{"comment strip", "{{~! a ~}}"},
	{"comment newlines", "a\n{{! b\nc }}\nd{{x}}"},
	{"comment unclosed", "{{! a"},
	{"dash comment unclosed", "{{!-- a }}"},
	{"comment tilde only", "{{~!}}"},
	{"inverse forms", "{{^}}{{~^~}}{{^ \t\n~}}{{else}}{{~ else ~}}{{\nelse\n}}"},
	{"open inverse chain forms", "{{else x}}{{ else\ny}}{{elsewhere}}{{~else~}}"},
	{"else not inverse", "{{else x~}}{{else~ }}"},
	{"caret open", "{{^a}}{{~^ b}}"},
	{"open forms", "{{a}}{{~a}}{{&a}}{{~&a}}{{{a}}}{{~{a}~}}{{#a}}{{~#a}}{{/a}}{{~/a}}{{>a}}{{~>a}}"},
	{"tilde twice", "{{~~a}}"},
	{"raw block", "{{{{raw}}}}{{x}}{{{{/raw}}}}"},
	{"raw block closed short", "{{{{raw}}x{{{{/raw}}"},
	{"raw block nested open", "{{{{a}}}}{{{{b}}}}{{{{/a}}}}"},
	{"raw end without open", "{{{{/a}}}}"},
	{"raw block unclosed", "{{{{a}}}}b"},
	{"closes", "{{a}}}}{{a}}}{{a~}}{{a}~}}{{{a}~}}"},
	{"close raw", "{{a}}}}}"},
	{"block params", "{{#e as |a b|}}{{#e as\n|a|}}{{#e as| a|}}{{as}}{{#e as x}}"},
	{"dots", "{{.}}{{..}}{{...}}{{./a}}{{../a}}{{a.b}}{{. }}{{.=}}{{.~}}{{.)}}{{.|}}{{./}}{{.a}}"},
	{"dot at end", "{{."},
	{"booleans", "{{true}}{{false}}{{true }}{{false~}}{{(true)}}{{trueish}}{{true.a}}{{true\r}}{{falsey}}"},
	{"boolean at end", "{{true"},
	{"whitespace", "{{ a\t\nb\n\n}}\n{{c}}"},
	{"carriage return is an id", "{{a\rb}}{{\r}}"},
	{"form feed", "{{a\fb}}{{\f}}"},
	{"strings", `{{a "b" 'c' "d\"e" 'f\'g' "h'i" 'j"k' "" ''}}`},
	{"string escaped backslash", `{{a "b\\" c"}}`},
	{"string newline", "{{a \"b\nc\"}}"},
	{"string unterminated", `{{a "b`},
	{"string escape first", `{{a "\"b"}}`},
	{"path literals", "{{[a b]}}{{a.[b]}}{{[]}}{{[a\"b]}}"},
	{"path literal newline", "{{[a\nb]}}"},
	{"path literal unterminated", "{{[ab"},
	{"numbers", "{{1}}{{-1}}{{+1}}{{1.5}}{{.5}}{{1.}}{{1e3}}{{1E-3}}{{0x1F}}{{0X1f}}{{0x}}{{1i}}{{1+2i}}{{1-2i}}{{-}}{{+}}{{089}}{{0.x}}"},
	{"bad numbers", "{{1a}}"},
	{"bad number underscore", "{{1_0}}"},
	{"bad complex", "{{1+2}}"},
	{"bad complex letter", "{{1+2x}}"},
	{"double sign", "{{--}}"},
	{"number before unicode letter", "{{1é}}"},
	{"number before unicode digit", "{{1٣}}"},
	{"number before symbol", "{{1€}}"},
	{"number then dot", "{{1.2.3}}"},
	{"hex exponent", "{{0x1e5}}"},
	{"number then paren", "{{a (1)}}"},
	{"ids", "{{a-b}}{{a$b}}{{a:b}}{{a?b}}{{é}}{{日本}}{{a_b}}{{a1}}"},
	{"invalid utf8 in id", "{{a\xffb}}{{\xfe}}"},
	{"invalid utf8 in content", "\xff{{a}}\xc3"},
	{"invalid utf8 in string", "{{a \"\xff\"}}"},
	{"unexpected characters", "{{a!}}"},
	{"unexpected hash", "{{a #}}"},
	{"unexpected star", "{{*a}}"},
	{"unexpected gt", "{{#>a}}"},
	{"unexpected backtick", "{{a `}}"},
	{"unexpected semicolon", "{{a ;}}"},
	{"unexpected brace", "{{a {}}"},
	{"unexpected tilde", "{{a ~b}}"},
	{"lone brace close", "{{a }b}}"},
	{"sexpr and hash", "{{a (b c=d) e=@f}}"},
	{"unclosed at end", "{{"},
	{"unclosed after tilde", "{{~"},
	{"unclosed after id", "{{a "},
	{"lines after ignored newlines", "{{a\n\n}}\n{{b}}\n{{c \"d\"}}"},
	{"lines in comments and inverse", "{{!\n}}{{^\n}}{{else\n}}{{else\nx}}\n{{#a as\n|b|}}\n{{c}}"},
	{"content with crlf", "a\r\nb{{c}}\r\n"},
	{"partial block", "{{#> layout}}x{{/layout}}"},
	{"decorator block", "{{#*inline \"p\"}}x{{/inline}}"},
	{"decorator", "{{*deco}}"},
	{"partial block tilde", "{{~#> layout~}}x{{~/layout~}}"},
	{"decorator tilde", "{{~#*inline \"p\"~}}{{~*d}}"},
}

func TestLexMatchesRaymond(t *testing.T) {
	t.Run("cases", func(t *testing.T) {
		for _, tc := range lexCases {
			t.Run(tc.name, func(t *testing.T) { compareLex(t, tc.src) })
		}
	})
	t.Run("seeds", func(t *testing.T) {
		for _, src := range lexSeeds(t) {
			compareLex(t, src)
		}
	})
	t.Run("cut", func(t *testing.T) {
		// every prefix, and every source with one byte left out, of
		// sources that hold each kind of token
		for _, tc := range lexCases {
			src := tc.src
			for n := range len(src) {
				compareLex(t, src[:n])
				compareLex(t, src[:n]+src[n+1:])
			}
		}
	})
}

// extendedCases are the mustaches lexExtended yields this package's own
// token kinds for, with the tokens handlebars.js's lexer yields (their
// kinds named as raymond's).
var extendedCases = []struct {
	name, src string
	want      []lexer.Token
}{
	{"partial block", "{{#> layout}}x{{/layout}}", []lexer.Token{
		{Kind: tokenOpenPartialBlock, Val: "{{#>", Pos: 0, Line: 1},
		{Kind: lexer.TokenID, Val: "layout", Pos: 5, Line: 1},
		{Kind: lexer.TokenClose, Val: "}}", Pos: 11, Line: 1},
		{Kind: lexer.TokenContent, Val: "x", Pos: 13, Line: 1},
		{Kind: lexer.TokenOpenEndBlock, Val: "{{/", Pos: 14, Line: 1},
		{Kind: lexer.TokenID, Val: "layout", Pos: 17, Line: 1},
		{Kind: lexer.TokenClose, Val: "}}", Pos: 23, Line: 1},
		{Kind: lexer.TokenEOF, Val: "", Pos: 25, Line: 1},
	}},
	{"partial block with strip", "{{~#>p}}", []lexer.Token{
		{Kind: tokenOpenPartialBlock, Val: "{{~#>", Pos: 0, Line: 1},
		{Kind: lexer.TokenID, Val: "p", Pos: 5, Line: 1},
		{Kind: lexer.TokenClose, Val: "}}", Pos: 6, Line: 1},
		{Kind: lexer.TokenEOF, Val: "", Pos: 8, Line: 1},
	}},
	{"inline partial", "\n{{#*inline \"p\"}}", []lexer.Token{
		{Kind: lexer.TokenContent, Val: "\n", Pos: 0, Line: 1},
		{Kind: tokenOpenDecoratorBlock, Val: "{{#*", Pos: 1, Line: 2},
		{Kind: lexer.TokenID, Val: "inline", Pos: 5, Line: 2},
		{Kind: lexer.TokenString, Val: "p", Pos: 13, Line: 2},
		{Kind: lexer.TokenClose, Val: "}}", Pos: 15, Line: 2},
		{Kind: lexer.TokenEOF, Val: "", Pos: 17, Line: 2},
	}},
	{"decorator", "{{~*d}}", []lexer.Token{
		{Kind: tokenOpenDecorator, Val: "{{~*", Pos: 0, Line: 1},
		{Kind: lexer.TokenID, Val: "d", Pos: 4, Line: 1},
		{Kind: lexer.TokenClose, Val: "}}", Pos: 5, Line: 1},
		{Kind: lexer.TokenEOF, Val: "", Pos: 7, Line: 1},
	}},
	{"not after ampersand", "{{&*d}}", []lexer.Token{
		{Kind: lexer.TokenOpen, Val: "{{&", Pos: 0, Line: 1},
		{Kind: lexer.TokenError, Val: "Unexpected character in expression: '*'", Pos: 3, Line: 1},
	}},
	{"not after space", "{{# >p}}", []lexer.Token{
		{Kind: lexer.TokenOpenBlock, Val: "{{#", Pos: 0, Line: 1},
		{Kind: lexer.TokenError, Val: "Unexpected character in expression: '>'", Pos: 4, Line: 1},
	}},
	{"not in a comment", "{{! {{#>p}} }}", []lexer.Token{
		{Kind: lexer.TokenComment, Val: "{{! {{#>p}}", Pos: 0, Line: 1},
		{Kind: lexer.TokenContent, Val: " }}", Pos: 11, Line: 1},
		{Kind: lexer.TokenEOF, Val: "", Pos: 14, Line: 1},
	}},
	{"not in a raw block", "{{{{r}}}}{{*d}}{{{{/r}}}}", []lexer.Token{
		{Kind: lexer.TokenOpenRawBlock, Val: "{{{{", Pos: 0, Line: 1},
		{Kind: lexer.TokenID, Val: "r", Pos: 4, Line: 1},
		{Kind: lexer.TokenCloseRawBlock, Val: "}}}}", Pos: 5, Line: 1},
		{Kind: lexer.TokenContent, Val: "{{*d}}", Pos: 9, Line: 1},
		{Kind: lexer.TokenOpenEndRawBlock, Val: "{{{{/", Pos: 15, Line: 1},
		{Kind: lexer.TokenID, Val: "r", Pos: 20, Line: 1},
		{Kind: lexer.TokenCloseRawBlock, Val: "}}}}", Pos: 21, Line: 1},
		{Kind: lexer.TokenEOF, Val: "", Pos: 25, Line: 1},
	}},
}

// TestLexExtended checks the tokens of lexExtended mode, and that
// lexRaymond mode yields raymond's error for the same sources.
func TestLexExtended(t *testing.T) {
	for _, tc := range extendedCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := lex(tc.src, lexExtended); !equalTokens(got, tc.want) {
				t.Fatalf("source %q:\n%s", tc.src, tokenDiff(got, tc.want))
			}
			compareLex(t, tc.src)
		})
	}
	for _, src := range []string{"{{#>p}}", "{{#*inline}}", "{{*d}}"} {
		toks := lex(src, lexRaymond)
		if last := toks[len(toks)-1]; last.Kind != lexer.TokenError {
			t.Errorf("lexRaymond(%q) ends with %v, want an error as raymond's", src, last)
		}
	}
}

// TestLexIsLinear lexes sources built of n and 8n repetitions of a
// construct, each a worst case for some scan (raymond's own lexer is
// quadratic on several), and requires the bytes examined to grow about 8
// times, not 64, and to stay within 8 looks per source byte.
func TestLexIsLinear(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  func(n int) string
	}{
		{"workload-like", func(n int) string { return strings.Repeat("<p>{{#if a}}{{b.c}} {{{d}}}{{/if}}</p>\n", n) }},
		{"content", func(n int) string { return strings.Repeat("abc { } \\ ", n) }},
		{"escaped mustaches", func(n int) string { return strings.Repeat(`\{{{{a}} \\{{b}}`, n) }},
		{"dash comment of dashes", func(n int) string { return "{{!--" + strings.Repeat("-- -}", n) + "--}}" }},
		{"unclosed dash comment", func(n int) string { return "{{!--" + strings.Repeat("--} ", n) }},
		{"comment of spaces", func(n int) string { return "{{!" + strings.Repeat(" ~} ", n) + "}}" }},
		{"unclosed comment", func(n int) string { return "{{!" + strings.Repeat(" ", n) }},
		{"spaces in mustache", func(n int) string { return "{{" + strings.Repeat(" \t\n", n) + "a}}" }},
		{"spaces before else", func(n int) string { return strings.Repeat("{{"+strings.Repeat(" ", 50)+"x}}", n) }},
		{"inverse spaces", func(n int) string { return "{{^" + strings.Repeat(" ", n) + "}}" }},
		{"unclosed raw block", func(n int) string { return "{{{{r}}}}" + strings.Repeat("{{{{ ", n) }},
		{"long id", func(n int) string { return "{{" + strings.Repeat("abcd", n) + "}}" }},
		{"long string", func(n int) string { return "{{a \"" + strings.Repeat(`b\"`, n) + "\"}}" }},
		{"unterminated string", func(n int) string { return "{{a \"" + strings.Repeat("b", n) }},
		{"long number", func(n int) string { return "{{a " + strings.Repeat("1", n) + "}}" }},
		{"many tokens", func(n int) string { return "{{a" + strings.Repeat(" b=(c 1 \"s\" [x] @d.e/f ../g true)", n) + "}}" }},
		{"block params", func(n int) string { return strings.Repeat("{{#e as   |a b|}}{{/e}}", n) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 1000
			var scanned [2]int
			for i, size := range []int{n, 8 * n} {
				src := tc.src(size)
				toks, count := lexCounting(src, lexExtended)
				if last := toks[len(toks)-1]; last.Kind == lexer.TokenError && !strings.Contains(tc.name, "unclosed") && !strings.Contains(tc.name, "unterminated") {
					t.Fatalf("%d repetitions: %v", size, last)
				}
				if count > 8*len(src)+16 {
					t.Errorf("%d repetitions: %d bytes examined for a source of %d", size, count, len(src))
				}
				scanned[i] = count
			}
			if ratio := float64(scanned[1]) / float64(scanned[0]); ratio > 9 {
				t.Errorf("lexing %d then %d repetitions examined %d then %d bytes: %.1f times more, want about 8", n, 8*n, scanned[0], scanned[1], ratio)
			}
		})
	}
}

// bigTemplate is the workload's html repeated to at least 512 KiB.
func bigTemplate(tb testing.TB) string {
	tb.Helper()
	html := loadWorkload(tb).Message.HTML
	return strings.Repeat(html, (512<<10+len(html)-1)/len(html))
}

// BenchmarkLex lexes the workload's html (about 8 KB) and a 512 KiB
// template with lex and with raymond's lexer.Collect.
func BenchmarkLex(b *testing.B) {
	w := loadWorkload(b)
	for _, input := range []struct{ name, src string }{
		{"html", w.Message.HTML},
		{"512KiB", bigTemplate(b)},
	} {
		for _, bc := range []struct {
			name string
			lex  func(string) []lexer.Token
		}{
			{"ours", func(src string) []lexer.Token { return lex(src, lexRaymond) }},
			{"raymond", lexer.Collect},
		} {
			b.Run(input.name+"/"+bc.name, func(b *testing.B) {
				b.SetBytes(int64(len(input.src)))
				b.ReportAllocs()
				for b.Loop() {
					if toks := bc.lex(input.src); toks[len(toks)-1].Kind != lexer.TokenEOF {
						b.Fatal(toks[len(toks)-1])
					}
				}
			})
		}
	}
}
