// Derived from github.com/aymerick/raymond/parser (parser.go and whitespace.go
// of v2.0.2), under the MIT License:
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
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/aymerick/raymond/ast"
	"github.com/aymerick/raymond/lexer"
)

// This file is raymond's parser (parser.go and whitespace.go of
// github.com/aymerick/raymond/parser v2.0.2) reading its tokens from a
// slice instead of from the lexer's channel.
//
// QUIRK: raymond's parser.Parse runs the lexer in a goroutine that sends on
// an unbuffered channel; when the parser stops at a syntax error before the
// end of the source, that goroutine stays blocked for ever, holding the
// source. parseTokens works over the tokens of lexer.Collect, which runs the
// lexer to its end, so no goroutine remains whatever the outcome. It builds
// the same *ast.Program as parser.Parse (whitespace control included) and
// fails with the same errors, text and line alike; parse_test.go checks both
// on a table and by fuzzing.

var (
	rOpenCommentTag  = regexp.MustCompile(`^\{\{~?!-?-?`)
	rCloseCommentTag = regexp.MustCompile(`-?-?~?\}\}$`)
	rOpenAmp         = regexp.MustCompile(`^\{\{~?&`)
)

// tokParser is a recursive descent parser over the tokens of one source.
type tokParser struct {
	toks []lexer.Token // all tokens, ending with TokenEOF or TokenError
	i    int           // index of the next token to consume
}

// parseTemplate parses src as raymond's parser.Parse does.
func parseTemplate(src string) (*ast.Program, error) {
	return parseTokens(lexer.Collect(src))
}

// parseTokens parses the tokens lexer.Collect returned for a source into the
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

