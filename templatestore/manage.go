package templatestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/postroom/postroom"
)

// DefaultKeepVersions is how many published versions of a template Memory
// and SQL keep when their KeepVersions is zero: the live one and the nine
// before it.
const DefaultKeepVersions = 10

// Manager is a TemplateStore whose templates are managed, as Mandrill's
// templates/add, update, publish, delete, info and list manage theirs:
// each template has a draft, which Add and Update write, and published
// versions, which Publish and PublishVersion make; Template, the lookup of
// message.send_template, returns the live version, the newest published
// one. Memory and SQL are Managers; Dir is not (its files are read-only).
//
// A template id holds one source, used by a call as its html
// (message.html_template_id) or its text (message.text_template_id), and
// as a partial ({{> id}}) by the account's other templates. Mandrill's
// template holds an html and a text version under one name: here they
// are two templates, such as "welcome" and "welcome.txt".
//
// Every method is scoped by account: one account never reaches another's
// templates, and an id of another account's template is reported as
// missing. A missing template gives an error wrapping
// postroom.ErrTemplateNotFound, an invalid id one wrapping ErrInvalidID;
// a done ctx gives ctx.Err(). The methods store sources as given: a
// caller that wants a template refused when it does not compile calls
// postroom.Mailer.CheckTemplate first, as package httpapi and the
// postroom command do.
//
// Each method returns the template as it is after the change, owned by
// the caller. Implementations must be safe for concurrent use; each
// change is atomic, and a lookup sees a template before or after it.
type Manager interface {
	postroom.TemplateStore

	// Add stores a new template, with source as its draft, and publishes
	// it as version 1 when publish is set. A template already stored
	// under that id gives an error wrapping ErrExists, and nothing
	// changes. A source that is empty, not UTF-8 or holds a NUL gives an
	// error wrapping ErrInvalidSource.
	Add(ctx context.Context, accountID, id, source string, publish bool) (*Template, error)

	// Update replaces the draft of a stored template with source, and
	// publishes it when publish is set; without publish, calls go on
	// using the live version. Its errors are Add's, and the missing
	// template's.
	Update(ctx context.Context, accountID, id, source string, publish bool) (*Template, error)

	// Publish makes the draft live, as a new version numbered one above
	// the newest, and forgets the versions older than the store keeps.
	// When the draft is the live source already, it changes nothing.
	Publish(ctx context.Context, accountID, id string) (*Template, error)

	// PublishVersion publishes again the source of a kept version (a
	// rollback), as Publish publishes the draft: a new version, whose
	// From is version; the draft does not change. A version not kept
	// gives an error wrapping ErrVersionNotFound.
	PublishVersion(ctx context.Context, accountID, id string, version int) (*Template, error)

	// Remove deletes a template, its draft and every version, and returns
	// it as it was; a template not stored gives an error wrapping
	// postroom.ErrTemplateNotFound.
	Remove(ctx context.Context, accountID, id string) (*Template, error)

	// Info returns a template with its kept versions.
	Info(ctx context.Context, accountID, id string) (*Template, error)

	// List returns the account's templates sorted by id, each with its
	// draft and its live version but without Versions; an account without
	// templates has none.
	List(ctx context.Context, accountID string) ([]Template, error)
}

// Template is a stored template as a Manager reports it.
type Template struct {
	AccountID string `json:"account_id"`
	// ID is the template's id, what a call names in
	// message.html_template_id (Mandrill's template name and slug).
	ID string `json:"id"`
	// Draft is the source that Update writes and Publish makes live.
	Draft string `json:"draft"`
	// Created is when the template was added; Updated when its draft was
	// last written.
	Created time.Time `json:"created_at"`
	Updated time.Time `json:"updated_at"`
	// Published is the live version, which calls use; nil when the
	// template was never published, and calls find no template by its id.
	Published *Version `json:"published"`
	// Versions are the kept published versions, newest (the live one)
	// first; List leaves them out.
	Versions []Version `json:"versions,omitempty"`
}

// Version is one published version of a template.
type Version struct {
	// Version numbers a template's versions from 1, one above the newest
	// each time it publishes; numbers are never reused.
	Version int    `json:"version"`
	Source  string `json:"source"`
	// Published is when it was published.
	Published time.Time `json:"published_at"`
	// From is the version it published again (PublishVersion), or 0 when
	// it published the draft.
	From int `json:"from_version,omitempty"`
}

// ErrExists is wrapped by the error of Manager.Add for an id already
// stored in the account.
var ErrExists = errors.New("templatestore: template exists")

// ErrVersionNotFound is wrapped by the error of Manager.PublishVersion for
// a version the template does not keep (never published, or forgotten:
// see KeepVersions).
var ErrVersionNotFound = errors.New("templatestore: version not found")

// ErrInvalidSource is wrapped by the error for a source a store does not
// take: empty (a call would find nothing to render), not valid UTF-8, or
// holding a NUL byte, which PostgreSQL's text cannot store.
var ErrInvalidSource = errors.New("templatestore: source is empty, or not UTF-8 text without NUL")

// checkSource returns an error wrapping ErrInvalidSource unless source is
// non-empty UTF-8 without NUL.
func checkSource(accountID, id, source string) error {
	if source == "" || !utf8.ValidString(source) || strings.IndexByte(source, 0) >= 0 {
		return fmt.Errorf("%w: account %q, template %q", ErrInvalidSource, accountID, id)
	}
	return nil
}

// keepVersions is n, or DefaultKeepVersions when n is zero or negative.
func keepVersions(n int) int {
	if n <= 0 {
		return DefaultKeepVersions
	}
	return n
}

// versionNotFound returns the error for a version a template does not keep.
func versionNotFound(accountID, id string, version int) error {
	return fmt.Errorf("templatestore: account %q, template %q, version %d: %w", accountID, id, version, ErrVersionNotFound)
}

// exists returns the error of Add for an id already stored.
func exists(accountID, id string) error {
	return fmt.Errorf("templatestore: account %q, template %q: %w", accountID, id, ErrExists)
}

// checkLookup returns ctx.Err(), or an error wrapping ErrInvalidID unless
// both ids are valid.
func checkLookup(ctx context.Context, accountID, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return checkIDs(accountID, id)
}

// checkChange is checkLookup, then checkSource.
func checkChange(ctx context.Context, accountID, id, source string) error {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return err
	}
	return checkSource(accountID, id, source)
}

// checkList returns ctx.Err(), or an error wrapping ErrInvalidID unless
// accountID is valid.
func checkList(ctx context.Context, accountID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return checkAccountID(accountID)
}
