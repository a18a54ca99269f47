package program

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aymerick/raymond/lexer"
)

// This file is the compiler's own lexer. In lexRaymond mode it yields, for
// every source, exactly the tokens raymond's lexer.Collect yields (kind,
// value, byte position and line, error tokens and their text included),
// FuzzLexer checks this against raymond's lexer. It scans the source once,
// left to right, with no regular expression, no goroutine and no channel,
// in time linear in the source (TestLexIsLinear); raymond's lexer tries a
// dozen regular expressions at every mustache and sends each token over an
// unbuffered channel (BenchmarkLex).
//
// raymond's quirks are kept, since the parser and the trees it builds are
// raymond's: newlines inside a mustache that separate its parts are not
// counted in the line of later tokens; {{elsewhere}} is {{else followed by
// the ID where; {{!--}} is a whole comment; {{x}}} closes with }}}; a
// string's delimiter escaped with a backslash ends it only when that
// backslash is not itself escaped ("a\\" is unterminated); numbers follow
// text/template's scanner (0x1F, 1e3, 1+2i and a lone - or +).

// Token kinds of this package's own, beyond the range of raymond's
// lexer.TokenKind (which ends at lexer.TokenBoolean): the mustaches
// handlebars.js knows and raymond does not, lexed as handlebars.js's
// src/handlebars.l lexes them. lex yields them in lexExtended mode only;
// in lexRaymond mode those mustaches are raymond's OpenBlock or Open
// followed by an error token, as in raymond.
const (
	// tokenOpenPartialBlock is {{#> or {{~#>, which opens a partial block
	// ({{#> layout}}...{{/layout}}): handlebars.js's OPEN_PARTIAL_BLOCK.
	tokenOpenPartialBlock lexer.TokenKind = 100 + iota

	// tokenOpenDecoratorBlock is {{#* or {{~#*, which opens a decorator
	// block ({{#*inline "name"}}...{{/inline}}): handlebars.js's OPEN_BLOCK
	// whose text holds a *.
	tokenOpenDecoratorBlock

	// tokenOpenDecorator is {{* or {{~*, a decorator mustache ({{*deco}}):
	// handlebars.js's OPEN whose text holds a *.
	tokenOpenDecorator
)

// lexMode selects the mustaches lex recognises.
type lexMode uint8

const (
	// lexRaymond yields exactly raymond's tokens.
	lexRaymond lexMode = iota
	// lexExtended also yields tokenOpenPartialBlock,
	// tokenOpenDecoratorBlock and tokenOpenDecorator where raymond's lexer
	// stops with an error.
	lexExtended
)

// lex returns the tokens of src, ending with lexer.TokenEOF or
// lexer.TokenError, as raymond's lexer.Collect does (see lexMode).
func lex(src string, mode lexMode) []lexer.Token {
	toks, _ := lexCounting(src, mode)
	return toks
}

// lexCounting is lex that also returns the number of bytes its scans
// examined, counting a byte once per look at it: TestLexIsLinear checks
// that it grows linearly with the source.
func lexCounting(src string, mode lexMode) ([]lexer.Token, int) {
	l := &lexScanner{src: src, mode: mode, line: 1}
	l.toks = make([]lexer.Token, 0, 8+strings.Count(src, "{{")*3)
	l.run()
	return l.toks, l.scanned
}

// lexScanner is the state of one lex: the source, the tokens so far and
// the token being scanned, from start to pos.
type lexScanner struct {
	src     string
	mode    lexMode
	toks    []lexer.Token
	start   int  // where the current token starts
	pos     int  // the next byte to scan
	line    int  // the line of start, as raymond counts it
	raw     bool // after {{{{x}}}}: content runs to the next {{{{/
	scanned int  // bytes examined, see lexCounting
}

// lexStep says what run does next.
type lexStep uint8

const (
	stepContent lexStep = iota
	stepMustache
	stepExpression
	stepDone
)

// run scans the whole source: content, then mustaches and what they hold,
// until EOF or an error.
func (l *lexScanner) run() {
	step := stepContent
	for step != stepDone {
		switch step {
		case stepContent:
			step = l.content()
		case stepMustache:
			step = l.mustache()
		default:
			step = l.expression()
		}
	}
}

// emit appends the token of the given kind from start to end (its value)
// and starts the next token at end. As raymond's lexer does, the line
// moves on by the newlines of emitted values only.
func (l *lexScanner) emit(kind lexer.TokenKind, end int) {
	l.pos = end
	l.emitValue(kind, l.src[l.start:end])
	l.start = end
}

