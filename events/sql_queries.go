package events

import (
	"fmt"

	"github.com/postroom/postroom/sqldb"
)

// queries are the statements and fragments of SQL whose text differs
// between the engines.
type queries struct {
	engine sqldb.Engine
	// list is List's page: $1 account, $2 the cursor's transaction id
	// (text), $3 its row id, $4 the limit; it returns the row's
	// transaction id (text), its id, then eventColumns.
	list string
	// after is After's: $1 the send ids; account_id, then eventColumns.
	after string
	// in is the condition that the expression before it is one of the
	// array (PostgreSQL) or JSON array (SQLite) argument %s.
	in string
	// time casts the argument %s to a time, where a row value needs it.
	time string
	// dayBefore is the time a day before the column %s.
	dayBefore string
}

// postgresQueries are PostgreSQL's: arrays, transaction ids, DISTINCT ON.
var postgresQueries = queries{
	engine: sqldb.Postgres,
	list: `SELECT xid::text, id, ` + eventColumns + `
		FROM postroom_events
		WHERE account_id = $1 AND (xid, id) > ($2::text::xid8, $3)
		  AND xid < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY xid, id
		LIMIT $4`,
	// The ids joined from unnest rather than send_id = ANY($1): the
	// planner would weigh the 25,000 values of a large call once per day
	// partition.
	after: `SELECT DISTINCT ON (send_id) account_id, ` + eventColumns + `
		FROM unnest($1::text[]) AS ids(sid) JOIN postroom_events e ON e.send_id = ids.sid
		WHERE event <> 'send'
		ORDER BY send_id, at DESC, e.id DESC`,
	in:        ` = ANY(%s)`,
	time:      `%s::timestamptz`,
	dayBefore: `%s - interval '1 day'`,
}

// sqliteQueries are SQLite's: JSON arrays (json_each) for arrays, times
// as integers (microseconds since 1970), and the row id alone for List's
// order, since SQLite's writes commit one at a time.
var sqliteQueries = queries{
	engine: sqldb.SQLite,
	list: `SELECT '0', id, ` + eventColumns + `
		FROM postroom_events
		WHERE account_id = $1 AND $2 = $2 AND id > $3
		ORDER BY id
		LIMIT $4`,
	after: `SELECT account_id, ` + eventColumns + `
		FROM postroom_events e
		WHERE send_id IN (SELECT value FROM json_each($1)) AND event <> 'send'
		  AND NOT EXISTS (SELECT 1 FROM postroom_events l
			WHERE l.send_id = e.send_id AND l.event <> 'send' AND (l.at, l.id) > (e.at, e.id))`,
	in:        ` IN (SELECT value FROM json_each(%s))`,
	time:      `%s`,
	dayBefore: `%s - 86400000000`,
}

// queriesOf returns engine's queries.
func queriesOf(engine sqldb.Engine) (*queries, error) {
	switch engine {
	case sqldb.Postgres:
		return &postgresQueries, nil
	case sqldb.SQLite:
		return &sqliteQueries, nil
	}
	return nil, fmt.Errorf("unknown engine %q", engine)
}