// errPanic panics with a parse error on the given line.
func errPanic(err error, line int) {
	//lint:ignore ST1005 raymond's message, which FuzzParseEquivalence compares
	panic(fmt.Errorf("Parse error on line %d:\n%s", line, err))
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

// program : statement*
func (p *tokParser) parseProgram() *ast.Program {
	result := ast.NewProgram(p.next().Pos, p.next().Line)
	for p.isStatement() {
		result.AddStatement(p.parseStatement())
	}
	return result
}

// statement : mustache | block | rawBlock | partial | content | COMMENT
func (p *tokParser) parseStatement() ast.Node {
	switch p.next().Kind {
	case lexer.TokenOpen, lexer.TokenOpenUnescaped:
		return p.parseMustache()
	case lexer.TokenOpenBlock:
		return p.parseBlock()
	case lexer.TokenOpenInverse:
		return p.parseInverse()
	case lexer.TokenOpenRawBlock:
		return p.parseRawBlock()
	case lexer.TokenOpenPartial:
		return p.parsePartial()
	case lexer.TokenContent:
		return p.parseContent()
	case lexer.TokenComment:
		return p.parseComment()
	}
	return nil
}

// isStatement reports whether the next token starts a statement.
func (p *tokParser) isStatement() bool {
	if !p.have(1) {
		return false
	}
	switch p.next().Kind {
	case lexer.TokenOpen, lexer.TokenOpenUnescaped, lexer.TokenOpenBlock,
		lexer.TokenOpenInverse, lexer.TokenOpenRawBlock, lexer.TokenOpenPartial,
		lexer.TokenContent, lexer.TokenComment:
		return true
	}
	return false
}

// content : CONTENT
func (p *tokParser) parseContent() *ast.ContentStatement {
	tok := p.shift()
	if tok.Kind != lexer.TokenContent {
		errExpected(lexer.TokenContent, tok)
	}
	return ast.NewContentStatement(tok.Pos, tok.Line, tok.Val)
}

// COMMENT
func (p *tokParser) parseComment() *ast.CommentStatement {
	tok := p.shift()

	value := rOpenCommentTag.ReplaceAllString(tok.Val, "")
	value = rCloseCommentTag.ReplaceAllString(value, "")

	result := ast.NewCommentStatement(tok.Pos, tok.Line, value)
	result.Strip = ast.NewStripForStr(tok.Val)
	return result
}

// param* hash?
func (p *tokParser) parseExpressionParamsHash() ([]ast.Node, *ast.Hash) {
	var params []ast.Node
	var hash *ast.Hash
	if p.isParam() {
		params = p.parseParams()
	}
	if p.isHashSegment() {
		hash = p.parseHash()
	}
	return params, hash
}

// helperName param* hash?
func (p *tokParser) parseExpression(tok *lexer.Token) *ast.Expression {
	result := ast.NewExpression(tok.Pos, tok.Line)
	result.Path = p.parseHelperName()
	result.Params, result.Hash = p.parseExpressionParamsHash()
	return result
}

// rawBlock : openRawBlock content endRawBlock
// openRawBlock : OPEN_RAW_BLOCK helperName param* hash? CLOSE_RAW_BLOCK
// endRawBlock : OPEN_END_RAW_BLOCK helperName CLOSE_RAW_BLOCK
func (p *tokParser) parseRawBlock() *ast.BlockStatement {
	tok := p.shift() // OPEN_RAW_BLOCK

	result := ast.NewBlockStatement(tok.Pos, tok.Line)
	result.Expression = p.parseExpression(tok)
	openName := result.Expression.Canonical()

	tok = p.shift()
	if tok.Kind != lexer.TokenCloseRawBlock {
		errExpected(lexer.TokenCloseRawBlock, tok)
	}

	content := p.parseContent()
	program := ast.NewProgram(tok.Pos, tok.Line)
	program.AddStatement(content)
	result.Program = program

	tok = p.shift()
	if tok.Kind != lexer.TokenOpenEndRawBlock {
		errExpected(lexer.TokenOpenEndRawBlock, tok)
	}

	endID := p.parseHelperName()
	closeName, ok := ast.HelperNameStr(endID)
	if !ok {
		errNode(endID, "Erroneous closing expression")
	}
	if openName != closeName {
		errNode(endID, fmt.Sprintf("%s doesn't match %s", openName, closeName))
	}

	tok = p.shift()
	if tok.Kind != lexer.TokenCloseRawBlock {
		errExpected(lexer.TokenCloseRawBlock, tok)
	}
	return result
}

// block : openBlock program inverseChain? closeBlock
func (p *tokParser) parseBlock() *ast.BlockStatement {
	result, blockParams := p.parseOpenBlock()

	program := p.parseProgram()
	program.BlockParams = blockParams
	result.Program = program

	if p.isInverseChain() {
		result.Inverse = p.parseInverseChain()
	}

	p.parseCloseBlock(result)
	setBlockInverseStrip(result)
	return result
}

// setBlockInverseStrip is called when parsing block (openBlock |
// openInverse) and inverseChain, as prepareBlock in handlebars.js's
// compiler/helper.js.
func setBlockInverseStrip(block *ast.BlockStatement) {
	if block.Inverse == nil {
		return
	}
	if block.Inverse.Chained {
		b, _ := block.Inverse.Body[0].(*ast.BlockStatement)
		b.CloseStrip = block.CloseStrip
	}
	block.InverseStrip = block.Inverse.Strip
}

// block : openInverse program inverseAndProgram? closeBlock
func (p *tokParser) parseInverse() *ast.BlockStatement {
	result, blockParams := p.parseOpenBlock()

	program := p.parseProgram()
	program.BlockParams = blockParams
	result.Inverse = program

	if p.isInverse() {
		result.Program = p.parseInverseAndProgram()
	}

	p.parseCloseBlock(result)
	setBlockInverseStrip(result)
	return result
}

// helperName param* hash? blockParams?
func (p *tokParser) parseOpenBlockExpression(tok *lexer.Token) (*ast.BlockStatement, []string) {
	var blockParams []string

	result := ast.NewBlockStatement(tok.Pos, tok.Line)
	result.Expression = p.parseExpression(tok)

	if p.isBlockParams() {
		blockParams = p.parseBlockParams()
	}
	return result, blockParams
}

// inverseChain : openInverseChain program inverseChain?
//
//	| inverseAndProgram
func (p *tokParser) parseInverseChain() *ast.Program {
	if p.isInverse() {
		return p.parseInverseAndProgram()
	}

	result := ast.NewProgram(p.next().Pos, p.next().Line)

	block, blockParams := p.parseOpenBlock()

	program := p.parseProgram()
	program.BlockParams = blockParams
	block.Program = program

	if p.isInverseChain() {
		block.Inverse = p.parseInverseChain()
	}

	setBlockInverseStrip(block)

	result.Chained = true
	result.AddStatement(block)
	return result
}

// isInverseChain reports whether the next token starts an inverse chain.
func (p *tokParser) isInverseChain() bool {
	return p.isToken(lexer.TokenOpenInverseChain) || p.isInverse()
}

// inverseAndProgram : INVERSE program
func (p *tokParser) parseInverseAndProgram() *ast.Program {
	tok := p.shift() // INVERSE

	result := p.parseProgram()
	result.Strip = ast.NewStripForStr(tok.Val)
	return result
}

// openBlock : OPEN_BLOCK helperName param* hash? blockParams? CLOSE
// openInverse : OPEN_INVERSE helperName param* hash? blockParams? CLOSE
// openInverseChain: OPEN_INVERSE_CHAIN helperName param* hash? blockParams? CLOSE
func (p *tokParser) parseOpenBlock() (*ast.BlockStatement, []string) {
	tok := p.shift() // OPEN_BLOCK | OPEN_INVERSE | OPEN_INVERSE_CHAIN

	result, blockParams := p.parseOpenBlockExpression(tok)

	tokClose := p.shift()
	if tokClose.Kind != lexer.TokenClose {
		errExpected(lexer.TokenClose, tokClose)
	}

	result.OpenStrip = ast.NewStrip(tok.Val, tokClose.Val)
	return result, blockParams
}

// closeBlock : OPEN_ENDBLOCK helperName CLOSE
func (p *tokParser) parseCloseBlock(block *ast.BlockStatement) {
	tok := p.shift()
	if tok.Kind != lexer.TokenOpenEndBlock {
		errExpected(lexer.TokenOpenEndBlock, tok)
	}

	endID := p.parseHelperName()
	closeName, ok := ast.HelperNameStr(endID)
	if !ok {
		errNode(endID, "Erroneous closing expression")
	}
	openName := block.Expression.Canonical()
	if openName != closeName {
		errNode(endID, fmt.Sprintf("%s doesn't match %s", openName, closeName))
	}

	tokClose := p.shift()
	if tokClose.Kind != lexer.TokenClose {
		errExpected(lexer.TokenClose, tokClose)
	}

	block.CloseStrip = ast.NewStrip(tok.Val, tokClose.Val)
}

// mustache : OPEN helperName param* hash? CLOSE
//
//	| OPEN_UNESCAPED helperName param* hash? CLOSE_UNESCAPED
func (p *tokParser) parseMustache() *ast.MustacheStatement {
	tok := p.shift() // OPEN | OPEN_UNESCAPED

	closeToken := lexer.TokenClose
	if tok.Kind == lexer.TokenOpenUnescaped {
		closeToken = lexer.TokenCloseUnescaped
	}
	unescaped := tok.Kind == lexer.TokenOpenUnescaped || rOpenAmp.MatchString(tok.Val)

	result := ast.NewMustacheStatement(tok.Pos, tok.Line, unescaped)
	result.Expression = p.parseExpression(tok)

	tokClose := p.shift()
	if tokClose.Kind != closeToken {
		errExpected(closeToken, tokClose)
	}

	result.Strip = ast.NewStrip(tok.Val, tokClose.Val)
	return result
}

// partial : OPEN_PARTIAL partialName param* hash? CLOSE
func (p *tokParser) parsePartial() *ast.PartialStatement {
	tok := p.shift() // OPEN_PARTIAL

	result := ast.NewPartialStatement(tok.Pos, tok.Line)
	result.Name = p.parseHelperNameOrSexpr() // partialName
	result.Params, result.Hash = p.parseExpressionParamsHash()

	tokClose := p.shift()
	if tokClose.Kind != lexer.TokenClose {
		errExpected(lexer.TokenClose, tokClose)
	}

	result.Strip = ast.NewStrip(tok.Val, tokClose.Val)
	return result
}

// helperName | sexpr; also param and partialName.
func (p *tokParser) parseHelperNameOrSexpr() ast.Node {
	if p.isToken(lexer.TokenOpenSexpr) {
		return p.parseSexpr()
	}
	return p.parseHelperName()
}

// isParam reports whether the next tokens are a param.
func (p *tokParser) isParam() bool {
	return (p.isToken(lexer.TokenOpenSexpr) || p.isHelperName()) && !p.isHashSegment()
}

// param*
func (p *tokParser) parseParams() []ast.Node {
	var result []ast.Node
	for p.isParam() {
		result = append(result, p.parseHelperNameOrSexpr())
	}
	return result
}

// sexpr : OPEN_SEXPR helperName param* hash? CLOSE_SEXPR
func (p *tokParser) parseSexpr() *ast.SubExpression {
	tok := p.shift() // OPEN_SEXPR

	result := ast.NewSubExpression(tok.Pos, tok.Line)
	result.Expression = p.parseExpression(tok)

	tok = p.shift()
	if tok.Kind != lexer.TokenCloseSexpr {
		errExpected(lexer.TokenCloseSexpr, tok)
	}
	return result
}

// hash : hashSegment+
func (p *tokParser) parseHash() *ast.Hash {
	var pairs []*ast.HashPair
	for p.isHashSegment() {
		pairs = append(pairs, p.parseHashSegment())
	}

	firstLoc := pairs[0].Location()
	result := ast.NewHash(firstLoc.Pos, firstLoc.Line)
	result.Pairs = pairs
	return result
}

// isHashSegment reports whether the next tokens are a hashSegment.
func (p *tokParser) isHashSegment() bool {
	return p.have(2) && p.next().Kind == lexer.TokenID && p.nextAt(1).Kind == lexer.TokenEquals
}

// hashSegment : ID EQUALS param
func (p *tokParser) parseHashSegment() *ast.HashPair {
	tok := p.shift() // ID
	p.shift()        // EQUALS

	param := p.parseHelperNameOrSexpr()

	result := ast.NewHashPair(tok.Pos, tok.Line)
	result.Key = tok.Val
	result.Val = param
	return result
}

// blockParams : OPEN_BLOCK_PARAMS ID+ CLOSE_BLOCK_PARAMS
func (p *tokParser) parseBlockParams() []string {
	var result []string

	p.shift() // OPEN_BLOCK_PARAMS

	for p.isToken(lexer.TokenID) {
		result = append(result, p.shift().Val)
	}
	if len(result) == 0 {
		errExpected(lexer.TokenID, p.next())
	}

	tok := p.shift()
	if tok.Kind != lexer.TokenCloseBlockParams {
		errExpected(lexer.TokenCloseBlockParams, tok)
	}
	return result
}

// helperName : path | dataName | STRING | NUMBER | BOOLEAN | UNDEFINED | NULL
func (p *tokParser) parseHelperName() ast.Node {
	tok := p.next()
	switch tok.Kind {
	case lexer.TokenBoolean:
		p.shift()
		return ast.NewBooleanLiteral(tok.Pos, tok.Line, tok.Val == "true", tok.Val)
	case lexer.TokenNumber:
		p.shift()
		val, isInt := parseNumber(tok)
		return ast.NewNumberLiteral(tok.Pos, tok.Line, val, isInt, tok.Val)
	case lexer.TokenString:
		p.shift()
		return ast.NewStringLiteral(tok.Pos, tok.Line, tok.Val)
	case lexer.TokenData:
		// dataName : DATA pathSegments
		p.shift()
		return p.parsePath(true)
	}
	return p.parsePath(false)
}

// parseNumber parses a NUMBER token.
func parseNumber(tok *lexer.Token) (result float64, isInt bool) {
	valInt, err := strconv.Atoi(tok.Val)
	if err == nil {
		return float64(valInt), true
	}
	result, err = strconv.ParseFloat(tok.Val, 64)
	if err != nil {
		errToken(tok, fmt.Sprintf("Failed to parse number: %s", tok.Val))
	}
	return result, false
}

// isHelperName reports whether the next token is a helperName.
func (p *tokParser) isHelperName() bool {
	switch p.next().Kind {
	case lexer.TokenBoolean, lexer.TokenNumber, lexer.TokenString, lexer.TokenData, lexer.TokenID:
		return true
	}
	return false
}

// path : pathSegments
// pathSegments : pathSegments SEP ID
//
//	| ID
func (p *tokParser) parsePath(data bool) *ast.PathExpression {
	tok := p.shift()
	if tok.Kind != lexer.TokenID {
		errExpected(lexer.TokenID, tok)
	}

	result := ast.NewPathExpression(tok.Pos, tok.Line, data)
	result.Part(tok.Val)
	if !p.isToken(lexer.TokenSep) {
		return result
	}

	// QUIRK: raymond's PathExpression.Part and Sep append to Original with
	// +=, which copies the path so far for each segment: quadratic in the
	// number of segments. Original is built here once instead; Part still
	// sets Parts, Depth and Scoped.
	var orig strings.Builder
	orig.WriteString(result.Original) // "@" and the first part
	for p.isToken(lexer.TokenSep) {
		tok = p.shift()
		orig.WriteString(tok.Val)

		tok = p.shift()
		if tok.Kind != lexer.TokenID {
			errExpected(lexer.TokenID, tok)
		}

		result.Original = ""
		result.Part(tok.Val)
		orig.WriteString(tok.Val)

		if len(result.Parts) > 0 {
			switch tok.Val {
			case "..", ".", "this":
				errToken(tok, "Invalid path: "+orig.String())
			}
		}
	}
	result.Original = orig.String()
	return result
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

// Whitespace control, after handlebars.js's
// compiler/whitespace-control.js, as raymond's parser/whitespace.go.

var (
	rTrimLeft         = regexp.MustCompile(`^[ \t]*\r?\n?`)
	rTrimLeftMultiple = regexp.MustCompile(`^\s+`)

	rTrimRight         = regexp.MustCompile(`[ \t]+$`)
	rTrimRightMultiple = regexp.MustCompile(`\s+$`)

	rPrevWhitespace      = regexp.MustCompile(`\r?\n\s*?$`)
	rPrevWhitespaceStart = regexp.MustCompile(`(^|\r?\n)\s*?$`)

	rNextWhitespace    = regexp.MustCompile(`^\s*?\r?\n`)
	rNextWhitespaceEnd = regexp.MustCompile(`^\s*?(\r?\n|$)`)

	rPartialIndent = regexp.MustCompile(`([ \t]+$)`)
)

// processWhitespaces performs whitespace control on the tree rooted at
// root. It must be called once only on a tree.
func processWhitespaces(root *ast.Program) {
	wsProgram(root, true)
}

func omitRightFirst(body []ast.Node, multiple bool) {
	omitRight(body, -1, multiple)
}

func omitRight(body []ast.Node, i int, multiple bool) {
	if i+1 >= len(body) {
		return
	}
	node, ok := body[i+1].(*ast.ContentStatement)
	if !ok {
		return
	}
	if !multiple && node.RightStripped {
		return
	}

	original := node.Value
	r := rTrimLeft
	if multiple {
		r = rTrimLeftMultiple
	}
	node.Value = r.ReplaceAllString(node.Value, "")
	node.RightStripped = original != node.Value
}

func omitLeftLast(body []ast.Node, multiple bool) {
	omitLeft(body, len(body), multiple)
}

func omitLeft(body []ast.Node, i int, multiple bool) bool {
	if i-1 < 0 {
		return false
	}
	node, ok := body[i-1].(*ast.ContentStatement)
	if !ok {
		return false
	}
	if !multiple && node.LeftStripped {
		return false
	}

	original := node.Value
	r := rTrimRight
	if multiple {
		r = rTrimRightMultiple
	}
	node.Value = r.ReplaceAllString(node.Value, "")
	node.LeftStripped = original != node.Value
	return node.LeftStripped
}

func isPrevWhitespace(body []ast.Node) bool {
	return isPrevWhitespaceProgram(body, len(body), false)
}

func isPrevWhitespaceProgram(body []ast.Node, i int, isRoot bool) bool {
	if i < 1 {
		return isRoot
	}
	node, ok := body[i-1].(*ast.ContentStatement)
	if !ok {
		return false
	}
	if node.Value == "" && node.RightStripped {
		// already stripped, so it may be an empty string the regexp misses
		return true
	}
	r := rPrevWhitespaceStart
	if i > 1 || !isRoot {
		r = rPrevWhitespace
	}
	return r.MatchString(node.Value)
}

func isNextWhitespace(body []ast.Node) bool {
	return isNextWhitespaceProgram(body, -1, false)
}

func isNextWhitespaceProgram(body []ast.Node, i int, isRoot bool) bool {
	if i+1 >= len(body) {
		return isRoot
	}
	node, ok := body[i+1].(*ast.ContentStatement)
	if !ok {
		return false
	}
	if node.Value == "" && node.LeftStripped {
		// already stripped, so it may be an empty string the regexp misses
		return true
	}
	r := rNextWhitespaceEnd
	if i+2 > len(body) || !isRoot {
		r = rNextWhitespace
	}
	return r.MatchString(node.Value)
}

// wsStatement visits a statement and returns its strip information, or nil.
func wsStatement(n ast.Node) *ast.Strip {
	switch n := n.(type) {
	case *ast.BlockStatement:
		return wsBlock(n)
	case *ast.MustacheStatement:
		return n.Strip
	case *ast.PartialStatement:
		return inlineStandalone(n.Strip)
	case *ast.CommentStatement:
		return inlineStandalone(n.Strip)
	}
	return nil
}

func inlineStandalone(strip *ast.Strip) *ast.Strip {
	if strip == nil {
		strip = &ast.Strip{}
	}
	return &ast.Strip{Open: strip.Open, Close: strip.Close, InlineStandalone: true}
}

// wsProgram is raymond's whitespaceVisitor.VisitProgram; isRoot is true for
// the root program only.
func wsProgram(program *ast.Program, isRoot bool) {
	body := program.Body
	for i, current := range body {
		strip := wsStatement(current)
		if strip == nil {
			continue
		}

		prevWS := isPrevWhitespaceProgram(body, i, isRoot)
		nextWS := isNextWhitespaceProgram(body, i, isRoot)

		openStandalone := strip.OpenStandalone && prevWS
		closeStandalone := strip.CloseStandalone && nextWS
		inline := strip.InlineStandalone && prevWS && nextWS

		if strip.Close {
			omitRight(body, i, true)
		}
		if strip.Open && i > 0 {
			omitLeft(body, i, true)
		}

		if inline {
			omitRight(body, i, false)
			if omitLeft(body, i, false) {
				// on a standalone node, save the indent for partials
				if partial, ok := current.(*ast.PartialStatement); ok && i > 0 {
					if prevContent, ok := body[i-1].(*ast.ContentStatement); ok {
						partial.Indent = rPartialIndent.FindString(prevContent.Original)
					}
				}
			}
		}

		if b, ok := current.(*ast.BlockStatement); ok {
			if openStandalone {
				prog := b.Program
				if prog == nil {
					prog = b.Inverse
				}
				omitRightFirst(prog.Body, false)
				// strip out the previous content node if it's whitespace only
				omitLeft(body, i, false)
			}
			if closeStandalone {
				prog := b.Inverse
				if prog == nil {
					prog = b.Program
				}
				// always strip the next node
				omitRight(body, i, false)
				omitLeftLast(prog.Body, false)
			}
		}
	}
}

// wsBlock is raymond's whitespaceVisitor.VisitBlock.
func wsBlock(block *ast.BlockStatement) *ast.Strip {
	if block.Program != nil {
		wsProgram(block.Program, false)
	}
	if block.Inverse != nil {
		wsProgram(block.Inverse, false)
	}

	program := block.Program
	inverse := block.Inverse
	if program == nil {
		program = inverse
		inverse = nil
	}

	firstInverse := inverse
	lastInverse := inverse
	if inverse != nil && inverse.Chained {
		b, _ := inverse.Body[0].(*ast.BlockStatement)
		firstInverse = b.Program
		for lastInverse.Chained {
			b, _ := lastInverse.Body[len(lastInverse.Body)-1].(*ast.BlockStatement)
			lastInverse = b.Program
		}
	}

	closeProg := firstInverse
	if closeProg == nil {
		closeProg = program
	}

	strip := &ast.Strip{
		Open:            block.OpenStrip != nil && block.OpenStrip.Open,
		Close:           block.CloseStrip != nil && block.CloseStrip.Close,
		OpenStandalone:  isNextWhitespace(program.Body),
		CloseStandalone: isPrevWhitespace(closeProg.Body),
	}

	if block.OpenStrip != nil && block.OpenStrip.Close {
		omitRightFirst(program.Body, true)
	}

	if inverse != nil {
		if s := block.InverseStrip; s != nil {
			if s.Open {
				omitLeftLast(program.Body, true)
			}
			if s.Close {
				omitRightFirst(firstInverse.Body, true)
			}
		}
		if block.CloseStrip != nil && block.CloseStrip.Open {
			omitLeftLast(lastInverse.Body, true)
		}
		// find standalone else statements
		if isPrevWhitespace(program.Body) && isNextWhitespace(firstInverse.Body) {
			omitLeftLast(program.Body, false)
			omitRightFirst(firstInverse.Body, false)
		}
	} else if block.CloseStrip != nil && block.CloseStrip.Open {
		omitLeftLast(program.Body, true)
	}

	return strip
}