// emitValue appends a token whose value is val, at start.
func (l *lexScanner) emitValue(kind lexer.TokenKind, val string) {
	l.toks = append(l.toks, lexer.Token{Kind: kind, Val: val, Pos: l.start, Line: l.line})
	l.line += strings.Count(val, "\n")
}

// errorf appends an error token at start, as raymond's lexer does, and
// stops.
func (l *lexScanner) errorf(format string, args ...any) lexStep {
	l.toks = append(l.toks, lexer.Token{Kind: lexer.TokenError, Val: fmt.Sprintf(format, args...), Pos: l.start, Line: l.line})
	return stepDone
}

// emitContent emits the content scanned so far, if any.
func (l *lexScanner) emitContent() {
	if l.pos > l.start {
		l.emit(lexer.TokenContent, l.pos)
	}
}

// index returns the index of sub in src from from on, or -1, and counts
// the bytes it looked at.
func (l *lexScanner) index(from int, sub string) int {
	i := strings.Index(l.src[from:], sub)
	if i < 0 {
		l.scanned += len(l.src) - from
		return -1
	}
	l.scanned += i + len(sub)
	return from + i
}

// content scans text up to the next mustache (raymond's lexContent): a
// backslash before {{ makes the braces text, two backslashes make one
// backslash and leave the mustache be.
func (l *lexScanner) content() lexStep {
	if l.raw {
		i := l.index(l.pos, "{{{{/")
		if i < 0 {
			return l.errorf("Unclosed raw block")
		}
		l.raw = false
		l.pos = i
		l.emitContent()
		return stepMustache
	}
	for {
		r := l.index(l.pos, "{{")
		if r < 0 {
			l.pos = len(l.src)
			l.emitContent()
			l.emit(lexer.TokenEOF, l.pos)
			return stepDone
		}
		switch {
		case r-2 >= l.pos && l.src[r-2] == '\\' && l.src[r-1] == '\\':
			// \\{{: content up to the first backslash; the second is dropped
			l.pos = r - 1
			l.emitContent()
			l.start, l.pos = r, r
		case r-1 >= l.pos && l.src[r-1] == '\\':
			// \{{: the backslash is dropped, the braces start content
			l.pos = r - 1
			l.emitContent()
			l.start, l.pos = r, r
			for l.pos < len(l.src) && l.src[l.pos] == '{' {
				l.pos++
				l.scanned++
			}
			continue
		}
		l.pos = r
		l.emitContent()
		s := l.src[r:]
		n := 2
		if len(s) > n && s[n] == '~' {
			n++
		}
		if len(s) > n && s[n] == '!' {
			if strings.HasPrefix(s[n+1:], "--") {
				return l.comment(true)
			}
			return l.comment(false)
		}
		return stepMustache
	}
}

// comment scans a comment that opens at start: {{!-- runs to the first
// --}} or --~}} after start (so {{!--}} is whole), {{! to the first }}, as
// raymond's closing expressions, tried at every position from start, do.
func (l *lexScanner) comment(dash bool) lexStep {
	from := l.start
	for {
		var i int
		if dash {
			i = l.index(from, "--")
		} else {
			i = l.index(from, "}}")
		}
		if i < 0 {
			return l.errorf("Unclosed comment")
		}
		if !dash {
			l.emit(lexer.TokenComment, i+2)
			return stepContent
		}
		rest := l.src[i+2:]
		switch {
		case strings.HasPrefix(rest, "}}"):
			l.emit(lexer.TokenComment, i+4)
			return stepContent
		case strings.HasPrefix(rest, "~}}"):
			l.emit(lexer.TokenComment, i+5)
			return stepContent
		}
		from = i + 1
	}
}

// isSpace reports whether c is in RE2's \s, which raymond's expressions
// use: tab, newline, form feed, carriage return and space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// skipSpace returns the index of the first byte of s from i on that is not
// in \s.
func (l *lexScanner) skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
		l.scanned++
	}
	return i
}

