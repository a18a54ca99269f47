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
	"regexp"
	"strconv"
	"strings"

	"github.com/aymerick/raymond/ast"
	"github.com/aymerick/raymond/lexer"
)

// The grammar rules of raymond's parser/parser.go, one method per rule,
// reading the tokens through the cursor of parse.go.

var (
	rOpenCommentTag  = regexp.MustCompile(`^\{\{~?!-?-?`)
	rCloseCommentTag = regexp.MustCompile(`-?-?~?\}\}$`)
	rOpenAmp         = regexp.MustCompile(`^\{\{~?&`)
)

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
	case tokenOpenPartialBlock:
		return p.parsePartialBlock()
	case tokenOpenDecoratorBlock:
		return p.parseDecoratorBlock()
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
		lexer.TokenContent, lexer.TokenComment, tokenOpenPartialBlock, tokenOpenDecoratorBlock:
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

// Node types of this package's own for the blocks raymond does not know,
// carried by an *ast.BlockStatement so that whitespace control treats them
// as blocks, as handlebars.js's WhitespaceControl does.
const (
	// nodePartialBlock is {{#> name ctx k=v}}program{{/name}}.
	nodePartialBlock ast.NodeType = 100 + iota
	// nodeDecoratorBlock is {{#*name args}}program{{/name}}.
	nodeDecoratorBlock
)

// partialBlock : openPartialBlock program closeBlock
// openPartialBlock : OPEN_PARTIAL_BLOCK partialName param* hash? CLOSE
func (p *tokParser) parsePartialBlock() *ast.BlockStatement {
	tok := p.shift() // OPEN_PARTIAL_BLOCK

	result := ast.NewBlockStatement(tok.Pos, tok.Line)
	result.NodeType = nodePartialBlock
	result.Expression = p.parseExpression(tok)

	tokClose := p.shift()
	if tokClose.Kind != lexer.TokenClose {
		errExpected(lexer.TokenClose, tokClose)
	}
	result.OpenStrip = ast.NewStrip(tok.Val, tokClose.Val)

	result.Program = p.parseProgram()
	p.parseCloseBlock(result)
	return result
}

// decoratorBlock : OPEN_DECORATOR_BLOCK helperName param* hash? blockParams? CLOSE
// program inverseChain? closeBlock, a block as parseBlock reads it.
func (p *tokParser) parseDecoratorBlock() *ast.BlockStatement {
	result := p.parseBlock()
	result.NodeType = nodeDecoratorBlock
	return result
}
