//go:build !race

package program

import "testing"

// TestPartialAllocs: once the pooled state has grown, a render that calls
// a partial per row allocates nothing. (The race detector makes sync.Pool
// drop items, so this test does not run under it.)
func TestPartialAllocs(t *testing.T) {
	table := compileTable(t, HTML, map[string]string{"row": "<td>{{name}}</td>"})
	p, err := Compile(t.Context(), "{{#each rows}}<tr>{{> row}}</tr>{{/each}}", Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	rows := []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}
	d := &Data{Params: map[string]any{"rows": rows}, Partials: table}
	out := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		d.Missing, d.Written = d.Missing[:0], 0
		if out, err = p.Append(t.Context(), out[:0], d); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per render, want 0", allocs)
	}
}
