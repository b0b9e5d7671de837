package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Errors a write is refused with, inside an *Error.
var (
	// ErrNotOwned: the file holds content that Options.Owned says pin did
	// not write.
	ErrNotOwned = errors.New("not written by pin")
	// ErrChanged: the file no longer holds what the caller read.
	ErrChanged = errors.New("changed since pin read it")
	// ErrDanglingLink: the path is a symbolic link to nothing.
	ErrDanglingLink = errors.New("a symbolic link to a file that does not exist")
	// ErrNotRegular: the path names a folder, a device, a pipe or a socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrBusy: another program holds the file open and the platform does
	// not replace an open file (Windows).
	ErrBusy = errors.New("another program has the file open, and Windows does not replace a file while it is open")
	// ErrTooManyLinks: the chain of symbolic links does not end.
	ErrTooManyLinks = errors.New("too many levels of symbolic links")
)

// Error is a write that did not happen. The file is as it was.
type Error struct {
	// Path is the path as the caller named it; Target the file a symbolic
	// link at Path names ("" when Path is not a link).
	Path, Target string
	Err          error
}

func (e *Error) Error() string {
	if e.Target != "" {
		return fmt.Sprintf("%s (a link to %s): %v", e.Path, e.Target, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Options say what a write may replace.
type Options struct {
	// Mode is the permission of a file created new, before the umask; 0
	// is 0o644. A file that exists keeps its own mode.
	Mode fs.FileMode
	// Owned tells whether the content of an existing, non-empty file is
	// pin's own (a header pin writes, a format only pin writes). A file it
	// says is not is left alone: ErrNotOwned, unless Force. Without Owned
	// (and without Since) no content is pin's: only an absent or empty
	// file is written, unless Force.
	Owned func(current []byte) bool
	// Force replaces a file Owned refuses.
	Force bool
	// Since, when set, points to the content the caller read from the path
	// and made the new bytes from; nil content when the file did not
	// exist. A file that holds anything else now is left alone:
	// ErrChanged, Force or not (read it again).
	Since *[]byte
}

// Write replaces the file at path, or the file a symbolic link (chain) at
// path names, with b, atomically, when its content differs; see the
// package documentation. It reports whether it wrote. A refusal or
// failure is an *Error, and leaves the file as it was.
func Write(path string, b []byte, o Options) (bool, error) {
	st, err := inspect(path, b, o)
	if err != nil || !st.changed {
		return false, err
	}
	if err := st.write(b, o.Mode); err != nil {
		return false, &Error{Path: path, Target: st.linkTarget(path), Err: err}
	}
	return true, nil
}

// Check is Write without the writing: it reports whether Write would
// change the file, and the *Error Write would refuse it with.
func Check(path string, b []byte, o Options) (changed bool, err error) {
	st, err := inspect(path, b, o)
	return st.changed, err
}

// owns tells whether cur, the non-empty content of the file, may be
// replaced without Force: Owned says so, or the caller read it (Since,
// checked before).
func (o Options) owns(cur []byte) bool {
	if o.Owned != nil {
		return o.Owned(cur)
	}
	return o.Since != nil
}

// state is what inspect found at a path.
type state struct {
	target  string      // the file to replace: path, or the end of its links
	info    fs.FileInfo // the target's, nil when it does not exist
	changed bool
	old     []byte // the target's content when changed
}

func (s state) linkTarget(path string) string {
	if s.target == path {
		return ""
	}
	return s.target
}

// inspect follows path's links, reads the target and judges it against o.
func inspect(path string, b []byte, o Options) (state, error) {
	target, info, err := follow(path)
	st := state{target: target, info: info}
	fail := func(err error) (state, error) {
		return st, &Error{Path: path, Target: st.linkTarget(path), Err: err}
	}
	if err != nil {
		return fail(err)
	}
	var cur []byte
	if info != nil {
		if !info.Mode().IsRegular() {
			return fail(ErrNotRegular)
		}
		if cur, err = os.ReadFile(target); err != nil {
			return fail(err)
		}
	}
	if info != nil && bytes.Equal(cur, b) {
		return st, nil
	}
	if was := o.Since; was != nil && ((info == nil) != (*was == nil) || !bytes.Equal(cur, *was)) {
		return fail(ErrChanged)
	}
	if info != nil && len(bytes.TrimSpace(cur)) > 0 && !o.Force && !o.owns(cur) {
		return fail(ErrNotOwned)
	}
	st.changed, st.old = true, cur
	return st, nil
}

// maxLinks is how many symbolic links a chain may have, as Linux allows.
const maxLinks = 40

// follow returns the file path names: path itself, or the end of the
// chain of symbolic links at path, with its FileInfo (nil when no file is
// there). A link is read relative to the real folder it is in, as the
// system reads it.
func follow(path string) (string, fs.FileInfo, error) {
	cur := path
	for range maxLinks {
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist) && cur != path:
			return cur, nil, ErrDanglingLink
		case errors.Is(err, fs.ErrNotExist):
			return cur, nil, nil
		case err != nil:
			return cur, nil, err
		case fi.Mode()&fs.ModeSymlink == 0:
			return cur, fi, nil
		}
		next, err := os.Readlink(cur)
		if err != nil {
			return cur, nil, err
		}
		if !filepath.IsAbs(next) {
			dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
			if err != nil {
				return cur, nil, err
			}
			next = filepath.Join(dir, next)
		}
		cur = next
	}
	return cur, nil, ErrTooManyLinks
}

// write puts b in a temporary file beside the target and renames it over
// the target.
func (s state) write(b []byte, mode fs.FileMode) error {
	dir, base := filepath.Split(s.target)
	if mode == 0 {
		mode = 0o644
	}
	if s.info != nil {
		mode = 0o600 // until chmod sets the target's own
	}
	f, tmp, err := createTemp(dir, base, mode)
	if err != nil {
		return fmt.Errorf("creating a temporary file in %s: %w", filepath.Clean(dir+"."), unwrapPath(err))
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if s.info != nil {
		// The owner first: chown may clear set-user-ID bits that chmod sets.
		keepOwner(f, s.info)
		if err := f.Chmod(s.info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return fmt.Errorf("setting the mode of the temporary file: %w", unwrapPath(err))
		}
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("writing the temporary file: %w", unwrapPath(err))
	}
	// Without the sync, a crash after the rename can leave an empty file.
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing the temporary file: %w", unwrapPath(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing the temporary file: %w", unwrapPath(err))
	}
	if err := replace(tmp, s.target, s.info); err != nil {
		return err
	}
	ok = true
	syncDir(dir)
	return nil
}

// createTemp creates "." + base + a random number in dir, exclusively.
func createTemp(dir, base string, mode fs.FileMode) (*os.File, string, error) {
	for range 100 {
		p := filepath.Join(dir, "."+base+strconv.FormatUint(rand.Uint64()>>1, 10))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, p, err
	}
	return nil, "", fs.ErrExist
}

// unwrapPath drops an *fs.PathError's operation and path (the temporary
// file's name says nothing to the user), keeping the system's error.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// RemoveStale removes the temporary files that writes of the file at path
// (or of the file a link at path names) left in its folder when they were
// killed before renaming them: "." + the file's name + decimal digits,
// regular files only. It returns the paths removed. Only call it while no
// write of that file can be under way.
func RemoveStale(path string) ([]string, error) {
	target, _, err := follow(path)
	if err != nil && !errors.Is(err, ErrDanglingLink) {
		return nil, err
	}
	dir, base := filepath.Dir(target), "."+filepath.Base(target)
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
