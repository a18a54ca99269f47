package main

import (
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/sqldb/pgxdb"
)

// poolOf is the pool under d, for the stores that take one until they
// take an sqldb.DB.
func poolOf(d *database) (*pgxpool.Pool, error) {
	if p, ok := d.DB.(*pgxdb.DB); ok {
		return p.Pool(), nil
	}
	return nil, errors.New("this command needs PostgreSQL for now")
}
