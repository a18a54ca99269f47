package postroom

import "errors"

// ErrZeroMailer is the error of every method of a Mailer not made by New
// (the zero Mailer, or a nil *Mailer), rather than a panic: a Mailer has
// no usable zero value, since it needs a Transport and an Authenticator.
var ErrZeroMailer = errors.New("postroom: Mailer not made by New")

// made returns ErrZeroMailer when m was not made by New.
func (m *Mailer) made() error {
	if m == nil || m.t == nil {
		return ErrZeroMailer
	}
	return nil
}

// emptyAccountHint is what a missing stored template or partial's reason
// adds when the call's account_id is empty: stores keep templates per
// account, so the account, not the template, is what the caller forgot.
func emptyAccountHint(accountID string) string {
	if accountID != "" {
		return ""
	}
	return ": the call's account_id is empty, and templates and partials are stored per account"
}
