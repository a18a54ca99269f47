package program

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aymerick/raymond/lexer"
)

// The checks of the source that run before raymond's parser: lexical
// errors, nesting, and what raymond's lexer reads differently from
// handlebars.js's.

// precheck reports the lexical error that ends toks, the tokens of src, if
// any, and measures the nesting of blocks, {{else x}} links and
// subexpressions, so that nothing deeper than maxDepth reaches the recursive
// parser. It also refuses a closing tag or an {{else x}} with no block
// open, at its column (the parser's errors carry a line only); other
// unbalanced tags are left to the parser.
func precheck(src string, toks []lexer.Token, maxDepth int) (int, error) {
	// open holds the blocks open, each with its number of {{else x}}
	// links so far.
	type openBlock struct {
		tok      lexer.Token
		name     string
		nameKind lexer.TokenKind // of the token after tok
		links    int
	}
	var open []openBlock
	depth, deepest := 0, 0
	for i, tok := range toks {
		switch tok.Kind {
		case lexer.TokenError:
			return 0, &Error{Line: tok.Line, Column: column(src, tok.Pos), Msg: tok.Val}
		case tokenOpenDecorator:
			return 0, &Error{Line: tok.Line, Column: column(src, tok.Pos), Msg: "decorators ({{*name}}) are not supported"}
		case lexer.TokenContent:
			if len(open) > 0 && open[len(open)-1].tok.Kind == lexer.TokenOpenRawBlock {
				if err := checkRawContent(src, tok); err != nil {
					return 0, err
				}
			}
		case lexer.TokenID, lexer.TokenNumber, lexer.TokenBoolean:
			if err := checkLookahead(src, tok); err != nil {
				return 0, err
			}
		case lexer.TokenOpenBlock, lexer.TokenOpenInverse, lexer.TokenOpenRawBlock, tokenOpenPartialBlock, tokenOpenDecoratorBlock:
			ob := openBlock{tok: tok, name: tokenName(toks, i)}
			if i+1 < len(toks) {
				ob.nameKind = toks[i+1].Kind
			}
			open = append(open, ob)
			depth++
		case lexer.TokenOpenInverseChain:
			if end := tok.Pos + len(tok.Val); end < len(src) && !isJSSpace(rune(src[end])) {
				// {{else0}}: raymond and handlebars.js read it differently.
				return 0, &Error{Line: tok.Line, Column: column(src, end), Msg: "write a space after else"}
			}
			if len(open) == 0 {
				return 0, &Error{Line: tok.Line, Column: column(src, tok.Pos), Msg: "else outside a block"}
			}
			open[len(open)-1].links++
			depth++
		case lexer.TokenOpenEndBlock, lexer.TokenOpenEndRawBlock:
			if len(open) == 0 {
				return 0, &Error{Line: tok.Line, Column: column(src, tok.Pos), Msg: "closing tag without an open block"}
			}
			o := open[len(open)-1]
			if i+1 < len(toks) && literalClass(o.nameKind) != literalClass(toks[i+1].Kind) {
				// handlebars.js compares the names with ===: {{#0}} and {{/"0"}} differ.
				return 0, &Error{Line: tok.Line, Column: column(src, tok.Pos),
					Msg: fmt.Sprintf("{{/%s}} closes a block opened with a name of another kind", toks[i+1].Val)}
			}
			if name := tokenName(toks, i); name != "" && o.name != "" && name != o.name {
				return 0, &Error{Line: tok.Line, Column: column(src, tok.Pos),
					Msg: fmt.Sprintf("{{/%s}} closes the block {{#%s}} opened at line %d, column %d", name, o.name, o.tok.Line, column(src, o.tok.Pos))}
			}
			depth -= 1 + o.links
			open = open[:len(open)-1]
		case lexer.TokenOpenSexpr:
			depth++
		case lexer.TokenCloseSexpr:
			depth--
		}
		if depth > deepest {
			deepest = depth
			if deepest > maxDepth {
				return 0, &Error{Line: tok.Line, Column: column(src, tok.Pos), Msg: fmt.Sprintf("nesting deeper than %d", maxDepth)}
			}
		}
	}
	if len(open) > 0 {
		o := open[len(open)-1]
		return 0, &Error{Line: o.tok.Line, Column: column(src, o.tok.Pos), Msg: fmt.Sprintf("block {{#%s}} is never closed", o.name)}
	}
	return deepest, nil
}

