package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// WriteFileAtomic replaces path with data so that after a crash the file
// holds either the old or the new content in full, never a mix or a
// truncated file. The temp file lives in the same directory because rename
// is only atomic within one filesystem. The data is fsynced before the
// rename (otherwise the rename can reach disk before the data and leave an
// empty file) and the directory after it (otherwise the rename itself can
// be lost). When an error is returned the temp file has been removed; path
// may still hold the new content if only the final directory sync failed.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close() // harmless if already closed
			os.Remove(tmp)
		}
	}()
	// CreateTemp always uses 0600; set the requested mode explicitly (Chmod
	// is not subject to the umask, which keeps the result predictable).
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		// The temp file is gone (renamed), so nothing to clean up, but the
		// caller must not assume the new content is durable.
		return fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		// Directories cannot be opened for syncing there; NTFS journals
		// the rename itself.
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		// EINVAL: some filesystems (certain FUSE and network mounts)
		// cannot sync a directory at all; there is nothing better to do.
		return err
	}
	return nil
}
