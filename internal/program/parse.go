// Derived from github.com/aymerick/raymond/parser (parser.go of v2.0.2),
// under the MIT License:
//
// Copyright (c) 2015 Aymerick JEHANNE
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

package program

import (
	"fmt"
	"runtime"

	"github.com/aymerick/raymond/ast"
	"github.com/aymerick/raymond/lexer"
)

// This file is the frame of raymond's parser (parser.go of
// github.com/aymerick/raymond/parser v2.0.2): its entry point, its errors
// and its token cursor, which reads the tokens from a slice instead of from
// the lexer's channel. The grammar rules are in parser.go, whitespace
// control (raymond's whitespace.go) in whitespace.go.
//
// QUIRK: raymond's parser.Parse runs the lexer in a goroutine that sends on
// an unbuffered channel; when the parser stops at a syntax error before the
// end of the source, that goroutine stays blocked for ever, holding the
// source. parseTokens works over the tokens of lex (lexer.go), this
// package's own lexer, which yields raymond's tokens in a slice, so no
// goroutine runs at all. It builds the same *ast.Program as parser.Parse
// (whitespace control included) and fails with the same errors, text and
// line alike; parse_test.go checks both on a table and by fuzzing.

// tokParser is a recursive descent parser over the tokens of one source.
type tokParser struct {
	toks []lexer.Token // all tokens, ending with TokenEOF or TokenError
	i    int           // index of the next token to consume
}

// parseTokens parses the tokens lex returned for a source into the
// program raymond's parser.Parse returns for it, or its error. Like
// parser.Parse, it lets runtime panics through.
func parseTokens(toks []lexer.Token) (result *ast.Program, err error) {
	defer parseRecover(&err)

	p := &tokParser{toks: toks}
	result = p.parseProgram()

	// check last token
	tok := p.shift()
	if tok.Kind != lexer.TokenEOF {
		// Parsing ended before EOF
		errToken(tok, "Syntax error")
	}

	processWhitespaces(result)
	return result, nil
}

// parseRecover turns a parsing panic back into an error and lets any other
// panic through.
func parseRecover(errp *error) {
	e := recover()
	if e == nil {
		return
	}
	switch err := e.(type) {
	case runtime.Error:
		panic(e)
	case error:
		*errp = err
	default:
		panic(e)
	}
}

// syntaxError is a parse error: the line it was found on and what is
// wrong, kept apart so that nobody has to read them back out of the text.
// Its text is raymond's, which FuzzParseEquivalence compares.
type syntaxError struct {
	line   int
	detail error
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("Parse error on line %d:\n%s", e.line, e.detail)
}

// errPanic panics with a parse error on the given line.
func errPanic(err error, line int) {
	panic(&syntaxError{line: line, detail: err})
}

// errNode panics with the given node's infos.
func errNode(node ast.Node, msg string) {
	errPanic(fmt.Errorf("%s\nNode: %s", msg, node), node.Location().Line)
}

// errToken panics with the given token's infos.
func errToken(tok *lexer.Token, msg string) {
	errPanic(fmt.Errorf("%s\nToken: %s", msg, tok), tok.Line)
}

// errExpected panics because of an unexpected token kind.
func errExpected(expect lexer.TokenKind, tok *lexer.Token) {
	//lint:ignore ST1005 raymond's message, which FuzzParseEquivalence compares
	errPanic(fmt.Errorf("Expecting %s, got: '%s'", expect, tok), tok.Line)
}

// have reports whether nb tokens are left to consume.
func (p *tokParser) have(nb int) bool {
	return len(p.toks)-p.i >= nb
}

// nextAt returns the token index places ahead, without consuming it. Like
// raymond's, it panics with an index error past the last token.
func (p *tokParser) nextAt(index int) *lexer.Token {
	return &p.toks[p.i+index]
}

// next returns the next token without consuming it.
func (p *tokParser) next() *lexer.Token {
	return p.nextAt(0)
}

// shift consumes and returns the next token. It panics with a parse error
// if that token is TokenError.
func (p *tokParser) shift() *lexer.Token {
	tok := &p.toks[p.i]
	p.i++
	if tok.Kind == lexer.TokenError {
		errToken(tok, "Lexer error")
	}
	return tok
}

// isToken reports whether the next token is of the given kind.
func (p *tokParser) isToken(kind lexer.TokenKind) bool {
	return p.have(1) && p.next().Kind == kind
}

// isInverse reports whether the next token is INVERSE.
func (p *tokParser) isInverse() bool {
	return p.isToken(lexer.TokenInverse)
}

// isBlockParams reports whether the next token starts block params.
func (p *tokParser) isBlockParams() bool {
	return p.isToken(lexer.TokenOpenBlockParams)
}
