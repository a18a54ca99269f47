package templatestore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/internal/testkit/workload"
	"github.com/postroom/postroom/templatestore"
)

// Both stores implement the root's interface.
var (
	_ postroom.TemplateStore = (*templatestore.Memory)(nil)
	_ postroom.TemplateStore = (*templatestore.Dir)(nil)
)

// badIDs are ids no store may accept: each would name a path outside
// the account's folder, an empty name, or characters outside the set.
var badIDs = []struct {
	name, id string
}{
	{"empty", ""},
	{"dot", "."},
	{"dotdot", ".."},
	{"parent", "../x"},
	{"parent_of_parent", "../../etc/passwd"},
	{"slash", "a/b"},
	{"leading_slash", "/etc"},
	{"trailing_slash", "a/"},
	{"backslash", `a\b`},
	{"backslash_parent", `..\x`},
	{"percent_encoded_dotdot", "%2e%2e"},
	{"nul", "a\x00b"},
	{"space", "a b"},
	{"newline", "a\nb"},
	{"non_ascii", "caf\u00e9"},
	{"too_long", strings.Repeat("a", 256)},
}

// stores returns what opens each store under test (in the subtest that
// uses it: an engine missing skips its own), holding the same templates:
// acme/welcome, acme/receipt.txt and other/welcome.
func stores(t *testing.T) map[string]func(t *testing.T) postroom.TemplateStore {
	t.Helper()
	mem := templatestore.NewMemory()
	fsys := fstest.MapFS{}
	for _, tpl := range []struct{ account, id, source string }{
		{"acme", "welcome", "Hello {{name}} from acme"},
		{"acme", "receipt.txt", "Receipt {{number}}"},
		{"other", "welcome", "Hello {{name}} from other"},
		// A file whose path looks like what a traversal would reach.
		{"acme", "secret", "acme secret"},
	} {
		if err := mem.Put(tpl.account, tpl.id, tpl.source); err != nil {
			t.Fatalf("Put(%q, %q): %v", tpl.account, tpl.id, err)
		}
		fsys[tpl.account+"/"+tpl.id] = &fstest.MapFile{Data: []byte(tpl.source), Mode: 0o644}
	}
	// Files outside any account, reachable only by traversal.
	fsys["top"] = &fstest.MapFile{Data: []byte("top level"), Mode: 0o644}
	fsys["%2e%2e"] = &fstest.MapFile{Data: []byte("encoded"), Mode: 0o644}
	all := map[string]func(t *testing.T) postroom.TemplateStore{
		"Memory": func(*testing.T) postroom.TemplateStore { return mem },
		"Dir":    func(*testing.T) postroom.TemplateStore { return templatestore.NewDir(fsys) },
	}
	for _, e := range dbtest.Engines() {
		all["SQL/"+e.Name] = func(t *testing.T) postroom.TemplateStore { return sqlStore(t, e.Open(t)) }
	}
	return all
}

func TestTemplateLookup(t *testing.T) {
	tests := []struct {
		name, account, id string
		want              string
		wantErr           error
	}{
		{name: "found", account: "acme", id: "welcome", want: "Hello {{name}} from acme"},
		{name: "dotted_id", account: "acme", id: "receipt.txt", want: "Receipt {{number}}"},
		{name: "same_id_other_account", account: "other", id: "welcome", want: "Hello {{name}} from other"},
		{name: "missing_template", account: "acme", id: "nope", wantErr: postroom.ErrTemplateNotFound},
		{name: "missing_account", account: "nobody", id: "welcome", wantErr: postroom.ErrTemplateNotFound},
		{name: "other_accounts_template", account: "other", id: "receipt.txt", wantErr: postroom.ErrTemplateNotFound},
		{name: "other_accounts_secret", account: "other", id: "secret", wantErr: postroom.ErrTemplateNotFound},
		{name: "case_differs", account: "ACME", id: "welcome", wantErr: postroom.ErrTemplateNotFound},
	}
	for storeName, open := range stores(t) {
		t.Run(storeName, func(t *testing.T) {
			store := open(t)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					got, err := store.Template(t.Context(), tt.account, tt.id)
					if tt.wantErr != nil {
						if !errors.Is(err, tt.wantErr) {
							t.Fatalf("Template(%q, %q) = %q, %v; want error wrapping %v", tt.account, tt.id, got, err, tt.wantErr)
						}
						if got != "" {
							t.Errorf("Template(%q, %q) returned source %q with its error", tt.account, tt.id, got)
						}
						return
					}
					if err != nil || got != tt.want {
						t.Fatalf("Template(%q, %q) = %q, %v; want %q, nil", tt.account, tt.id, got, err, tt.want)
					}
				})
			}
		})
	}
}

