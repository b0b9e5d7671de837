//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrPermission) || !errors.As(err, &pe) {
		return ""
	}
	// The file written, or (a temporary file beside it, never made) its
	// folder.
	dir := pe.Path
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
