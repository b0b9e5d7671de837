package source

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
)

func TestLockPath(t *testing.T) {
	for _, tt := range []struct{ path, env, want string }{
		{"pin.lock.hcl", "", "pin.lock.hcl"},
		{"pin.lock.hcl", "staging", "pin.lock.staging.hcl"},
		{"deploy/pin.lock.hcl", "production", "deploy/pin.lock.production.hcl"},
		{"locks/app.hcl", "dev", "locks/app.dev.hcl"},
		{"lockfile", "dev", "lockfile.dev"},
	} {
		if got := LockPath(tt.path, tt.env); got != tt.want {
			t.Errorf("LockPath(%q, %q) = %q, want %q", tt.path, tt.env, got, tt.want)
		}
	}
}

// TestOrphanLocks: the lock files of environments the catalogue does not
// declare (any more) are found beside the lock; the declared ones, the
// lock itself and other files are not.
func TestOrphanLocks(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"pin.lock.hcl", "pin.lock.staging.hcl", "pin.lock.qa.hcl", "pin.lock.Old.hcl", "other.lock.dev.hcl", "catalogue.hcl"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := &catalogue.Catalogue{Environments: []*catalogue.Environment{{Name: "staging"}}}
	got := OrphanLocks(filepath.Join(dir, "pin.lock.hcl"), cat)
	if want := []string{filepath.Join(dir, "pin.lock.qa.hcl")}; !slices.Equal(got, want) {
		t.Errorf("OrphanLocks = %v, want %v", got, want)
	}
	if got := OrphanLocks(filepath.Join(dir, "pin.lock.hcl"), &catalogue.Catalogue{}); len(got) != 2 {
		t.Errorf("without environments: %v, want staging's and qa's", got)
	}
}
