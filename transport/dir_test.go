package transport_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
	"github.com/postroom/postroom/transport/transporttest"
)

var _ postroom.Transport = (*transport.Dir)(nil)

func TestDirConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) (postroom.Transport, func(string) ([]byte, bool)) {
		d := newDir(t)
		return d, func(sendID string) ([]byte, bool) {
			b, err := os.ReadFile(filepath.Join(d.Path(), sendID+".eml"))
			return b, err == nil
		}
	})
}

func TestDirIsNotQueuer(t *testing.T) {
	var tr postroom.Transport = newDir(t)
	if q, ok := tr.(postroom.Queuer); ok && q.Queued() {
		t.Error("Dir reports its messages queued; it is a final destination")
	}
}

func TestDirRefusesSendID(t *testing.T) {
	tests := []struct{ name, sendID string }{
		{"empty", ""},
		{"traversal", "../../../../tmp/0123456789abcdef"},
		{"traversal_32", "../0123456789abcdef0123456789abcd"},
		{"slash_32", "0123456789abcdef/0123456789abcde"},
		{"backslash_32", `0123456789abcdef\0123456789abcde`},
		{"upper_case", "0123456789ABCDEF0123456789ABCDEF"},
		{"short", "0123456789abcdef0123456789abcde"},
		{"long", "0123456789abcdef0123456789abcdef0"},
		{"not_hex", "0123456789abcdef0123456789abcdeg"},
		{"nul", "0123456789abcdef0123456789abcde\x00"},
		{"dot_eml", "0123456789abcdef0123456789.eml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDir(t)
			env := transporttest.NewEnvelope(t)
			env.SendID = tt.sendID
			err := d.Send(t.Context(), env)
			var de *postroom.DeliveryError
			if !errors.As(err, &de) || de.Kind != postroom.DeliveryPermanent {
				t.Fatalf("Send with send id %q = %v; want a permanent *postroom.DeliveryError", tt.sendID, err)
			}
			if names := dirNames(t, filepath.Dir(d.Path())); !slices.Equal(names, []string{filepath.Base(d.Path())}) {
				t.Errorf("Send with send id %q left %q beside the folder", tt.sendID, names)
			}
			if names := dirNames(t, d.Path()); len(names) != 0 {
				t.Errorf("Send with send id %q left %q in the folder", tt.sendID, names)
			}
		})
	}
}

func TestDirFiles(t *testing.T) {
	d := newDir(t)
	ctx := t.Context()
	first := transporttest.NewEnvelope(t)
	second := transporttest.NewEnvelope(t)
	replacement := transporttest.NewEnvelope(t)
	replacement.SendID = first.SendID
	replacement.Data = []byte("Subject: replaced\r\n\r\nbody\r\n")
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	steps := []struct {
		name string
		ctx  context.Context
		env  *postroom.Envelope
		want map[string]string // file name to content after the step
	}{
		{
			name: "first",
			ctx:  ctx,
			env:  first,
			want: map[string]string{first.SendID + ".eml": string(first.Data)},
		},
		{
			name: "second",
			ctx:  ctx,
			env:  second,
			want: map[string]string{
				first.SendID + ".eml":  string(first.Data),
				second.SendID + ".eml": string(second.Data),
			},
		},
		{
			name: "same_send_id_replaces",
			ctx:  ctx,
			env:  replacement,
			want: map[string]string{
				first.SendID + ".eml":  string(replacement.Data),
				second.SendID + ".eml": string(second.Data),
			},
		},
		{
			name: "canceled_writes_nothing",
			ctx:  canceled,
			env:  transporttest.NewEnvelope(t),
			want: map[string]string{
				first.SendID + ".eml":  string(replacement.Data),
				second.SendID + ".eml": string(second.Data),
			},
		},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			err := d.Send(s.ctx, s.env)
			if s.ctx.Err() != nil {
				if !errors.Is(err, s.ctx.Err()) {
					t.Fatalf("Send = %v; want %v", err, s.ctx.Err())
				}
			} else if err != nil {
				t.Fatalf("Send: %v", err)
			}
			// Only the .eml files remain: no temporary file is left behind.
			names := dirNames(t, d.Path())
			if len(names) != len(s.want) {
				t.Errorf("folder holds %q; want %d files", names, len(s.want))
			}
			for name, want := range s.want {
				path := filepath.Join(d.Path(), name)
				got, err := os.ReadFile(path)
				if err != nil || string(got) != want {
					t.Errorf("%s = %q, %v; want %q", name, got, err, want)
				}
				if d.File(strings.TrimSuffix(name, ".eml")) != path {
					t.Errorf("File(%s) = %s; want %s", strings.TrimSuffix(name, ".eml"), d.File(strings.TrimSuffix(name, ".eml")), path)
				}
				info, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if perm := info.Mode().Perm(); perm != 0o600 {
					t.Errorf("%s has mode %v; want 0600", name, perm)
				}
			}
		})
	}
}

