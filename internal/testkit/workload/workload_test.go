package workload

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// writeFile writes data at dir/name, making the directories on the way.
func writeFile(t *testing.T, dir, name, data string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPathFrom(t *testing.T) {
	// This package is three levels below the repository root.
	want, err := filepath.Abs(filepath.Join("..", "..", "..", filepath.FromSlash(FromRoot)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
	}{
		{"package", "."},
		{"testkit", ".."},
		{"internal", filepath.Join("..", "..")},
		{"repository root", filepath.Join("..", "..", "..")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PathFrom(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("PathFrom(%q) = %q, want %q", tc.dir, got, want)
			}
		})
	}
	t.Run("Path", func(t *testing.T) {
		got, err := Path()
		if err != nil || got != want {
			t.Errorf("Path() = %q, %v; want %q", got, err, want)
		}
	})
}

func TestRoot(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // relative to a temporary directory
		from    string            // where Root starts, relative to it
		want    string            // the root found, relative to it
		wantErr error
	}{
		{"here", map[string]string{"go.mod": "module " + Module + "\n\ngo 1.26\n"}, ".", ".", nil},
		{"above", map[string]string{"go.mod": "module " + Module + "\n", "a/b/x.go": ""}, "a/b", ".", nil},
		{"quoted", map[string]string{"go.mod": "// c\nmodule \"" + Module + "\"\n", "a/x.go": ""}, "a", ".", nil},
		{"nearest", map[string]string{"go.mod": "module " + Module + "\n", "r/go.mod": "module " + Module + "\n", "r/a/x.go": ""}, "r/a", "r", nil},
		{"other module passed over", map[string]string{"go.mod": "module " + Module + "\n", "sub/go.mod": "module example.com/other\n", "sub/x.go": ""}, "sub", ".", nil},
		{"none", map[string]string{"go.mod": "module example.com/other\n", "a/x.go": ""}, "a", "", ErrNoRoot},
		{"no module line", map[string]string{"go.mod": "go 1.26\n"}, ".", "", ErrNoRoot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A temporary directory is outside the repository, so nothing
			// above it declares Module.
			dir := t.TempDir()
			for name, data := range tt.files {
				writeFile(t, dir, name, data)
			}
			got, err := Root(filepath.Join(dir, filepath.FromSlash(tt.from)))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Root = %q, %v; want %v", got, err, tt.wantErr)
				}
				if _, err := PathFrom(filepath.Join(dir, filepath.FromSlash(tt.from))); !errors.Is(err, tt.wantErr) {
					t.Fatalf("PathFrom: %v; want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, filepath.FromSlash(tt.want)); got != want {
				t.Errorf("Root = %q, want %q", got, want)
			}
		})
	}
}

// TestRead reads the workload and checks it against the package
// documentation: Samples sample recipients, sample i at Address(i).
func TestRead(t *testing.T) {
	var call struct {
		Message struct {
			HTML string `json:"html"`
		} `json:"message"`
		Recipients []struct {
			Email string `json:"email"`
		} `json:"recipients"`
	}
	if err := json.Unmarshal(Read(t), &call); err != nil {
		t.Fatalf("decoding the workload: %v", err)
	}
	if call.Message.HTML == "" {
		t.Error("the workload has no html body")
	}
	if len(call.Recipients) != Samples {
		t.Fatalf("%d sample recipients, want %d", len(call.Recipients), Samples)
	}
	for i, r := range call.Recipients {
		if r.Email != Address(i) {
			t.Errorf("sample %d is %q, Address(%d) = %q", i, r.Email, i, Address(i))
		}
	}
}

func TestAddress(t *testing.T) {
	for _, tc := range []struct {
		i    int
		want string
	}{
		{0, "user000000@example.org"},
		{15, "user000015@example.org"},
		{24999, "user024999@example.org"},
		{1234567, "user1234567@example.org"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := Address(tc.i); got != tc.want {
				t.Errorf("Address(%d) = %q, want %q", tc.i, got, tc.want)
			}
		})
	}
}
