//go:build unix

package sqlitedb

import (
	"errors"
	"fmt"
	"syscall"
)

// lockFile takes an exclusive lock on the file at path (created if
// needed) for this process, or returns an *InUseError if another holds it.
// flock locks belong to the open file, so a second Open in this process
// is refused as well.
func lockFile(path string) (func() error, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitedb: Open: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &InUseError{Path: path[:len(path)-len("-lock")]}
		}
		return nil, fmt.Errorf("sqlitedb: Open: locking %s: %w", path, err)
	}
	return f.Close, nil // closing the file releases the lock
}
