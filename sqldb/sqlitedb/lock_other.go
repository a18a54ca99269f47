//go:build !unix

package sqlitedb

// lockFile holds the lock file open; on systems without flock it does not
// refuse a second process: keep to one process there by yourself.
func lockFile(path string) (func() error, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}
