// Derived from github.com/aymerick/raymond/parser (whitespace.go of v2.0.2),
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
	"strings"
	"unicode/utf8"

	"github.com/aymerick/raymond/ast"
)

// Whitespace control, after handlebars.js's
// compiler/whitespace-control.js, as raymond's parser/whitespace.go.

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
	if multiple {
		node.Value = strings.TrimLeftFunc(node.Value, isJSSpaceRune)
	} else {
		node.Value = trimLineStart(node.Value)
	}
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
	if multiple {
		node.Value = strings.TrimRightFunc(node.Value, isJSSpaceRune)
	} else {
		node.Value = strings.TrimRight(node.Value, " \t")
	}
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
	// handlebars.js tests the content as written, before any stripping
	// (raymond tests what is left of it, so that of two standalone tags
	// on consecutive lines the second kept its indentation).
	return spaceRunHasNewline(node.Original, false, i <= 1 && isRoot)
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
	// handlebars.js: the strict form when a sibling follows the content
	// (raymond tests i+2 > len(body), never true, and so strips the space
	// in "{{! c }} {{x}}" at the root).
	return spaceRunHasNewline(node.Original, true, i+2 >= len(body) && isRoot)
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
						partial.Indent = prevContent.Original[len(strings.TrimRight(prevContent.Original, " \t")):]
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

// spaceRunHasNewline reports whether s matches handlebars.js's
// /\r?\n\s*?$/ (leading false) or /^\s*?\r?\n/ (leading true), with
// JavaScript's \s, without a regular expression (most of a compile's time
// went to them): whether the run of white space that ends s, or starts
// it, holds a newline. With all, as /(^|\r?\n)\s*?$/ and
// /^\s*?(\r?\n|$)/, it also holds when that run is the whole of s.
func spaceRunHasNewline(s string, leading, all bool) bool {
	for len(s) > 0 {
		var r rune
		var n int
		if leading {
			if r, n = rune(s[0]), 1; r >= utf8.RuneSelf {
				r, n = utf8.DecodeRuneInString(s)
			}
			s = s[n:]
		} else {
			if r, n = rune(s[len(s)-1]), 1; r >= utf8.RuneSelf {
				r, n = utf8.DecodeLastRuneInString(s)
			}
			s = s[:len(s)-n]
		}
		if r == '\n' {
			return true
		}
		if !isJSSpaceRune(r) {
			return false
		}
	}
	return all
}

// isJSSpaceRune reports whether r is in JavaScript's \s (Go's \s lacks
// \v and the Unicode spaces, which handlebars.js strips).
func isJSSpaceRune(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return 0x2000 <= r && r <= 0x200a
}

// trimLineStart removes what /^[ \t]*\r?\n?/ matches: the rest of a
// standalone tag's line.
func trimLineStart(s string) string {
	s = strings.TrimLeft(s, " \t")
	s = strings.TrimPrefix(s, "\r")
	return strings.TrimPrefix(s, "\n")
}
