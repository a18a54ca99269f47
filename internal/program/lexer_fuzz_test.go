package program

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aymerick/raymond/lexer"
)

// compareLex lexes src with lex and with raymond's lexer.Collect and
// requires the same tokens: kinds, values, positions and lines, error
// tokens and their text included. It then checks lexExtended mode against
// raymond on the source with each of this package's own mustaches made one
// raymond knows (see extendedAsRaymond).
func compareLex(t *testing.T, src string) {
	t.Helper()
	if got, want := lex(src, lexRaymond), lexer.Collect(src); !equalTokens(got, want) {
		t.Fatalf("source %q:\n%s", src, tokenDiff(got, want))
	}
	ext := lex(src, lexExtended)
	ref, mapped := extendedAsRaymond(src, ext)
	if want := lexer.Collect(ref); !equalTokens(mapped, want) {
		t.Fatalf("source %q, extended mode, as raymond's source %q:\n%s", src, ref, tokenDiff(mapped, want))
	}
}

// extendedAsRaymond turns the tokens lexExtended yields for src into those
// raymond's lexer yields for ref, a source of the same length where each
// mustache of this package's own kinds is one raymond knows: {{#> and {{#*
// become {{# followed by a space (an OpenBlock without its last byte),
// {{* becomes {{& (an Open). Every other token, position and line stays.
func extendedAsRaymond(src string, toks []lexer.Token) (ref string, mapped []lexer.Token) {
	b := []byte(src)
	mapped = make([]lexer.Token, len(toks))
	for i, tok := range toks {
		last := tok.Pos + len(tok.Val) - 1
		switch tok.Kind {
		case tokenOpenPartialBlock, tokenOpenDecoratorBlock:
			b[last] = ' '
			tok.Kind, tok.Val = lexer.TokenOpenBlock, tok.Val[:len(tok.Val)-1]
		case tokenOpenDecorator:
			b[last] = '&'
			tok.Kind, tok.Val = lexer.TokenOpen, tok.Val[:len(tok.Val)-1]+"&"
		}
		mapped[i] = tok
	}
	return string(b), mapped
}

func equalTokens(a, b []lexer.Token) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tokenDiff shows two token lists side by side from their first
// difference on.
func tokenDiff(got, want []lexer.Token) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	var b strings.Builder
	b.WriteString("first difference at token " + strconv.Itoa(i) + "\n")
	for j := i; j < i+4 && (j < len(got) || j < len(want)); j++ {
		var g, w string
		if j < len(got) {
			g = tokenString(got[j])
		}
		if j < len(want) {
			w = tokenString(want[j])
		}
		b.WriteString(" got  " + g + "\n want " + w + "\n")
	}
	return b.String()
}

func tokenString(tok lexer.Token) string {
	return tok.Kind.String() + " " + strconv.Quote(tok.Val) + " pos " + strconv.Itoa(tok.Pos) + " line " + strconv.Itoa(tok.Line)
}

// lexSeeds returns the sources the lexer is checked on: every table
// template of this package, the lexer's own cases, the sources of the
// package's fuzz corpora, and the workload's html, text and subject.
func lexSeeds(tb testing.TB) []string {
	tb.Helper()
	srcs := allParseSources()
	for _, tc := range lexCases {
		srcs = append(srcs, tc.src)
	}
	for _, tc := range extendedCases {
		srcs = append(srcs, tc.src)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if q, ok := strings.CutPrefix(strings.TrimSpace(line), "string("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
					srcs = append(srcs, s)
				}
			}
		}
	}
	if workloadPath != "" {
		w := loadWorkload(tb)
		srcs = append(srcs, w.Message.HTML, w.Message.Text, w.Message.Subject)
	}
	return srcs
}

// FuzzLexer is the differential test of the lexer: for any source, lex in
// lexRaymond mode yields exactly raymond's tokens, and lexExtended mode
// yields them too once this package's own mustaches are mapped to
// raymond's (compareLex).
func FuzzLexer(f *testing.F) {
	for _, src := range lexSeeds(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<16 {
			return
		}
		compareLex(t, src)
	})
}