// TestDirTemporaryFailure removes the folder under a Dir: Send fails with a
// plain (temporary) error, not a DeliveryError.
func TestDirTemporaryFailure(t *testing.T) {
	d := newDir(t)
	if err := os.Remove(d.Path()); err != nil {
		t.Fatal(err)
	}
	err := d.Send(t.Context(), transporttest.NewEnvelope(t))
	var de *postroom.DeliveryError
	if err == nil || errors.As(err, &de) {
		t.Fatalf("Send into a missing folder = %v; want a plain error", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Send into a missing folder = %v; want it to wrap os.ErrNotExist", err)
	}
}

func TestNewDir(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(base, "existing")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(existing, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		path     string
		wantErr  bool
		wantPerm os.FileMode
	}{
		{name: "empty", path: "", wantErr: true},
		{name: "file", path: file, wantErr: true},
		{name: "under_file", path: filepath.Join(file, "sub"), wantErr: true},
		{name: "existing_kept_as_is", path: existing, wantPerm: 0o755},
		{name: "created_with_parents", path: filepath.Join(base, "a", "b", "outbox"), wantPerm: 0o700},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := transport.NewDir(tt.path)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("NewDir(%q) = %v; want an error", tt.path, d.Path())
				}
				return
			}
			if err != nil {
				t.Fatalf("NewDir(%q): %v", tt.path, err)
			}
			if d.Path() != tt.path {
				t.Errorf("Path() = %q; want %q", d.Path(), tt.path)
			}
			info, err := os.Stat(tt.path)
			if err != nil || !info.IsDir() {
				t.Fatalf("Stat(%q) = %v, %v; want a folder", tt.path, info, err)
			}
			if perm := info.Mode().Perm(); perm != tt.wantPerm {
				t.Errorf("folder mode = %v; want %v", perm, tt.wantPerm)
			}
		})
	}
}

func TestNewDirRelative(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	d, err := transport.NewDir("outbox")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "outbox"); d.Path() != want {
		t.Fatalf("Path() = %q; want %q", d.Path(), want)
	}
	// A later change of working directory does not move the output.
	t.Chdir(t.TempDir())
	env := transporttest.NewEnvelope(t)
	if err := d.Send(t.Context(), env); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "outbox", env.SendID+".eml")); err != nil {
		t.Error(err)
	}
}

// newDir returns a Dir over a fresh folder inside its own temporary folder.
func newDir(t *testing.T) *transport.Dir {
	t.Helper()
	d, err := transport.NewDir(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// dirNames returns the sorted names in folder path.
func dirNames(t *testing.T, path string) []string {
	t.Helper()
	entries, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

func ExampleDir() {
	folder, err := os.MkdirTemp("", "postroom-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(folder)

	d, err := transport.NewDir(filepath.Join(folder, "outbox"))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = d.Send(context.Background(), &postroom.Envelope{
		SendID: "0123456789abcdef0123456789abcdef",
		From:   "news@example.org",
		To:     []string{"ann@example.com"},
		Data:   []byte("Subject: Hello\r\n\r\nHi Ann\r\n"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	entries, _ := os.ReadDir(d.Path())
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(d.Path(), e.Name()))
		fmt.Printf("%s %q\n", e.Name(), b)
	}
	// Output:
	// 0123456789abcdef0123456789abcdef.eml "Subject: Hello\r\n\r\nHi Ann\r\n"
}

func BenchmarkDirSend(b *testing.B) {
	env := workloadEnvelope(b)
	d, err := transport.NewDir(filepath.Join(b.TempDir(), "outbox"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	b.SetBytes(int64(len(env.Data)))
	b.ReportAllocs()
	for b.Loop() {
		// One send id: each file replaces the last, so the folder stays small.
		if err := d.Send(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
}
