package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// TestKitsStayKits checks that the test kits under internal/testkit are
// linked by nothing but tests, other kits and the packages that exist to
// serve tests: postroomtest (its MIME reader is internal/testkit/mimeread)
// and the benchmark report. An engine that imported a kit would carry a
// test server or a database starter into programs.
func TestKitsStayKits(t *testing.T) {
	const module = "github.com/postroom/postroom"
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), goCmd, "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{module + "/postroomtest": true, module + "/benchmarks/cmd/report": true}
	listed := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		listed++
		pkg := fields[0]
		if strings.HasPrefix(pkg, module+"/internal/testkit/") || allowed[pkg] {
			continue
		}
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, module+"/internal/testkit/") {
				t.Errorf("%s links the test kit %s", pkg, dep)
			}
		}
	}
	if listed < 10 {
		t.Fatalf("go list listed %d packages", listed)
	}
}
