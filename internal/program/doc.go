// Package program is postroom's template evaluator: handlebars templates,
// parsed with raymond's parser (github.com/aymerick/raymond, v2.0.2) and
// compiled once into a flat, read-only Program of literal bytes and value
// and block instructions, which renders one recipient's parameters by
// appending to a reused buffer.
//
// handlebars.js 4.7 (default options: no compat, no strict) is the
// reference for what a template means: for every template Compile accepts,
// Append in HTML mode gives byte for byte what handlebars.js gives with
// the parameters as its context, except for the differences listed below.
// TestHandlebarsJS checks a corpus (the handlebars.js spec cases raymond
// ports, mustache's spec, email templates, partials) and FuzzHandlebarsJS
// random templates against handlebars.js itself, run by node; a template
// handlebars.js would render differently is refused at compile time with
// an *Error saying why. raymond stays the reference for the parser
// (FuzzParseEquivalence) and, where raymond and handlebars.js agree, for
// rendering (FuzzDifferential).
//
// # What it owns
//
// The template language, from source to bytes, and nothing else: no MIME,
// no mail, no transport. By file: lexer.go turns the source into raymond's
// tokens; parse.go, parser.go and whitespace.go are raymond's parser,
// ported to read the tokens from a slice;
// precheck.go checks the source before parsing; compile.go turns the
// tree into a Program; eval.go runs a Program (the per-render state,
// values and blocks), with each.go for iteration and paths.go for path
// resolution; value.go tells truthiness and kinds, print.go prints values,
// fields.go finds fields; object.go is Object, a JSON object that keeps
// its keys' order, and decodevalue.go DecodeValue and DecodeMap, which
// decode parameters into it;
// helpers.go holds the helper table and postroom's own helpers, custom.go
// the caller's own (Options.Helpers); partial.go and partial_eval.go
// compile and render partials; program.go the exported Program, Options,
// Data and errors.
//
// It imports the standard library and raymond's lexer and ast packages,
// never raymond's root package or its parser package (whose goroutine it
// avoids, see the QUIRK below), and never the rest of postroom: postroom
// imports it, not the other way round. Only its tests import raymond's
// root and parser packages, as the reference, and internal/testkit/hbsjs.
//
// # Language
//
// Content, comments, whitespace control (~) and standalone lines as
// handlebars.js treats them. A backslash before a mustache makes it
// literal text: \{{x}} renders {{x}} (and \{{{x}}} renders {{{x}}});
// \\{{x}} renders a backslash followed by the value of x.
//
// Mustaches {{x}} (HTML-escaped in HTML mode as handlebars.js escapes: &
// < > " ' ` = become &amp; &lt; &gt; &quot; &#x27; &#x60; &#x3D;), {{{x}}}
// and {{&x}} (raw). Paths x, x.y.z, this, this.x, ./x, ../x (the context
// before the current one), @root.x, [weird key] and [0] segments, data
// variables @index, @key (the index over an array), @first, @last and
// @../index. A path is looked up in the current context only, never in
// its parents (write ../x for that); each segment is an own property of
// the value before it: a map key, a struct field, an array index (in its
// canonical form: 1, not 01) or length, a string's character or length
// (in UTF-16 code units, as JavaScript counts). A segment of nothing is
// nothing. A literal in helper position ({{"x"}}, {{1}}) reads that field
// of the current context. A block parameter hides the context's field of
// the same name, bound or not.
//
// Blocks: {{#if x}}, {{#unless x}} (with includeZero=true, under which 0
// is true), {{#each x}}, {{#with x}}, {{#equal a b}}, each with {{else}}
// or {{^}}, chained {{else if c}}, block parameters on each and with
// ({{#each items as |item i|}}), sections on a plain path ({{#items}}: nil
// and false render the inverse, true the block, an array each element or
// the inverse when empty, any other value, "" and 0 included, the block in
// that context), inverse sections {{^x}}...{{/x}} (rendered for nil, false
// and empty arrays) and raw blocks {{{{x}}}}...{{{{/x}}}}. Truthiness is
// handlebars.js's {{#if}}: nil, false, 0, NaN, "" and empty arrays are
// false; an empty object is true. {{#with}} renders 0 too. {{#each}} over
// anything but an array, an object (*Object), a map or a struct renders
// the inverse. It visits an *Object's keys in JavaScript's property order,
// as handlebars.js does: those that are array indexes (0, 1, 10; not 01
// or -1) first, in numeric order, then the others in the order the JSON
// gave them; a Go map's the same way but with the others sorted (a Go map
// has no order); the root context's as handlebars.js visits
// Object.assign({}, globals, params) (see Data.ParamsOrder); a
// struct's fields in their order.
// A block that changes the context starts a new level for ../ only when
// the new context is not == the current one (JavaScript's loose equality),
// as in handlebars.js.
//
// Helpers, with arguments as values (strings, numbers, true, false) or
// paths or subexpressions (helper a b): lookup obj field (the field's
// value, obj itself when obj is falsy), log x... (to Options.Log), and
// postroom's own upper, lower, title, default v fallback, eq, ne, gt, lt,
// and, or, not, length, url, striptags and date v [layout] (see the
// functions of the same names). postroom's own helpers may also open a
// block, as in {{#eq a b}}yes{{else}}no{{/eq}}: the block renders when the
// value is truthy, else the inverse. A helper's value is escaped like any
// value. The name of one of postroom's own helpers used with no arguments
// and no hash ({{title}}, {{#url}}) is a parameter: handlebars.js has no
// such helpers.
//
// The caller's own helpers (Options.Helpers, custom.go) are bound when a
// template is compiled: a registered name in helper position is a call of
// it, even with no arguments, and Compile checks its arity; its error or
// panic is a RenderError, a Raw value is written unescaped, and a block
// helper renders its block through HelperCall.Fn.
//
// Partials as handlebars.js 4.7 has them: {{> name}}, with a
// context argument and a hash ({{> name ctx k=v}}: the context extended
// with the hash), the indentation of a standalone partial prefixed to every
// line it renders, partial blocks ({{#> layout}}...{{/layout}}, rendered
// by {{> @partial-block}}, or in place of a missing partial) and inline
// partials ({{#*inline "x"}}...{{/inline}}, in scope for the block that
// defines them and the partials it calls, over the table's). A hash
// extends the context in handlebars.js's order: the context's keys as
// {{#each}} visits them (a string's characters and an array's elements by
// index), then the hash's new keys, last to first.
// @partial-block as the argument of if, unless, with and each is what
// those helpers get when they call its function: the block rendered with
// no context and an empty data frame (absent when no partial block is
// being rendered), so that {{#if @partial-block}} is true when a block
// was given and renders something (handlebars.js's regression test
// GH-1341). A Program
// names its partials (Partials) and never holds them: each render finds
// them in Data.Partials, the call's table, so a Program may be cached by
// its source. A partial sees its context alone (../ finds nothing above
// it, the caller's block parameters are out of scope) and the caller's
// data variables; partial calls nest at most MaxPartialNesting deep.
//
// Data is what DecodeValue produces (objects as *Object in their order,
// arrays as []any, numbers as json.Number), what encoding/json produces
// (maps, numbers as float64 or json.Number), or other Go values read by
// reflection. DecodeValue refuses a number beyond float64's range (a
// *NumberRangeError), where JSON.parse would give Infinity: 1e308,
// -1.7976931348623157e308 and any integer of up to 308 digits are
// accepted, 1e309 and a 310-digit integer refused; one bound for both
// forms, on the value. A
// struct's fields are found by the names encoding/json gives them, so that
// a struct renders as its JSON round trip would: the name in the json tag
// (options such as omitempty play no part in the lookup), else the
// field's own name, exactly (FirstName, not firstName); fields tagged
// json:"-" and unexported fields are absent; the fields of an embedded
// struct are promoted, with encoding/json's rules for fields of the same
// name. {{#each}} over a struct visits those fields in their order, @key
// being the name.
//
// Values print as JavaScript's String(v): strings as they are, numbers as
// JavaScript prints them (0.1, 1e-7, 1e+21, 0 for -0) except integers
// (below), booleans as true and false, nil and absent values as nothing,
// arrays as their elements joined with commas (nil elements as nothing,
// nested arrays flattened), maps and structs as [object Object], a
// time.Time as encoding/json writes it.
//
// # Differences from handlebars.js
//
// Deliberate, each for a reason:
//
//   - Integers print exactly as given: a json.Number written as an integer
//     and Go's int64 and uint64 keep every digit (an order id
//     9007199254740993 stays ...993; JavaScript rounds it to ...992, and
//     prints integers of 1e21 and more in exponent form). A mail must not
//     carry a number its sender did not send.
//   - Text mode (subjects, text bodies, headers) never escapes: escaping is
//     for HTML; handlebars.js has one mode.
//   - {{#each}} over a Go map built in Go visits the keys that are not
//     integer-like in sorted order: a Go map has no order. Decoded objects
//     (*Object) keep theirs, and the root context follows
//     Data.ParamsOrder and Data.GlobalsOrder.
//   - postroom's own helpers (upper ... date) and raymond's equal exist;
//     handlebars.js fails with "Missing helper" on them.
//   - {{log}} calls Options.Log (with no arguments for {{log}} alone),
//     never a console; its hash (level=) is evaluated and ignored.
//   - A raw mustache at the start of a template or block followed by
//     another or by a block ({{{a}}}{{{b}}}) prints each value;
//     handlebars.js's compiled code joins them with JavaScript's + (and a
//     block whose output is one raw mustache returns the value itself), so
//     that numbers and booleans add up (3 and 3 print 6, true and 3 print
//     4), a bug of handlebars.js.
//   - Methods and func values in the data are never called; printing a
//     func or a chan, or an array nested deeper than 64 levels (a cyclic
//     slice), is a render error.
//
// Refused at compile time, each an *Error with its position, where
// handlebars.js would fail or where raymond's lexer or parser reads the
// source differently from handlebars.js's:
//
//   - dynamic partials ({{> (expr)}}), partials with two context
//     arguments, and decorators other than inline ({{*x}}, {{#*x}});
//   - a mustache, block or subexpression with arguments or a hash whose
//     name is not a helper (handlebars.js fails when rendering it, and not
//     at all in a branch not taken); if, unless, each and with with other
//     than one argument and lookup with other than two (handlebars.js
//     throws when it renders one, again only in a branch taken); if,
//     unless, each and with outside block position, lookup and log as
//     blocks, equal outside block position; postroom's own helpers and the
//     caller's with the wrong number of arguments (handlebars.js has no
//     such check: it calls a JavaScript helper with the arguments given,
//     its options object after them);
//   - @partial-block anywhere but as the argument of if, unless, with and
//     each (and in {{> @partial-block}}): printed ({{@partial-block}}, which
//     handlebars.js calls with its options object as the context), as a
//     section ({{#@partial-block}}, rendered with the function as this), as
//     another helper's argument or a partial's context or hash value (the
//     function itself), with a property (@partial-block.length) or a depth
//     (@../partial-block);
//   - a subexpression with no arguments ((name)): handlebars.js calls a
//     helper of that name or renders nothing;
//   - block parameters on anything but {{#each}} and {{#with}}
//     (handlebars.js fails when rendering);
//   - a data variable without a name ({{@.}}, {{@this}}), or named like
//     one of handlebars.js's helpers ({{@if}}: handlebars.js calls it);
//   - a NUL byte, white space other than space, tab and newline inside a
//     name, a name or literal followed by a character handlebars.js does
//     not allow there ({{#each@x}}, {{+1}}), {{else}} glued to what
//     follows ({{else0}}), {{{{ inside a raw block, and \{{ right before
//     {{: raymond's lexer reads these differently;
//   - a block never closed, or closed by another name: reported at the
//     opening tag, or at the closing one.
//
// # Differences from raymond
//
// Where raymond's Exec differs from handlebars.js, this package follows
// handlebars.js: raymond looks a name missing from the current context up
// in the parents, treats {} as false, ignores includeZero, returns lookup's
// value as a string, prints numbers with strconv's 'f' format, arrays
// concatenated and maps with fmt, visits map keys in Go's random order,
// lets @x fall back to x, resolves a path in an array context in each
// element, escapes ' as &apos; and leaves ` and = alone, strips blank
// content after a standalone tag followed by a sibling at the root, leaves
// \v and Unicode's spaces when stripping (~), and calls methods in the
// data. FuzzDifferential compares with raymond only where none of these
// arise (raymondAgrees).
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
// Paths are split at compile time; lookups in *Object (a scan up to eight
// keys, an index beyond), map[string]any, []any and the other types
// encoding/json produces take a type switch, not reflection;
// escaping appends straight into the output; per-render stacks come from a
// sync.Pool. Rendering the shared transactional workload (html, text and
// subject) allocates nothing and is over 20 times faster than raymond's
// Exec (BenchmarkRender).
package program
