package templatestore

import (
	"errors"
	"fmt"

	"github.com/postroom/postroom"
)

// ErrInvalidID is wrapped by the error for an account id or template id that
// breaks the rules in the package documentation. It wraps
// postroom.ErrTemplateNotFound, so a lookup by an invalid id is, for the
// Mailer, a template that does not exist; its text does not say "not
// found", since Put returns it too.
var ErrInvalidID error = invalidIDError{}

type invalidIDError struct{}

func (invalidIDError) Error() string { return "templatestore: invalid id" }
func (invalidIDError) Unwrap() error { return postroom.ErrTemplateNotFound }

// ErrTooLarge is wrapped by the error for a stored template bigger than the
// store accepts (see Dir.MaxBytes).
var ErrTooLarge = errors.New("templatestore: template too large")

// maxIDLen is the longest id accepted, the usual limit on a file name.
const maxIDLen = 255

// validID reports whether s is a valid account or template id:
// [A-Za-z0-9._-]{1,255}, and neither "." nor "..".
func validID(s string) bool {
	if s == "" || len(s) > maxIDLen || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// checkIDs returns an error wrapping ErrInvalidID unless both ids are valid.
func checkIDs(accountID, id string) error {
	if err := checkAccountID(accountID); err != nil {
		return err
	}
	if !validID(id) {
		return fmt.Errorf("%w: template id %q", ErrInvalidID, id)
	}
	return nil
}

// checkAccountID returns an error wrapping ErrInvalidID unless accountID
// is valid.
func checkAccountID(accountID string) error {
	if accountID == "" {
		return fmt.Errorf("%w: the account id is empty: stored templates belong to an account, also under postroom.NoAuth; store them under the account_id the calls carry", ErrInvalidID)
	}
	if !validID(accountID) {
		return fmt.Errorf("%w: account id %q", ErrInvalidID, accountID)
	}
	return nil
}

// notFound returns the error for a template id missing from an account.
func notFound(accountID, id string) error {
	return fmt.Errorf("templatestore: account %q, template %q: %w", accountID, id, postroom.ErrTemplateNotFound)
}
