package postroom_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// The README's newcomer path, checked as written: every ```go block of
// README.md and of docs/*.md is compiled, and the tour's snippet is run on
// the tour's JSON body, its results compared with those the README
// documents.
//
// A block that starts with "package" is a complete file and is built as
// its own program. Any other block is a fragment: it becomes the body of a
// function whose parameters are the variables the README's prose takes as
// given (ctx, body), with the imports its package names need, so the
// README shows no boilerplate. The fragment's lines keep their README line
// numbers (//line), so a compile error points into README.md.

// readmeParams are the variables a fragment may use without declaring them
// (and must not redeclare): the parameters of every fragment's function.
const readmeParams = "ctx context.Context, body []byte"

// readmeImports are the packages a fragment may name without importing.
var readmeImports = map[string]string{
	"postroom":      "github.com/postroom/postroom",
	"transport":     "github.com/postroom/postroom/transport",
	"templatestore": "github.com/postroom/postroom/templatestore",
	"preview":       "github.com/postroom/postroom/preview",
	"httpapi":       "github.com/postroom/postroom/httpapi",
	"outbox":        "github.com/postroom/postroom/outbox",
	"suppression":   "github.com/postroom/postroom/suppression",
	"events":        "github.com/postroom/postroom/events",
	"inbound":       "github.com/postroom/postroom/inbound",
	"unsubscribe":   "github.com/postroom/postroom/unsubscribe",
	"bounce":        "github.com/postroom/postroom/bounce",
	"net":           "net",
	"pgx":           "github.com/jackc/pgx/v5",
	"pgxpool":       "github.com/jackc/pgx/v5/pgxpool",
	"river":         "github.com/riverqueue/river",
	"riverpgxv5":    "github.com/riverqueue/river/riverdriver/riverpgxv5",
	"riversqlite":   "github.com/riverqueue/river/riverdriver/riversqlite",
	"sqldb":         "github.com/postroom/postroom/sqldb",
	"pgxdb":         "github.com/postroom/postroom/sqldb/pgxdb",
	"sqlitedb":      "github.com/postroom/postroom/sqldb/sqlitedb",
	"idempotency":   "github.com/postroom/postroom/idempotency",
	"console":       "github.com/postroom/postroom/console",
	"sql":           "database/sql",
	"context":       "context",
	"crypto":        "crypto",
	"rand":          "crypto/rand",
	"x509":          "crypto/x509",
	"pem":           "encoding/pem",
	"errors":        "errors",
	"fmt":           "fmt",
	"http":          "net/http",
	"json":          "encoding/json",
	"log":           "log",
	"os":            "os",
	"slog":          "log/slog",
	"strings":       "strings",
	"time":          "time",
}

// readmeBlock is a fenced code block of README.md or of a docs/*.md file.
type readmeBlock struct {
	file    string // README.md or docs/NAME.md
	lang    string
	text    string
	line    int    // of the block's first line of code, 1-based
	section string // the nearest "## " heading above it
}

// readmeBlocks returns the fenced code blocks of README.md.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	return mdBlocks(t, "README.md")
}

// docsBlocks returns the fenced code blocks of every docs/*.md file.
func docsBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	for _, f := range files {
		blocks = append(blocks, mdBlocks(t, filepath.ToSlash(f))...)
	}
	return blocks
}

// mdBlocks returns the fenced code blocks of the Markdown file named.
func mdBlocks(t *testing.T, file string) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(file))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case strings.HasPrefix(line, "```"):
			cur = &readmeBlock{file: file, lang: strings.TrimPrefix(line, "```"), line: n + 1, section: section}
		case strings.HasPrefix(line, "## "):
			section = strings.TrimPrefix(line, "## ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: a code block is not closed", file, cur.line-1)
	}
	return blocks
}

// fragmentFunc returns the Go source of a function named name whose body
// is the fragment b, and the imports it needs. At its end the function
// stores each variable the fragment declares at its top level into
// vars[name], which also keeps the compiler from refusing a variable the
// snippet declares and leaves for the reader to use.
func fragmentFunc(t *testing.T, name string, b readmeBlock) (src string, imports []string) {
	t.Helper()
	wrapped := "package p\n\nfunc f() error {\n" + b.text + "return nil\n}\n"
	f, err := parser.ParseFile(token.NewFileSet(), "", wrapped, 0)
	if err != nil {
		t.Fatalf("%s:%d: the Go block does not parse as a function body: %v", b.file, b.line, err)
	}
	imports = []string{"context"} // of readmeParams
	for _, id := range f.Unresolved {
		if path, ok := readmeImports[id.Name]; ok && types.Universe.Lookup(id.Name) == nil {
			imports = append(imports, path)
		} // else a universe name, a parameter, or undefined (the build says where)
	}
	var declared []string
	for _, stmt := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch s := stmt.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, e := range s.Lhs {
					declared = append(declared, e.(*ast.Ident).Name)
				}
			}
		case *ast.DeclStmt:
			if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						declared = append(declared, id.Name)
					}
				}
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "func %s(%s, vars map[string]any) error {\n", name, readmeParams)
	fmt.Fprintf(&sb, "//line %s:%d\n%s", b.file, b.line, b.text)
	sb.WriteString("//line readme_fragments.go:1\n")
	for _, v := range slices.Compact(slices.Sorted(slices.Values(declared))) {
		if v != "_" {
			fmt.Fprintf(&sb, "\tvars[%q] = %s\n", v, v)
		}
	}
	sb.WriteString("\treturn nil\n}\n")
	return sb.String(), imports
}

