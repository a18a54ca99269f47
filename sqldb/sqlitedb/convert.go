package sqlitedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/postroom/postroom/sqldb"
)

// arg converts a value SQLite has no type for (see package sqldb): a time
// to its microseconds since 1970, a slice to JSON text.
func arg(v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UnixMicro()
	case *time.Time:
		if v == nil {
			return nil
		}
		return v.UnixMicro()
	case []string:
		return jsonText(v)
	case []int:
		return jsonText(v)
	case []int32:
		return jsonText(v)
	case []int64:
		return jsonText(v)
	}
	return v
}

func jsonText(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil // slices of strings and integers always marshal
	}
	if string(b) == "null" {
		return "[]"
	}
	return string(b)
}

func args(in []any) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = arg(v)
	}
	return out
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func exec(ctx context.Context, q querier, query string, a []any) (int64, error) {
	res, err := q.ExecContext(ctx, query, args(a)...)
	if err != nil {
		return 0, Err(err)
	}
	n, err := res.RowsAffected()
	return n, Err(err)
}

func query(ctx context.Context, q querier, query string, a []any) (sqldb.Rows, error) {
	r, err := q.QueryContext(ctx, query, args(a)...)
	if err != nil {
		return nil, Err(err)
	}
	return &rows{r: r}, nil
}

func queryRow(ctx context.Context, q querier, query string, a []any) sqldb.Row {
	r, err := q.QueryContext(ctx, query, args(a)...)
	return &row{r: r, err: err}
}

type rows struct{ r *sql.Rows }

func (r *rows) Next() bool             { return r.r.Next() }
func (r *rows) Scan(dest ...any) error { return scan(r.r, dest) }
func (r *rows) Err() error             { return Err(r.r.Err()) }
func (r *rows) Close() error           { return Err(r.r.Close()) }

type row struct {
	r   *sql.Rows
	err error
}

func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return Err(r.err)
	}
	defer r.r.Close()
	if !r.r.Next() {
		if err := r.r.Err(); err != nil {
			return Err(err)
		}
		return Err(sql.ErrNoRows)
	}
	if err := scan(r.r, dest); err != nil {
		return err
	}
	return Err(r.r.Close())
}

// scan reads a row into dest, reading times and JSON slices back.
func scan(r *sql.Rows, dest []any) error {
	var raw []any
	var at []int
	for i, d := range dest {
		switch d.(type) {
		case *time.Time, **time.Time, *[]string:
			if raw == nil {
				raw = make([]any, len(dest))
				copy(raw, dest)
			}
			raw[i] = new(any)
			at = append(at, i)
		}
	}
	if raw == nil {
		return Err(r.Scan(dest...))
	}
	if err := r.Scan(raw...); err != nil {
		return Err(err)
	}
	for _, i := range at {
		v := *raw[i].(*any)
		if err := assign(dest[i], v); err != nil {
			return fmt.Errorf("sqlitedb: Scan column %d: %w", i, err)
		}
	}
	return nil
}

func assign(dest, v any) error {
	switch d := dest.(type) {
	case *time.Time:
		if v == nil {
			return fmt.Errorf("NULL into a time.Time (scan into a **time.Time)")
		}
		t, err := timeOf(v)
		*d = t
		return err
	case **time.Time:
		if v == nil {
			*d = nil
			return nil
		}
		t, err := timeOf(v)
		*d = &t
		return err
	case *[]string:
		var b []byte
		switch v := v.(type) {
		case nil:
			*d = nil
			return nil
		case string:
			b = []byte(v)
		case []byte:
			b = v
		default:
			return fmt.Errorf("%T into a []string", v)
		}
		return json.Unmarshal(b, d)
	}
	return nil
}

func timeOf(v any) (time.Time, error) {
	switch v := v.(type) {
	case int64:
		return time.UnixMicro(v).UTC(), nil
	case time.Time:
		return v.UTC(), nil
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05"} {
			if t, err := time.Parse(layout, v); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("%q is not a time", v)
	}
	return time.Time{}, fmt.Errorf("%T is not a time", v)
}
