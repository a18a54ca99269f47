// Package templatestore holds stored templates for postroom's SendTemplate,
// behind the one-method postroom.TemplateStore interface.
//
// Two stores are provided:
//
//   - Memory keeps templates in a map, for tests, previews and applications
//     that load their templates at start-up.
//   - Dir reads templates from an io/fs.FS laid out as
//     <account_id>/<template_id>, such as os.DirFS("templates") or, to stop
//     symbolic links from leading out of the folder, the FS of an os.Root.
//
// Both scope every lookup by account: one account never reaches another
// account's templates. A missing template is reported with an error wrapping
// postroom.ErrTemplateNotFound.
//
// # Identifiers
//
// Account ids and template ids must match [A-Za-z0-9._-]{1,255} and must not
// be "." or "..", so an id never names a path separator, a parent folder or
// anything outside the store. An id that breaks this rule is reported by
// Template as missing, with an error wrapping ErrInvalidID (which itself
// wraps postroom.ErrTemplateNotFound), and refused by Memory.Put.
//
// # Other stores
//
// This package does not talk to databases. Applications that run several
// instances sharing their templates usually keep them in SQL; such a store
// is a short implementation of postroom.TemplateStore, for example:
//
//	type SQLStore struct{ DB *sql.DB }
//
//	func (s SQLStore) Template(ctx context.Context, accountID, id string) (string, error) {
//		var source string
//		err := s.DB.QueryRowContext(ctx,
//			`SELECT source FROM templates WHERE account_id = $1 AND id = $2`,
//			accountID, id).Scan(&source)
//		if errors.Is(err, sql.ErrNoRows) {
//			return "", fmt.Errorf("template %q: %w", id, postroom.ErrTemplateNotFound)
//		}
//		if err != nil {
//			return "", err
//		}
//		return source, nil
//	}
//
// A *sql.DB is safe for concurrent use and QueryRowContext honours ctx, so
// the store meets the interface's contract as it stands. Keep the account id
// in the query's WHERE clause: that is what keeps accounts apart.
//
// From the module it imports only postroom; the postroom package never
// imports it, and knows a store only by the TemplateStore interface.
package templatestore
