// Package sqlschema reads the versioned SQL migrations that postroom's
// PostgreSQL packages (templatestore, outbox, suppression, events) embed: files named
// <version>_<what>.sql, versions 1 to the package's schema version without
// a gap (Load), and applies them in a caller's transaction (Apply), each
// package under its own advisory lock and with its own version table.
package sqlschema

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one version of a schema.
type Migration struct {
	Version int
	Name    string // the file's base name
	SQL     string
}

// Load returns the migrations matching pattern in fsys (such as
// "sql/*.sql") in version order, or an error when a name is not
// <version>_<what>.sql, when versions do not run from 1 without a gap, or
// when there are not exactly want of them.
func Load(fsys fs.FS, pattern string, want int) ([]Migration, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, name := range names {
		base := path.Base(name)
		prefix, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name is not <version>_<what>.sql", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(b)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d, want %d", m.Name, m.Version, i+1)
		}
	}
	if len(ms) != want {
		return nil, fmt.Errorf("%d migrations embedded, the schema version is %d", len(ms), want)
	}
	return ms, nil
}
