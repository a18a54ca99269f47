package transport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/postroom/postroom/delivery"
)

// Dir is a delivery.Transport that writes each message into a folder as
// <send_id>.eml, holding exactly the bytes of Envelope.Data (CRLF line
// endings kept). The envelope's From and To are not written: Bcc
// recipients, which appear only in To, leave no trace in the file.
//
// Each file appears atomically: Send writes a temporary file whose name
// starts with "." in the same folder, syncs and closes it, then renames it
// to <send_id>.eml, so a reader watching for *.eml never sees a partial
// message. A file already there under the same name is replaced. Files
// are created with mode 0600, since messages hold personal data.
//
// Dir is a final destination, not a spool: it does not implement
// delivery.Queuer, and the Mailer reports messages it accepts as sent.
//
// A Dir is safe for concurrent use; each Send writes its own files. The
// zero value has no folder and must not be used; use NewDir.
type Dir struct {
	path string
}

// NewDir returns a Dir writing into the folder path, creating it (and its
// parents, with mode 0700) if it does not exist. A relative path is made
// absolute now, so a later change of working directory does not move the
// output. It returns an error if path is empty or names something other
// than a folder.
func NewDir(path string) (*Dir, error) {
	if path == "" {
		return nil, errors.New("transport: Dir: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("transport: Dir: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("transport: Dir: %w", err)
	}
	return &Dir{path: abs}, nil
}

// Path returns the absolute path of d's folder.
func (d *Dir) Path() string { return d.path }

// File returns the path of the file d writes for sendID, whether it exists
// or not.
func (d *Dir) File(sendID string) string {
	return filepath.Join(d.path, sendID+".eml")
}

// Send writes env.Data to <env.SendID>.eml in d's folder.
//
// An env.SendID that is not 32 lowercase hexadecimal characters, which
// could name a path outside the folder, is refused with a
// *delivery.DeliveryError of kind DeliveryPermanent: retrying cannot help. A ctx
// that is done before the file is in place gives ctx.Err() and leaves no
// file. Any other failure (a full disk, a permission) is returned as a
// plain error, a temporary failure, and leaves no file behind.
func (d *Dir) Send(ctx context.Context, env *delivery.Envelope) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !wellFormedSendID(env.SendID) {
		return &delivery.DeliveryError{
			Kind: delivery.DeliveryPermanent,
			Text: "invalid send id",
			Err:  errDirSendID,
		}
	}
	return d.write(ctx, env)
}

// write puts env.Data in place as <env.SendID>.eml, through a temporary
// file that it removes on failure.
func (d *Dir) write(ctx context.Context, env *delivery.Envelope) (err error) {
	f, err := os.CreateTemp(d.path, ".postroom-*.tmp")
	if err != nil {
		return fmt.Errorf("transport: Dir: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close() // a second Close only reports os.ErrClosed
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(env.Data); err != nil {
		return fmt.Errorf("transport: Dir: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("transport: Dir: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("transport: Dir: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Rename(tmp, d.File(env.SendID)); err != nil {
		return fmt.Errorf("transport: Dir: %w", err)
	}
	return nil
}

// errDirSendID is the Err of the DeliveryError for a refused send id.
var errDirSendID = errors.New("transport: send id is not 32 lowercase hex characters")

// wellFormedSendID reports whether s is 32 lowercase hexadecimal
// characters, the form of a postroom send id.
//
// It is not internal/sendid's Normalize, which reads an id back in any
// letter case and lower-cases it: Dir takes the id as the Mailer wrote it
// and names a file with it as given, so an id in upper case is refused,
// not lower-cased (it would be a second name for the same send, and the
// same file on a case-insensitive file system; File gives the lower-case
// name).
func wellFormedSendID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
