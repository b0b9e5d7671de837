//go:build unix

package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/pin-tool/pin/internal/atomicfile"
)

// envContainerImage is set by pin's container image (internal/release):
// a refused write then says how to run the image as the folder's owner.
const envContainerImage = "PIN_CONTAINER_IMAGE"

// permissionHint says, of a write refused for its permissions, which user
// pin runs as and which owns the folder, and how to run pin as the owner:
// in pin's container image, which runs as its own user (65532) whoever
// owns the mounted folder, docker run --user with the owner's ids. ""
// when err is not such a refusal, or pin runs as the owner.
func permissionHint(err error) string {
	if !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	// The file written, or (a temporary file beside it, never made) its
	// folder: the writer names the file (the link's target, for a link),
	// other writes the path they opened.
	var dir string
	var we *atomicfile.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &we):
		dir = filepath.Dir(cmp.Or(we.Target, we.Path))
	case errors.As(err, &pe):
		dir = pe.Path
	default:
		return ""
	}
	fi, statErr := os.Stat(dir)
	if statErr != nil || !fi.IsDir() {
		dir = filepath.Dir(pe.Path)
		fi, statErr = os.Stat(dir)
	}
	if statErr != nil {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	uid := os.Getuid()
	if !ok || int(st.Uid) == uid {
		return ""
	}
	if os.Getenv(envContainerImage) != "" {
		return fmt.Sprintf("pin runs as uid %d, the container image's user, and %s belongs to uid %d: run the image as the folder's owner, "+
			"docker run --user %d:%d … (or --user \"$(id -u):$(id -g)\" for a folder of yours)", uid, dir, st.Uid, st.Uid, st.Gid)
	}
	return fmt.Sprintf("pin runs as uid %d and %s belongs to uid %d: run pin as uid %d, or let uid %d write to %s", uid, dir, st.Uid, st.Uid, uid, dir)
}
