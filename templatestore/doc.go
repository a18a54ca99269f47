// Package templatestore holds stored templates for postroom's SendTemplate,
// behind the one-method postroom.TemplateStore interface.
//
// Three stores are provided:
//
//   - Memory keeps templates in a map, for tests, previews and applications
//     that load their templates at start-up.
//   - Dir reads templates from an io/fs.FS laid out as
//     <account_id>/<template_id>, such as os.DirFS("templates") or, to stop
//     symbolic links from leading out of the folder, the FS of an os.Root.
//   - SQL reads and writes templates in a PostgreSQL table through
//     database/sql, shared by every instance of an application.
//
// All scope every lookup by account: one account never reaches another
// account's templates. A missing template is reported with an error wrapping
// postroom.ErrTemplateNotFound.
//
// # Identifiers
//
// Account ids and template ids must match [A-Za-z0-9._-]{1,255} and must not
// be "." or "..", so an id never names a path separator, a parent folder or
// anything outside the store. An id that breaks this rule is reported by
// Template as missing, with an error wrapping ErrInvalidID (which itself
// wraps postroom.ErrTemplateNotFound), and refused by Memory.Put and SQL.Put.
//
// # SQL
//
// SQL keeps templates in a PostgreSQL table, postroom_templates, for
// applications running several instances that must share their templates.
// MigrateSQL creates the table (its schema is embedded, in
// templatestore/sql/*.sql) and is safe to call at every start; Put and
// Delete write templates, and every lookup reads the table, so an update is
// seen by the next call of every instance. ExampleSQL shows the whole path,
// from sql.Open to a message.send_template call that uses a stored
// template; the package's tests run it against a real PostgreSQL.
//
// This package imports database/sql but no driver: the application picks
// one (pgx's stdlib is the one tested), so importing postroom or this
// package never links a database driver.
//
// From the module it imports only postroom; the postroom package never
// imports it, and knows a store only by the TemplateStore interface.
package templatestore