// mustache scans the opening of a mustache at pos (raymond's
// lexOpenMustache), tried in raymond's order.
func (l *lexScanner) mustache() lexStep {
	s := l.src[l.pos:]
	l.scanned += 5
	switch {
	case strings.HasPrefix(s, "{{{{/"):
		l.emit(lexer.TokenOpenEndRawBlock, l.pos+5)
		return stepExpression
	case strings.HasPrefix(s, "{{{{"):
		l.raw = true
		l.emit(lexer.TokenOpenRawBlock, l.pos+4)
		return stepExpression
	}
	n := 2
	if len(s) > n && s[n] == '~' {
		n++
	}
	var c byte
	if len(s) > n {
		c = s[n]
	}
	kind := lexer.TokenOpen
	switch c {
	case '{':
		kind, n = lexer.TokenOpenUnescaped, n+1
	case '#':
		kind, n = lexer.TokenOpenBlock, n+1
		if l.mode == lexExtended && len(s) > n {
			switch s[n] {
			case '>':
				kind, n = tokenOpenPartialBlock, n+1
			case '*':
				kind, n = tokenOpenDecoratorBlock, n+1
			}
		}
	case '/':
		kind, n = lexer.TokenOpenEndBlock, n+1
	case '>':
		kind, n = lexer.TokenOpenPartial, n+1
	case '^':
		// {{^}} (with \s and ~ inside) is INVERSE, else OPEN_INVERSE
		j := l.skipSpace(s, n+1)
		if j < len(s) && s[j] == '~' {
			j++
		}
		if strings.HasPrefix(s[j:], "}}") {
			l.emit(lexer.TokenInverse, l.pos+j+2)
			return stepContent
		}
		kind, n = lexer.TokenOpenInverse, n+1
	default:
		// {{else}} (with \s and ~ inside) is INVERSE, {{else is
		// OPEN_INVERSE_CHAIN, whatever follows it
		if j := l.skipSpace(s, n); strings.HasPrefix(s[j:], "else") {
			k := l.skipSpace(s, j+4)
			if k < len(s) && s[k] == '~' {
				k++
			}
			if strings.HasPrefix(s[k:], "}}") {
				l.emit(lexer.TokenInverse, l.pos+k+2)
				return stepContent
			}
			l.emit(lexer.TokenOpenInverseChain, l.pos+j+4)
			return stepExpression
		}
		switch {
		case c == '&':
			n++
		case c == '*' && l.mode == lexExtended:
			kind, n = tokenOpenDecorator, n+1
		}
	}
	l.emit(kind, l.pos+n)
	return stepExpression
}

// idStop holds the bytes that end an ID (raymond's unallowedIDChars).
// Every other byte, including those of multi-byte and invalid UTF-8
// sequences, belongs to an ID.
var idStop = func() (t [256]bool) {
	for _, c := range []byte(" \n\t!\"#%&'()*+,./;<=>@[\\]^`{|}~") {
		t[c] = true
	}
	return t
}()

// expression scans one token inside a mustache (raymond's lexExpression),
// or its closing.
func (l *lexScanner) expression() lexStep {
	s := l.src[l.pos:]
	l.scanned += 6
	if len(s) == 0 {
		return l.errorf("Unclosed expression")
	}
	switch c := s[0]; c {
	case '}':
		switch {
		case strings.HasPrefix(s, "}}}}"):
			l.emit(lexer.TokenCloseRawBlock, l.pos+4)
			return stepContent
		case strings.HasPrefix(s, "}}}"):
			l.emit(lexer.TokenCloseUnescaped, l.pos+3)
			return stepContent
		case strings.HasPrefix(s, "}}"):
			l.emit(lexer.TokenClose, l.pos+2)
			return stepContent
		case strings.HasPrefix(s, "}~}}"):
			l.emit(lexer.TokenCloseUnescaped, l.pos+4)
			return stepContent
		}
	case '~':
		if strings.HasPrefix(s, "~}}") {
			l.emit(lexer.TokenClose, l.pos+3)
			return stepContent
		}
	case 'a':
		// as |
		if len(s) > 2 && s[1] == 's' && isSpace(s[2]) {
			if j := l.skipSpace(s, 3); j < len(s) && s[j] == '|' {
				l.emit(lexer.TokenOpenBlockParams, l.pos+j+1)
				return stepExpression
			}
		}
	case '.':
		if len(s) > 1 && s[1] == '.' {
			l.emit(lexer.TokenID, l.pos+2)
			return stepExpression
		}
		if len(s) > 1 && (isSpace(s[1]) || strings.IndexByte("=~}/)|", s[1]) >= 0) {
			l.emit(lexer.TokenID, l.pos+1)
			return stepExpression
		}
	case 't', 'f':
		for _, b := range [...]string{"true", "false"} {
			if len(s) > len(b) && strings.HasPrefix(s, b) && (isSpace(s[len(b)]) || strings.IndexByte("~})", s[len(b)]) >= 0) {
				l.emit(lexer.TokenBoolean, l.pos+len(b))
				return stepExpression
			}
		}
	}
	switch c := s[0]; {
	case c == ' ' || c == '\t' || c == '\n':
		// ignored, and so are its newlines in raymond's line count
		i := 1
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
		l.scanned += i
		l.pos += i
		l.start = l.pos
		return stepExpression
	case c == '(':
		l.emit(lexer.TokenOpenSexpr, l.pos+1)
	case c == ')':
		l.emit(lexer.TokenCloseSexpr, l.pos+1)
	case c == '=':
		l.emit(lexer.TokenEquals, l.pos+1)
	case c == '@':
		l.emit(lexer.TokenData, l.pos+1)
	case c == '"' || c == '\'':
		return l.string(c)
	case c == '/' || c == '.':
		l.emit(lexer.TokenSep, l.pos+1)
	case c == '|':
		l.emit(lexer.TokenCloseBlockParams, l.pos+1)
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		return l.number()
	case c == '[':
		return l.pathLiteral()
	case !idStop[c]:
		i := 1
		for i < len(s) && !idStop[s[i]] {
			i++
		}
		l.scanned += i
		l.emit(lexer.TokenID, l.pos+i)
	default:
		l.pos++
		return l.errorf("Unexpected character in expression: '%c'", rune(c))
	}
	return stepExpression
}

