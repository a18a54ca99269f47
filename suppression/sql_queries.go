package suppression

// queries are the statements of SQL whose text differs between the
// engines.
type queries struct {
	// suppressed: $1 account, $2 the addresses (a text array; JSON text
	// on SQLite), $3 now.
	suppressed string
	// list: a page of List; see SQL.List for the arguments.
	list string
	// softBounce counts a soft bounce ($3) on the address's row of soft
	// bounces, keeping the latest $5 newer than $4, and returns how many
	// it keeps.
	softBounce string
	// delete are Delete's statements, run in one transaction when more
	// than one: $1 account, $2 address, $3 scope ('' for every entry),
	// $4 list. The last one's count of rows is Delete's.
	delete []string
	// prune are Prune's statements, likewise: $1 before, $2 the oldest
	// soft bounce that still counts. The last one deletes the entries.
	prune []string
}

// listWhere is List's condition but for the prefix: addresses are
// printable ASCII (the table's check), so those that start with the
// prefix sort from it to it followed by DEL.
const listWhere = `account_id = $1 AND (address, scope, list_id) > ($2, $8, $9)
		AND ($4 = '' OR reason = $4)
		AND ($5 OR (created_at <= $6 AND (expires_at IS NULL OR expires_at > $6)))
		AND ($10 = '' OR scope = $10) AND ($11 = '' OR list_id = $11)`

// postgresQueries are PostgreSQL's: arrays, unnest, and data-modifying
// WITH clauses that make one statement of two.
var postgresQueries = queries{
	suppressed: `SELECT address, reason, detail, send_id, created_at, expires_at, scope, list_id
		FROM postroom_suppressions
		WHERE account_id = $1 AND address = ANY($2::text[])
		AND created_at <= $3 AND (expires_at IS NULL OR expires_at > $3)`,
	list: `SELECT ` + columns + ` FROM postroom_suppressions
		WHERE ` + listWhere + `
		AND ($3 = '' OR (address >= $3 AND address < $3 || chr(127)))
		ORDER BY address, scope, list_id LIMIT $7`,
	softBounce: `INSERT INTO postroom_suppression_soft_bounces AS s (account_id, address, bounces)
		VALUES ($1, $2, ARRAY[$3::timestamptz])
		ON CONFLICT (account_id, address) DO UPDATE SET bounces = ARRAY(
			SELECT b FROM unnest(s.bounces || $3::timestamptz) AS b
			WHERE b > $4 ORDER BY b DESC LIMIT $5)
		RETURNING cardinality(bounces)`,
	// scope '' (every entry) and 'all' drop the soft bounces too.
	delete: []string{`WITH soft AS (
			DELETE FROM postroom_suppression_soft_bounces WHERE account_id = $1 AND address = $2 AND $3 IN ('', 'all')
		)
		DELETE FROM postroom_suppressions WHERE account_id = $1 AND address = $2
		AND ($3 = '' OR (scope = $3 AND list_id = $4))`},
	prune: []string{`WITH soft AS (
			DELETE FROM postroom_suppression_soft_bounces
			WHERE NOT EXISTS (SELECT FROM unnest(bounces) AS b WHERE b > $2)
		)
		DELETE FROM postroom_suppressions WHERE expires_at <= $1`},
}

// sqliteQueries are SQLite's: JSON arrays (json_each) for PostgreSQL's
// arrays, times as integers (microseconds), and two statements in a
// transaction where PostgreSQL's WITH deletes from two tables at once.
var sqliteQueries = queries{
	// The addresses in their order, each probing the primary key: a
	// third less CPU than address IN (SELECT value FROM json_each($2)),
	// which first builds an index of them (docs/BENCHMARKS.md). An address given twice is found
	// twice, as postroom.Suppressions allows (Memory does the same).
	suppressed: `SELECT address, reason, detail, send_id, created_at, expires_at, scope, list_id
		FROM json_each($2) j CROSS JOIN postroom_suppressions
		WHERE account_id = $1 AND address = j.value
		AND created_at <= $3 AND (expires_at IS NULL OR expires_at > $3)`,
	list: `SELECT ` + columns + ` FROM postroom_suppressions
		WHERE ` + listWhere + `
		AND ($3 = '' OR (address >= $3 AND address < $3 || char(127)))
		ORDER BY address, scope, list_id LIMIT $7`,
	softBounce: `INSERT INTO postroom_suppression_soft_bounces AS s (account_id, address, bounces)
		VALUES ($1, $2, json_array($3))
		ON CONFLICT (account_id, address) DO UPDATE SET bounces = (
			SELECT json_group_array(b) FROM (
				SELECT value AS b FROM json_each(json_insert(s.bounces, '$[#]', $3))
				WHERE value > $4 ORDER BY value DESC LIMIT $5))
		RETURNING json_array_length(bounces)`,
	delete: []string{
		`DELETE FROM postroom_suppression_soft_bounces WHERE account_id = $1 AND address = $2 AND $3 IN ('', 'all')`,
		`DELETE FROM postroom_suppressions WHERE account_id = $1 AND address = $2
		AND ($3 = '' OR (scope = $3 AND list_id = $4))`,
	},
	prune: []string{
		`DELETE FROM postroom_suppression_soft_bounces
		WHERE NOT EXISTS (SELECT 1 FROM json_each(bounces) WHERE value > $2) AND $1 = $1`,
		`DELETE FROM postroom_suppressions WHERE expires_at <= $1 AND $2 = $2`,
	},
}