func TestTemplateInvalidIDs(t *testing.T) {
	for storeName, open := range stores(t) {
		t.Run(storeName, func(t *testing.T) {
			store := open(t)
			for _, tt := range badIDs {
				t.Run("template_"+tt.name, func(t *testing.T) {
					got, err := store.Template(t.Context(), "acme", tt.id)
					if !errors.Is(err, templatestore.ErrInvalidID) || !errors.Is(err, postroom.ErrTemplateNotFound) {
						t.Fatalf("Template(acme, %q) = %q, %v; want ErrInvalidID wrapping ErrTemplateNotFound", tt.id, got, err)
					}
				})
				t.Run("account_"+tt.name, func(t *testing.T) {
					got, err := store.Template(t.Context(), tt.id, "welcome")
					if !errors.Is(err, templatestore.ErrInvalidID) || !errors.Is(err, postroom.ErrTemplateNotFound) {
						t.Fatalf("Template(%q, welcome) = %q, %v; want ErrInvalidID wrapping ErrTemplateNotFound", tt.id, got, err)
					}
				})
			}
		})
	}
}

func TestTemplateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for storeName, open := range stores(t) {
		t.Run(storeName, func(t *testing.T) {
			store := open(t)
			got, err := store.Template(ctx, "acme", "welcome")
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Template with canceled ctx = %q, %v; want context.Canceled", got, err)
			}
		})
	}
}

func TestMemoryPutInvalidID(t *testing.T) {
	for _, tt := range badIDs {
		t.Run(tt.name, func(t *testing.T) {
			m := templatestore.NewMemory()
			if err := m.Put("acme", tt.id, "x"); !errors.Is(err, templatestore.ErrInvalidID) {
				t.Errorf("Put(acme, %q) = %v; want ErrInvalidID", tt.id, err)
			}
			if err := m.Put(tt.id, "welcome", "x"); !errors.Is(err, templatestore.ErrInvalidID) {
				t.Errorf("Put(%q, welcome) = %v; want ErrInvalidID", tt.id, err)
			}
		})
	}
}