// tourMain runs the tour's fragment, the function tour(ctx, body, vars),
// on the body in the file named by its argument, and prints the results
// as JSON; a call-level error fails it.
const tourMain = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/postroom/postroom"
)

func main() {
	body, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	vars := map[string]any{}
	if err := tour(context.Background(), body, vars); err != nil {
		fail(err)
	}
	if err, _ := vars["err"].(error); err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(vars["results"].([]postroom.Result)); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
`

// TestReadme builds every Go block of README.md and docs/*.md and runs
// the tour.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the README's programs")
	}
	// Its time goes to programs it runs: it waits beside the package's
	// other tests that run programs.
	t.Parallel()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the README's programs")
	}
	blocks := readmeBlocks(t)

	// The tour: its first Go block, its first JSON block (the body) and
	// its second (the results).
	var tourGo, tourBody, tourResults *readmeBlock
	for i := range blocks {
		b := &blocks[i]
		if b.section != "A short tour" {
			continue
		}
		switch {
		case b.lang == "go" && tourGo == nil:
			tourGo = b
		case b.lang == "json" && tourBody == nil:
			tourBody = b
		case b.lang == "json" && tourResults == nil:
			tourResults = b
		}
	}
	if tourGo == nil || tourResults == nil {
		t.Fatal(`README.md: "## A short tour" lacks its Go block, or its two JSON blocks (body, results)`)
	}

	// The programs are built inside this module without writing into it:
	// their files are laid over a folder that does not exist.
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	add := func(pkg, name, src string) {
		t.Helper()
		path := filepath.Join(tmp, pkg+"_"+name)
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(root, "readme_programs", pkg, name)] = path
	}
	pkgs := []string{"./readme_programs/fragments"}
	add("fragments", "main.go", tourMain)
	for i, b := range append(blocks, docsBlocks(t)...) {
		switch {
		case b.lang != "go":
		case strings.HasPrefix(b.text, "package "):
			pkg := fmt.Sprintf("program%d", i)
			add(pkg, "main.go", fmt.Sprintf("//line %s:%d\n%s", b.file, b.line, b.text))
			pkgs = append(pkgs, "./readme_programs/"+pkg)
		default:
			name := fmt.Sprintf("fragment%d", i)
			if b.file == tourGo.file && b.line == tourGo.line {
				name = "tour"
			}
			fn, imports := fragmentFunc(t, name, b)
			var src strings.Builder
			src.WriteString("package main\n\nimport (\n")
			for _, path := range slices.Compact(slices.Sorted(slices.Values(imports))) {
				fmt.Fprintf(&src, "\t%q\n", path)
			}
			src.WriteString(")\n\n" + fn)
			add("fragments", name+".go", src.String())
		}
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	data, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlayFile, data, 0o600); err != nil {
		t.Fatal(err)
	}

	// Build as this test was built, so that the build cache serves the
	// module's packages.
	args := []string{"build", "-overlay", overlayFile, "-o", tmp + string(filepath.Separator)}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "-race" && s.Value == "true" {
				args = append(args, "-race")
			}
		}
	}
	build := exec.CommandContext(t.Context(), gocmd, append(args, pkgs...)...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the Go blocks of README.md and docs/ do not build: %v\n%s", err, out)
	}

	bodyFile := filepath.Join(tmp, "body.json")
	if err := os.WriteFile(bodyFile, []byte(tourBody.text), 0o600); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(t.Context(), filepath.Join(tmp, "fragments"), bodyFile)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("README.md:%d: the tour on the body of README.md:%d fails: %v\n%s", tourGo.line, tourBody.line, err, stderr.Bytes())
	}
	var got, want []map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the tour printed %q: %v", out, err)
	}
	if err := json.Unmarshal([]byte(tourResults.text), &want); err != nil {
		t.Fatalf("README.md:%d: the documented results are not a JSON list of results: %v", tourResults.line, err)
	}
	if len(got) != len(want) {
		t.Fatalf("README.md:%d documents %d results; the tour returns %d: %s", tourResults.line, len(want), len(got), out)
	}
	sendID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for i := range want {
		g, w := got[i], want[i]
		if g["email"] != w["email"] || g["status"] != w["status"] || g["reason"] != w["reason"] ||
			!sendID.MatchString(g["send_id"]) || !sendID.MatchString(w["send_id"]) {
			t.Errorf("README.md:%d: result %d documented as %v; the tour returns %v", tourResults.line, i, w, g)
		}
	}
}
