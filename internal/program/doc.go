// Package program is postroom's template evaluator: handlebars templates,
// parsed with raymond's parser (github.com/aymerick/raymond, v2.0.2) and
// compiled once into a flat, read-only Program of literal bytes and value
// and block instructions, which renders one recipient's parameters by
// appending to a reused buffer.
//
// raymond is the reference: for every template Compile accepts, Append in
// HTML mode gives byte for byte what raymond's Exec gives with the same
// helpers registered and the parameters merged into one map, except for the
// differences listed below. FuzzDifferential checks this.
//
// # What it owns
//
// The template language, from source to bytes, and nothing else: no MIME,
// no mail, no transport. By file: lexer.go turns the source into raymond's
// tokens; parse.go, parser.go and whitespace.go are raymond's parser,
// ported to read the tokens from a slice;
// compile.go turns its tree into a Program; eval.go runs a Program (the
// per-render state, values and blocks), with each.go for iteration and
// paths.go for path resolution; value.go prints values, tells truthiness
// and finds fields; helpers.go holds the helper table and postroom's own
// helpers, custom.go the caller's own (Options.Helpers); partial.go and
// partial_eval.go compile and render partials; program.go the exported
// Program, Options, Data and errors.
//
// It imports the standard library and raymond's lexer and ast packages,
// never raymond's root package or its parser package (whose goroutine it
// avoids, see the QUIRK below), and never the rest of postroom: postroom
// imports it, not the other way round. Only its tests import raymond's
// root and parser packages, as the reference.
//
// # Language
//
// Content, comments, whitespace control (~) and standalone lines as raymond
// parses them. A backslash before a mustache makes it literal text: \{{x}}
// renders {{x}} (and \{{{x}}} renders {{{x}}}); \\{{x}} renders a backslash
// followed by the value of x.
//
// Mustaches {{x}} (HTML-escaped in HTML mode), {{{x}}} and {{&x}} (raw).
// Paths x, x.y.z, this, this.x, ./x, ../x (parent context), @root.x,
// [weird key] and [0] segments (a number indexes an array), data variables
// @index, @first, @last, @key and @../index. As raymond does, a path whose
// first segment is absent from the current context is looked up in the
// parent contexts; in a context that is an array, a path collects the
// values found in each element; @x that is not set falls back to x; a
// literal in helper position ({{"x"}}, {{1}}) reads that field of the
// current context.
//
// Blocks: {{#if x}}, {{#unless x}} (with includeZero=true), {{#each x}},
// {{#with x}}, {{#equal a b}}, each with {{else}} or {{^}}, chained
// {{else if c}}, block parameters ({{#each items as |item i|}}), inverse
// sections {{^x}}...{{/x}}, sections on a plain path ({{#items}}: an array
// iterates, another truthy value becomes the context) and raw blocks
// {{{{x}}}}...{{{{/x}}}} (a section whose content is not parsed). Truthiness
// is raymond's: nil, false, 0, "" and empty arrays and maps are false.
//
// Helpers, with raymond's arguments as values (strings, int or float64
// numbers, true, false) or paths or subexpressions (helper a b):
// lookup obj field, log x (to Options.Log), and postroom's own upper, lower,
// title, default v fallback, eq, ne, gt, lt, and, or, not, length, url,
// striptags and date v [layout] (see the functions of the same names).
// postroom's own helpers may also open a block, as in
// {{#eq a b}}yes{{else}}no{{/eq}}: the block renders when the value is
// truthy, else the inverse. A helper's value is escaped like any value.
//
// The caller's own helpers (Options.Helpers, custom.go) are bound when a
// template is compiled: a registered name in helper position is a call of
// it, even with no arguments, and Compile checks its arity; its error or
// panic is a RenderError, a Raw value is written unescaped, and a block
// helper renders its block through HelperCall.Fn.
//
// Partials follow handlebars.js 4.7, not raymond: {{> name}}, with a
// context argument and a hash ({{> name ctx k=v}}: the context extended
// with the hash), the indentation of a standalone partial prefixed to every
// line it renders, partial blocks ({{#> layout}}...{{/layout}}, rendered
// by {{> @partial-block}}, or in place of a missing partial) and inline
// partials ({{#*inline "x"}}...{{/inline}}, in scope for the block that
// defines them and the partials it calls, over the table's). A Program
// names its partials (Partials) and never holds them: each render finds
// them in Data.Partials, the call's table, so a Program may be cached by
// its source. A partial sees its context alone (../ finds nothing above
// it, the caller's block parameters are out of scope) and the caller's
// data variables; partial calls nest at most MaxPartialNesting deep.
//
// Data is what encoding/json produces, or other Go values read by
// reflection. A struct's fields are found by the names encoding/json gives
// them, so that a struct renders as its JSON round trip would: the name in
// the json tag (options such as omitempty play no part in the lookup),
// else the field's own name, exactly (FirstName, not firstName); fields
// tagged json:"-" and unexported fields are absent; the fields of an
// embedded struct are promoted, with encoding/json's rules for fields of
// the same name. {{#each}} over a struct visits those fields in their
// order, @key being the name.
//
// Values print as raymond prints them: strings as they are, numbers as
// strconv.FormatFloat(f, 'f', -1, 64) (a JSON 3 is 3, 2.5 is 2.5), integers
// in decimal, booleans as true and false, nil and absent values as nothing,
// arrays as the concatenation of their elements, maps and structs with
// fmt's %s.
//
// # Differences from raymond
//
//   - {{#each}} over a map visits its keys in sorted order (raymond: Go's
//     random map order, different from run to run).
//   - Text mode never escapes; raymond always escapes {{x}}.
//   - Refused at compile time, each an *Error with its position: dynamic
//     partials ({{> (expr)}}) and partials with two context arguments;
//     decorators other than inline ({{*x}}, {{#*x}}); a mustache, block or subexpression with
//     arguments or a hash whose name is not a helper; a helper called with
//     the wrong number of arguments, including a helper's name alone
//     ({{title}}: write {{this.title}} for a parameter of that name), which
//     raymond reports only when rendering, or not at all in a branch not
//     taken ({{equal A A A}}, raymond issue #34); if, unless, each, with and
//     equal outside block position, where raymond's implementation renders
//     the enclosing block again, endlessly; lookup and log as blocks; a data
//     variable without a name ({{@.}}, {{@this}}), on which raymond panics.
//   - Methods and func values in the data are never called (raymond calls
//     them); printing a func or a chan, or a value nested deeper than 64
//     levels (a cyclic map), is a render error.
//   - A negative index (lookup x -1, x.[-1]) is absent; raymond panics.
//   - {{log x}} calls Options.Log, never the log package.
//   - Struct fields are found by their encoding/json names (see above);
//     raymond finds them by the name with its first letter upper-cased
//     ({{firstName}} finds FirstName) or by a handlebars tag, and iterates
//     them by Go name.
//
// # Limits
//
// Options.MaxSourceBytes and Options.MaxDepth (nesting of blocks, {{else
// if}} links and subexpressions) are checked before raymond's recursive
// parser runs; nesting is never accepted beyond MaxNesting. Compile takes
// time and memory linear in the source. Each render is bounded by
// Options.MaxOutputBytes and Options.MaxSteps, and the renders with one
// Data together by Data.MaxBytes (the parts of one message); a render
// stops before it appends what would exceed a bound, so it never holds
// much more than the bound. With no bound, a render is bounded only by the
// data (an each over an each over a large array takes quadratic time).
// Compile and Append check their context as they go (Append every 1024
// steps) and stop with its error once it is done. No panic escapes
// Compile or Append.
//
// QUIRK: raymond's ast.PathExpression builds Original with += per segment,
// quadratic in the segments of {{a.b.c...}} or ../../..; parsePath builds
// it once. Runs of content split by comments or \{{ are joined once too.
//
// QUIRK: raymond's parser runs its lexer in a goroutine and abandons it,
// blocked for ever, when it stops at a syntax error before the end of the
// source. Compile does not use it: it lexes the source with a lexer of its
// own (lexer.go), which yields exactly the tokens of raymond's lexer
// (FuzzLexer) in a slice, over 100 times faster and in linear time, and
// parses them with a port of raymond's parser that builds the same tree
// and reports the same errors, so no goroutine runs, whatever the source. Lexical errors, a closing tag or
// {{else x}} with no block open, and nesting beyond MaxDepth are reported
// from the tokens, at their column, before parsing.
//
// # Concurrency
//
// Compile may be called concurrently. A Program is immutable and may be
// rendered by any number of goroutines at once, each with its own Data.
//
// # Speed
//
// Paths are split at compile time; lookups in map[string]any, []any and the
// other types encoding/json produces take a type switch, not reflection;
// escaping appends straight into the output; per-render stacks come from a
// sync.Pool. Rendering the shared transactional workload (html, text and
// subject) allocates nothing and is over 20 times faster than raymond's
// Exec (BenchmarkRender).
package program