// TestPutEmptyAccount: a template put under an empty account id (as an
// application under postroom.NoAuth may try) is refused with an error
// that says stored templates need an account, not "template not found".
func TestPutEmptyAccount(t *testing.T) {
	err := templatestore.NewMemory().Put("", "welcome", "x")
	if !errors.Is(err, templatestore.ErrInvalidID) {
		t.Fatalf("Put(\"\", welcome) = %v; want ErrInvalidID", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "not found") || !strings.Contains(msg, "account id is empty") || !strings.Contains(msg, "NoAuth") {
		t.Errorf("Put(\"\", welcome): %q; want it to say that stored templates need an account, also under NoAuth", msg)
	}
}

func TestMemoryPutReplaceDelete(t *testing.T) {
	var m templatestore.Memory // the zero value is ready to use
	steps := []storeStep{
		{name: "before_put", id: "a", missing: true},
		{name: "put", do: func() error { return m.Put("acme", "a", "one") }, id: "a", want: "one"},
		{name: "replace", do: func() error { return m.Put("acme", "a", "two") }, id: "a", want: "two"},
		{name: "put_other_id", do: func() error { return m.Put("acme", "b", "bee") }, id: "a", want: "two"},
		{name: "delete", do: func() error { m.Delete("acme", "a"); return nil }, id: "a", missing: true},
		{name: "other_id_kept", id: "b", want: "bee"},
		{name: "delete_missing", do: func() error { m.Delete("acme", "zzz"); return nil }, id: "b", want: "bee"},
		{name: "delete_other_account", do: func() error { m.Delete("other", "b"); return nil }, id: "b", want: "bee"},
		{name: "empty_source", do: func() error { return m.Put("acme", "empty", "") }, id: "empty", want: ""},
	}
	runStoreSteps(t, &m, steps)
}

// TestMemoryConcurrent runs writers and readers together; with -race it
// checks the locking, and each read must see a whole value.
func TestMemoryConcurrent(t *testing.T) {
	m := templatestore.NewMemory()
	const accounts, rounds = 4, 300
	var wg sync.WaitGroup
	errs := make(chan error, 2*accounts)
	for a := range accounts {
		account := fmt.Sprintf("acct-%d", a)
		wg.Go(func() {
			for i := range rounds {
				id := fmt.Sprintf("t%d", i%7)
				if err := m.Put(account, id, account+"/"+id); err != nil {
					errs <- err
					return
				}
				if i%5 == 0 {
					m.Delete(account, id)
				}
			}
		})
		wg.Go(func() {
			for i := range rounds {
				id := fmt.Sprintf("t%d", i%7)
				got, err := m.Template(t.Context(), account, id)
				switch {
				case errors.Is(err, postroom.ErrTemplateNotFound):
				case err != nil:
					errs <- err
					return
				case got != account+"/"+id:
					errs <- fmt.Errorf("Template(%q, %q) = %q, from another account or torn", account, id, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestDirFileKinds(t *testing.T) {
	fsys := fstest.MapFS{
		"acme/small":          {Data: []byte("12345678"), Mode: 0o644},
		"acme/big":            {Data: []byte(strings.Repeat("x", 9)), Mode: 0o644},
		"acme/folder/inside":  {Data: []byte("x"), Mode: 0o644},
		"acme/device":         {Data: []byte("x"), Mode: fs.ModeDevice | 0o644},
		"acme/pipe":           {Data: []byte("x"), Mode: fs.ModeNamedPipe | 0o644},
		"acme/default_limit":  {Data: make([]byte, templatestore.DefaultMaxBytes), Mode: 0o644},
		"acme/over_default":   {Data: make([]byte, templatestore.DefaultMaxBytes+1), Mode: 0o644},
		"acme/empty_template": {Data: nil, Mode: 0o644},
	}
	tests := []struct {
		name     string
		maxBytes int64
		id       string
		wantLen  int
		wantErr  error
	}{
		{name: "at_limit", maxBytes: 8, id: "small", wantLen: 8},
		{name: "over_limit", maxBytes: 8, id: "big", wantErr: templatestore.ErrTooLarge},
		{name: "no_limit", maxBytes: -1, id: "over_default", wantLen: templatestore.DefaultMaxBytes + 1},
		{name: "default_limit_reached", id: "default_limit", wantLen: templatestore.DefaultMaxBytes},
		{name: "default_limit_exceeded", id: "over_default", wantErr: templatestore.ErrTooLarge},
		{name: "empty_file", id: "empty_template", wantLen: 0},
		{name: "folder", id: "folder", wantErr: postroom.ErrTemplateNotFound},
		{name: "device", id: "device", wantErr: postroom.ErrTemplateNotFound},
		{name: "pipe", id: "pipe", wantErr: postroom.ErrTemplateNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := templatestore.NewDir(fsys)
			d.MaxBytes = tt.maxBytes
			got, err := d.Template(t.Context(), "acme", tt.id)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Template(acme, %q) = %d bytes, %v; want %v", tt.id, len(got), err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != tt.wantLen {
				t.Fatalf("Template(acme, %q) = %d bytes, %v; want %d bytes", tt.id, len(got), err, tt.wantLen)
			}
		})
	}
}

// TestDirOS reads through the operating system: os.DirFS follows a
// symbolic link out of the folder, while the FS of an os.Root refuses it.
func TestDirOS(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "templates")
	outside := filepath.Join(base, "outside.txt")
	writeFile(t, outside, "outside the store")
	writeFile(t, filepath.Join(root, "acme", "welcome"), "Hello\r\n{{name}}\r\n")
	writeFile(t, filepath.Join(root, "other", "welcome"), "other account")
	if err := os.Symlink(outside, filepath.Join(root, "acme", "escape")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })

	tests := []struct {
		name    string
		fsys    fs.FS
		id      string
		want    string
		wantErr error // nil: success unless fail
		fail    bool  // an error that wraps no sentinel
	}{
		{name: "dirfs_regular", fsys: os.DirFS(root), id: "welcome", want: "Hello\r\n{{name}}\r\n"},
		{name: "root_regular", fsys: r.FS(), id: "welcome", want: "Hello\r\n{{name}}\r\n"},
		{name: "dirfs_missing", fsys: os.DirFS(root), id: "nope", wantErr: postroom.ErrTemplateNotFound},
		{name: "dirfs_traversal", fsys: os.DirFS(root), id: "../other/welcome", wantErr: postroom.ErrTemplateNotFound},
		{name: "dirfs_follows_symlink", fsys: os.DirFS(root), id: "escape", want: "outside the store"},
		{name: "root_refuses_escaping_symlink", fsys: r.FS(), id: "escape", fail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := templatestore.NewDir(tt.fsys).Template(t.Context(), "acme", tt.id)
			if tt.fail {
				if err == nil || got != "" {
					t.Fatalf("Template(acme, %q) = %q, %v; want an error and no source", tt.id, got, err)
				}
				return
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Template(acme, %q) = %q, %v; want %v", tt.id, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Template(acme, %q) = %q, %v; want %q", tt.id, got, err, tt.want)
			}
		})
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// workloadHTML returns the html body of the shared transactional workload,
// a realistic template source.
func workloadHTML(b *testing.B) string {
	b.Helper()
	var call postroom.Call
	if err := json.Unmarshal(workload.Read(b), &call); err != nil {
		b.Fatal(err)
	}
	return call.Message.HTML
}

func BenchmarkTemplate(b *testing.B) {
	source := workloadHTML(b)
	mem := templatestore.NewMemory()
	if err := mem.Put("bench", "order.html", source); err != nil {
		b.Fatal(err)
	}
	osDir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(osDir, "bench"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(osDir, "bench", "order.html"), []byte(source), 0o644); err != nil {
		b.Fatal(err)
	}
	benches := []struct {
		name  string
		store postroom.TemplateStore
	}{
		{"Memory", mem},
		{"Dir/MapFS", templatestore.NewDir(fstest.MapFS{"bench/order.html": {Data: []byte(source)}})},
		{"Dir/DirFS", templatestore.NewDir(os.DirFS(osDir))},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			ctx := b.Context()
			b.SetBytes(int64(len(source)))
			b.ReportAllocs()
			for b.Loop() {
				got, err := bb.store.Template(ctx, "bench", "order.html")
				if err != nil || len(got) != len(source) {
					b.Fatalf("Template = %d bytes, %v", len(got), err)
				}
			}
		})
	}
}

// storeStep is one step of a store's put, replace and delete sequence: do
// (when not nil), then the template id of account "acme" holds want, or is
// missing.
type storeStep struct {
	name    string
	do      func() error
	id      string
	want    string
	missing bool
}

// runStoreSteps runs steps in order against store, each as a subtest.
func runStoreSteps(t *testing.T, store postroom.TemplateStore, steps []storeStep) {
	t.Helper()
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.do != nil {
				if err := s.do(); err != nil {
					t.Fatal(err)
				}
			}
			got, err := store.Template(t.Context(), "acme", s.id)
			if s.missing {
				if !errors.Is(err, postroom.ErrTemplateNotFound) {
					t.Fatalf("Template(acme, %q) = %q, %v; want ErrTemplateNotFound", s.id, got, err)
				}
				return
			}
			if err != nil || got != s.want {
				t.Fatalf("Template(acme, %q) = %q, %v; want %q", s.id, got, err, s.want)
			}
		})
	}
}
