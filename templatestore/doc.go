// Package templatestore holds stored templates for postroom's SendTemplate,
// behind the one-method postroom.TemplateStore interface.
//
// Three stores are provided:
//
//   - Memory keeps templates in a map, for tests, previews and applications
//     that load their templates at start-up or keep them for one process.
//   - Dir reads templates from an io/fs.FS laid out as
//     <account_id>/<template_id>, such as os.DirFS("templates") or, to stop
//     symbolic links from leading out of the folder, the FS of an os.Root.
//   - SQL reads and writes templates in database tables, through an
//     sqldb.DB: PostgreSQL (the application's pgx pool), shared by every
//     instance of an application, or SQLite, for one process.
//
// All scope every lookup by account: one account never reaches another
// account's templates. A missing template is reported with an error wrapping
// postroom.ErrTemplateNotFound.
//
// # Drafts and published versions
//
// Memory and SQL are Managers: their templates are managed as Mandrill's
// templates/add, update, publish, delete, info and list manage theirs
// (package httpapi serves them as templates.add and so on, and the
// postroom command as postroom templates). Each template has a draft,
// which Add and Update write, and published versions, which Publish (of
// the draft) and PublishVersion (of a kept version: a rollback) make;
// message.send_template uses the live version, the newest published one,
// so a draft is never sent. Each store keeps the last KeepVersions
// published versions of a template (DefaultKeepVersions, 10, unless set).
// A template id holds one source, used as a call's html or text; an html
// and a text version are two templates. The stores keep sources as given:
// postroom.Mailer.CheckTemplate refuses one that does not compile, with
// its line and column, and httpapi and the command call it before saving.
// Put, the older way to store a template, writes the draft and publishes
// it at once. Dir reads files and is not a Manager: its templates change
// with its files.
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
// SQL keeps templates in two tables, postroom_templates and
// postroom_template_versions: in PostgreSQL, for applications running
// several instances that must share their templates, or in SQLite, for
// one process. Migrate creates the tables (their schema is embedded, in
// templatestore/sql/*.sql for PostgreSQL and templatestore/sql/sqlite/*.sql
// for SQLite) and is safe to call at every start; the Manager methods,
// Put and Delete write templates, and every lookup reads the tables, so a
// change is seen by the next call of every instance. ExampleSQL shows the
// whole path, from pgxpool.New to a message.send_template call that uses
// a stored template; the package's tests run it against a real
// PostgreSQL.
//
// SQL and Migrate take an sqldb.DB, as every store of postroom does: on
// PostgreSQL, pgxdb.New of the application's *pgxpool.Pool (the one River
// and package idempotency take); on SQLite, the DB of sqlitedb.Open. This
// package links neither pgx nor any database/sql driver: the application's
// DB brings its engine.
//
// From the module it imports postroom and the sqldb seam; the postroom
// package never imports it, and knows a store only by the TemplateStore
// interface.
package templatestore