// string scans a string literal delimited by delim (raymond's lexString):
// its value is what lies between the delimiters, with \delim turned into
// delim; a delimiter ends it unless a backslash precedes it.
func (l *lexScanner) string(delim byte) lexStep {
	l.pos++
	l.start = l.pos
	s := l.src
	j := l.pos
	for ; j < len(s); j++ {
		c := s[j]
		if c == '\n' {
			break
		}
		if c == delim && (j == l.start || s[j-1] != '\\') {
			l.scanned += j - l.pos + 1
			val := s[l.start:j]
			if strings.IndexByte(val, '\\') >= 0 {
				val = strings.ReplaceAll(val, "\\"+string(rune(delim)), string(rune(delim)))
			}
			l.pos = j
			l.emitValue(lexer.TokenString, val)
			l.pos = j + 1
			l.start = l.pos
			return stepExpression
		}
	}
	l.scanned += j - l.pos + 1
	return l.errorf("Unterminated string")
}

// pathLiteral scans [ID] (raymond's lexPathLiteral), brackets included.
func (l *lexScanner) pathLiteral() lexStep {
	s := l.src
	for j := l.pos + 1; j < len(s); j++ {
		switch s[j] {
		case ']':
			l.scanned += j - l.pos + 1
			l.emit(lexer.TokenID, j+1)
			return stepExpression
		case '\n':
			l.scanned += j - l.pos + 1
			return l.errorf("Unterminated path literal")
		}
	}
	l.scanned += len(s) - l.pos
	return l.errorf("Unterminated path literal")
}

// number scans a number (raymond's lexNumber, after text/template's):
// decimal, hex, float, with an exponent, imaginary, or complex (1+2i). It
// accepts what strconv later refuses ("-", "089") but errs when a letter,
// digit or _ follows.
func (l *lexScanner) number() lexStep {
	if !l.scanNumber() {
		return l.errorf("bad number syntax: %q", l.src[l.start:l.pos])
	}
	if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
		if !l.scanNumber() || l.src[l.pos-1] != 'i' {
			return l.errorf("bad number syntax: %q", l.src[l.start:l.pos])
		}
	}
	l.emit(lexer.TokenNumber, l.pos)
	return stepExpression
}

// accept consumes the next byte if it is in valid (ASCII only).
func (l *lexScanner) accept(valid string) bool {
	if l.pos < len(l.src) && strings.IndexByte(valid, l.src[l.pos]) >= 0 {
		l.pos++
		l.scanned++
		return true
	}
	return false
}

// acceptRun consumes the bytes that follow and are in valid.
func (l *lexScanner) acceptRun(valid string) {
	for l.accept(valid) {
	}
}

const (
	decDigits = "0123456789"
	hexDigits = "0123456789abcdefABCDEF"
)

// scanNumber is raymond's (and text/template's) scanNumber.
func (l *lexScanner) scanNumber() bool {
	l.accept("+-")
	digits := decDigits
	if l.accept("0") && l.accept("xX") {
		digits = hexDigits
	}
	l.acceptRun(digits)
	if l.accept(".") {
		l.acceptRun(digits)
	}
	if l.accept("eE") {
		l.accept("+-")
		l.acceptRun(decDigits)
	}
	l.accept("i")
	if l.pos < len(l.src) {
		r, w := utf8.DecodeRuneInString(l.src[l.pos:])
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			l.pos += w
			return false
		}
	}
	return true
}
