package lock

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	"github.com/hashicorp/hcl/v2"
)

// DefaultPath is the lockfile used when none is named.
const DefaultPath = "pin.lock.hcl"

// Load reads the lockfile at path. A missing file is an empty lock.
func Load(path string) (*Lock, []byte, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil, nil
	}
	if err != nil {
		return &Lock{}, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read lockfile", Detail: err.Error() + "."}}
	}
	l, diags := Parse(src, path)
	return l, src, diags
}

// Save writes the lock to path atomically, and only when its bytes differ
// from what the file holds. It reports whether it wrote.
func Save(path string, l *Lock) (bool, error) {
	return WriteFile(path, Format(l))
}

// RemoveStale removes the temporary files that writes of the lock at path
// left in its folder when they were killed before renaming them (renameio
// names them "." + the lock's name + a random number), and returns the
// paths removed. Only call it while no write of that lock can be under way:
// pin holds a lock on the folder.
func RemoveStale(path string) ([]string, error) {
	dir, base := filepath.Dir(path), "."+filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), base)
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// WriteFile is Save for a lock already formatted: b is Format's output,
// written atomically (a temporary file in the lock's own folder, renamed
// over it) and only when it differs from what the file holds.
func WriteFile(path string, b []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return false, nil
	}
	if err := renameio.WriteFile(path, b, 0o644, renameio.WithExistingPermissions(), renameio.WithTempDir(filepath.Dir(path))); err != nil {
		return false, fmt.Errorf("writing lockfile %s: %w", path, err)
	}
	return true, nil
}
