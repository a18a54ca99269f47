package templatestore

// SQLiteSchemaVersion is the version of SQLite's schema, for the tests.
const SQLiteSchemaVersion = sqliteSchemaVersion
