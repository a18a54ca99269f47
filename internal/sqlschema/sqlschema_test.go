package sqlschema

import (
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	good := fstest.MapFS{
		"sql/002_more.sql":  {Data: []byte("B")},
		"sql/001_first.sql": {Data: []byte("A")},
		"sql/README":        {Data: []byte("not a migration")},
	}
	ms, err := Load(good, "sql/*.sql", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0] != (Migration{1, "001_first.sql", "A"}) || ms[1] != (Migration{2, "002_more.sql", "B"}) {
		t.Errorf("Load = %+v; want 001 then 002", ms)
	}
	for _, tt := range []struct {
		name string
		fsys fstest.MapFS
		want int
	}{
		{"gap", fstest.MapFS{"sql/001_a.sql": {}, "sql/003_c.sql": {}}, 2},
		{"bad name", fstest.MapFS{"sql/first.sql": {}}, 1},
		{"version 0", fstest.MapFS{"sql/000_a.sql": {}}, 1},
		{"fewer than the schema version", fstest.MapFS{"sql/001_a.sql": {}}, 2},
		{"more than the schema version", good, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if ms, err := Load(tt.fsys, "sql/*.sql", tt.want); err == nil {
				t.Errorf("Load = %+v, nil; want an error", ms)
			}
		})
	}
}
