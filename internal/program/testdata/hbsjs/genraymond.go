//go:build ignore

// genraymond writes raymond.json: the handlebars.js spec cases that
// raymond's handlebars/*_test.go ports (the raymond version in go.mod),
// those with no helpers, partials or private data and whose data survive a
// JSON round trip unchanged. It copies those test files into a temporary
// module beside a test that dumps their tables. Run from this directory:
//
//	go run genraymond.go
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const dump = `package handlebars

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

type corpusCase struct {
	Name     string         ` + "`json:\"name\"`" + `
	Template string         ` + "`json:\"template\"`" + `
	Data     any            ` + "`json:\"data\"`" + `
}

// plain reports whether v holds only maps, slices, strings, numbers,
// booleans and nils: what JSON represents as it is (a struct's fields
// would change names).
func plain(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Invalid, reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return true
	case reflect.Interface, reflect.Pointer:
		return v.IsNil() || plain(v.Elem())
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if !plain(v.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return false
		}
		it := v.MapRange()
		for it.Next() {
			if !plain(it.Value()) {
				return false
			}
		}
		return true
	}
	return false
}

func TestDumpCorpus(t *testing.T) {
	tables := []struct {
		name  string
		tests []Test
	}{
		{"basic", basicTests}, {"blocks", blocksTests}, {"builtins", builtinsTests},
		{"data", dataTests}, {"helpers", helpersTests}, {"subexpressions", subexpressionsTests},
		{"whitespace", whitespaceControlTests},
	}
	var out []corpusCase
	for _, tab := range tables {
		for _, tc := range tab.tests {
			if len(tc.helpers) > 0 || len(tc.partials) > 0 || tc.privData != nil {
				continue
			}
			b, err := json.Marshal(tc.data)
			if err != nil {
				continue
			}
			var back any
			if json.Unmarshal(b, &back) != nil || !plain(reflect.ValueOf(tc.data)) {
				continue
			}
			out = append(out, corpusCase{Name: tab.name + ": " + tc.name, Template: tc.input, Data: back})
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("CORPUS_OUT"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genraymond:", err)
		os.Exit(1)
	}
}

func run() error {
	modDir, err := output("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aymerick/raymond")
	if err != nil {
		return err
	}
	version, err := output("go", "list", "-m", "-f", "{{.Version}}", "github.com/aymerick/raymond")
	if err != nil {
		return err
	}
	root, err := output("go", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "genraymond")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	files, err := filepath.Glob(filepath.Join(modDir, "handlebars", "*_test.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(f)), b, 0o644); err != nil {
			return err
		}
	}
	gomod := "module corpus\n\ngo 1.26\n\nrequire github.com/aymerick/raymond " + version + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.sum"), sum, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "dump_test.go"), []byte(dump), 0o644); err != nil {
		return err
	}
	out, err := filepath.Abs("raymond.json")
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "test", "-run", "^TestDumpCorpus$", ".")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "CORPUS_OUT="+out, "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

func output(name string, args ...string) (string, error) {
	b, err := exec.Command(name, args...).Output()
	return strings.TrimSpace(string(b)), err
}