// checkLookahead refuses what raymond's lexer reads differently from
// handlebars.js's: a name (not in brackets) holding white space that
// JavaScript's \s matches (raymond reads "x\r" as a name) or followed by
// a character handlebars.js does not allow after a name ({{#each@x}},
// which handlebars.js refuses), and a number or boolean followed by
// something other than white space, ~, ) or }}.
func checkLookahead(src string, tok lexer.Token) error {
	if tok.Kind == lexer.TokenID && strings.HasPrefix(tok.Val, "[") {
		return nil
	}
	if tok.Kind == lexer.TokenNumber && !jsNumber.MatchString(tok.Val) {
		return &Error{Line: tok.Line, Column: column(src, tok.Pos),
			Msg: fmt.Sprintf("number %s: handlebars.js reads numbers as -12 or 1.5 only", tok.Val)}
	}
	if i := strings.IndexFunc(tok.Val, isJSSpace); i >= 0 {
		return &Error{Line: tok.Line, Column: column(src, tok.Pos+i),
			Msg: fmt.Sprintf("white space %U inside a name: handlebars.js ends the name there", []rune(tok.Val[i:])[0])}
	}
	end := tok.Pos + len(tok.Val)
	if tok.Pos < 0 || end >= len(src) {
		return nil
	}
	allowed := "~})" // numbers and booleans
	if tok.Kind == lexer.TokenID {
		allowed = "=~}/.)|"
	}
	r, _ := utf8.DecodeRuneInString(src[end:])
	if strings.ContainsRune(allowed, r) || isJSSpace(r) {
		return nil
	}
	return &Error{Line: tok.Line, Column: column(src, end),
		Msg: fmt.Sprintf("%q right after %q: handlebars.js needs a space or the end of the tag there", r, tok.Val)}
}

// checkRawContent refuses {{{{ not followed by / in the content of a raw
// block (the content and the {{{{ of the closing tag after it):
// handlebars.js opens a nested raw block there, raymond does not.
func checkRawContent(src string, tok lexer.Token) error {
	end := min(len(src), tok.Pos+len(tok.Val)+5)
	if tok.Pos < 0 || tok.Pos > end {
		return nil
	}
	region := src[tok.Pos:end]
	for i := 0; ; i++ {
		j := strings.Index(region[i:], "{{{{")
		if j < 0 {
			return nil
		}
		i += j
		if i+4 < len(region) && region[i+4] != '/' {
			return &Error{Line: tok.Line, Column: column(src, tok.Pos+i), Msg: "{{{{ inside a raw block: handlebars.js opens a nested raw block there"}
		}
	}
}

// jsNumber is the form of a number literal in handlebars.js's lexer.
var jsNumber = regexp.MustCompile(`^-?[0-9]+(?:\.[0-9]+)?$`)

// isJSSpace reports whether JavaScript's \s matches r: Unicode's white
// space and the byte order mark.
func isJSSpace(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' }

// literalClass is the JavaScript type of a block's name token: numbers
// and booleans are their own, names and strings are strings.
func literalClass(k lexer.TokenKind) lexer.TokenKind {
	if k == lexer.TokenString {
		return lexer.TokenID
	}
	return k
}

// tokenName returns the name after the opening token toks[i] of a block
// or closing tag, when it is a plain identifier, else "".
func tokenName(toks []lexer.Token, i int) string {
	if i+1 < len(toks) && toks[i+1].Kind == lexer.TokenID {
		if i+2 < len(toks) && toks[i+2].Kind == lexer.TokenSep {
			return "" // a path: left to the parser
		}
		return toks[i+1].Val
	}
	return ""
}

// parseError turns a parse error into an *Error: its line and detail come
// from the *syntaxError's fields.
func parseError(err error) *Error {
	var line int
	msg := err.Error()
	if se := (*syntaxError)(nil); errors.As(err, &se) {
		line, msg = se.line, se.detail.Error()
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	return &Error{Line: line, Msg: "syntax error: " + msg}
}

// column returns the 1-based column of byte offset pos in src.
func column(src string, pos int) int {
	if pos < 0 || pos > len(src) {
		return 0
	}
	return pos - strings.LastIndexByte(src[:pos], '\n')
}
