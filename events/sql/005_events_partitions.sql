-- postroom_events, schema version 5: the log partitioned by day (UTC) on
-- its time, so that SQL.Rotate drops the days older than the retention
-- whole (DROP TABLE of a partition: no row-by-row DELETE, no bloat, no
-- vacuum) and creates the days to come.
--
-- The table holding the events written before becomes a partition itself,
-- postroom_events_pYYYYMMDD_before (the events before that day), copied
-- nowhere: its indexes are those of the partitioned table, so attaching
-- it builds none. Proving its range reads it once (a sequential scan
-- under the migration's lock, no write); Rotate drops it whole once its
-- last day is older than the retention. The identity sequence goes on
-- from the old table's.
--
-- Partitions: postroom_events_pYYYYMMDD for each day from the first after
-- the old events to the seventh from now (SQL.Rotate keeps seven days
-- ahead), and postroom_events_default for an event of any other time (a
-- clock far off, or Rotate not run for a week), whose rows Rotate moves
-- into the day it creates.
DO $$
DECLARE
	cutoff timestamptz;
	next_id bigint;
	d timestamptz;
BEGIN
	SELECT greatest(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
	                date_trunc('day', max(at) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day')
	INTO cutoff FROM postroom_events;
	SELECT coalesce(max(id), 0) + 1 INTO next_id FROM postroom_events;

	ALTER TABLE postroom_events RENAME TO postroom_events_old;
	ALTER TABLE postroom_events_old ALTER COLUMN id DROP IDENTITY;
	EXECUTE format('ALTER TABLE postroom_events_old RENAME TO %I',
		'postroom_events_p' || to_char(cutoff AT TIME ZONE 'UTC', 'YYYYMMDD') || '_before');

	CREATE TABLE postroom_events (
		id bigint GENERATED ALWAYS AS IDENTITY,
		xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
		account_id text NOT NULL,
		event text NOT NULL,
		send_id text NOT NULL DEFAULT '',
		email text NOT NULL DEFAULT '',
		reason text NOT NULL DEFAULT '',
		status text NOT NULL DEFAULT '',
		diagnostic text NOT NULL DEFAULT '',
		at timestamptz NOT NULL,
		list text NOT NULL DEFAULT '',
		call_id text NOT NULL DEFAULT '',
		sender text NOT NULL DEFAULT '',
		subject text NOT NULL DEFAULT '',
		html_template text NOT NULL DEFAULT '',
		text_template text NOT NULL DEFAULT ''
	) PARTITION BY RANGE (at);
	EXECUTE format('ALTER TABLE postroom_events ALTER COLUMN id RESTART WITH %s', next_id);

	-- The old table's indexes, under their names, were renamed with it:
	-- the partitioned table's take the same names, and attaching the old
	-- table attaches its equivalent indexes to them.
	EXECUTE format('ALTER INDEX postroom_events_account RENAME TO %I', 'postroom_events_old_account');
	EXECUTE format('ALTER INDEX postroom_events_message RENAME TO %I', 'postroom_events_old_message');
	EXECUTE format('ALTER INDEX postroom_events_address RENAME TO %I', 'postroom_events_old_address');
	EXECUTE format('ALTER INDEX postroom_events_at RENAME TO %I', 'postroom_events_old_at');
	EXECUTE format('ALTER INDEX postroom_events_call RENAME TO %I', 'postroom_events_old_call');
	CREATE INDEX postroom_events_account ON postroom_events (account_id, xid, id);
	CREATE INDEX postroom_events_message ON postroom_events (send_id, at, id);
	CREATE INDEX postroom_events_address ON postroom_events (account_id, lower(email), at DESC, id DESC);
	CREATE INDEX postroom_events_at ON postroom_events (at);
	CREATE INDEX postroom_events_call ON postroom_events (account_id, call_id, at DESC, id DESC) WHERE call_id <> '';

	EXECUTE format('ALTER TABLE %I ADD CONSTRAINT postroom_events_range CHECK (at < %L)',
		'postroom_events_p' || to_char(cutoff AT TIME ZONE 'UTC', 'YYYYMMDD') || '_before', cutoff);
	EXECUTE format('ALTER TABLE postroom_events ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)',
		'postroom_events_p' || to_char(cutoff AT TIME ZONE 'UTC', 'YYYYMMDD') || '_before', cutoff);

	CREATE TABLE postroom_events_default PARTITION OF postroom_events DEFAULT;
	d := cutoff;
	WHILE d <= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '7 days' LOOP
		EXECUTE format('CREATE TABLE %I PARTITION OF postroom_events FOR VALUES FROM (%L) TO (%L)',
			'postroom_events_p' || to_char(d AT TIME ZONE 'UTC', 'YYYYMMDD'), d, d + interval '1 day');
		d := d + interval '1 day';
	END LOOP;
END $$;
