package bounce

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestDump(t *testing.T) {
	files, _ := filepath.Glob(os.Getenv("DUMP"))
	for _, f := range files {
		fh, _ := os.Open(f)
		r, err := Parse(fh)
		fh.Close()
		b, _ := json.MarshalIndent(r, "", " ")
		t.Logf("%s: %v\n%s", f, err, b)
	}
}
