package templatestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// DefaultMaxBytes is the largest template a Dir reads when its MaxBytes is
// zero: 1 MiB.
const DefaultMaxBytes = 1 << 20

// Dir is a TemplateStore that reads each template from a file named
// <account_id>/<template_id> in FS. Files are read on every lookup, so a
// changed file is seen by the next call; nothing is cached.
//
// Template refuses ids that break the rules in the package documentation
// before touching FS, so a lookup never leaves the account's folder by
// name. With os.DirFS, a symbolic link inside the folder is still followed
// wherever it points; use the FS of an os.Root to refuse links that lead
// out of the folder. Only regular files are templates: a folder, device or
// pipe by that name counts as missing.
//
// The zero value has no FS and must not be used; NewDir returns a Dir ready
// to use. A Dir is safe for concurrent use if its FS is (os.DirFS and
// fstest.MapFS are, while nobody modifies the MapFS). Its fields must not
// be changed once it is in use.
type Dir struct {
	// FS holds the templates, laid out as <account_id>/<template_id>.
	FS fs.FS
	// MaxBytes is the size of the largest template read; a larger file is
	// refused with an error wrapping ErrTooLarge. Zero means
	// DefaultMaxBytes; a negative value means no limit.
	MaxBytes int64
}

// NewDir returns a Dir reading templates from fsys, with the default size
// limit.
func NewDir(fsys fs.FS) *Dir {
	return &Dir{FS: fsys}
}

// Template returns the source of the file <accountID>/<id> in d.FS.
//
// An invalid id, a file that does not exist, or a name that is not a
// regular file gives an error wrapping postroom.ErrTemplateNotFound; a file
// over the size limit an error wrapping ErrTooLarge; a done ctx ctx.Err().
// Other errors from FS are returned wrapped.
func (d *Dir) Template(ctx context.Context, accountID, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := checkIDs(accountID, id); err != nil {
		return "", err
	}
	limit := d.MaxBytes
	if limit == 0 {
		limit = DefaultMaxBytes
	}

	name := accountID + "/" + id
	f, err := d.FS.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", notFound(accountID, id)
	}
	if err != nil {
		return "", fmt.Errorf("templatestore: %w", err)
	}
	defer f.Close()

	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("templatestore: %w", err)
	}
	if !info.Mode().IsRegular() {
		return "", notFound(accountID, id)
	}
	if limit > 0 && info.Size() > limit {
		return "", tooLarge(accountID, id, limit)
	}

	// The size from Stat may be stale, so the read is bounded as well.
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + bytes.MinRead) // room to see EOF without growing
	if _, err := buf.ReadFrom(r); err != nil {
		return "", fmt.Errorf("templatestore: read %s: %w", name, err)
	}
	b := buf.Bytes()
	if limit > 0 && int64(len(b)) > limit {
		return "", tooLarge(accountID, id, limit)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return string(b), nil
}

// tooLarge returns the error for a template over limit bytes.
func tooLarge(accountID, id string, limit int64) error {
	return fmt.Errorf("%w: account %q, template %q: over %d bytes", ErrTooLarge, accountID, id, limit)
}
